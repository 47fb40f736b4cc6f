// Calls that update the same shared variable serialise (issue 11): each call's read of the
// variable, its computation and its commit happen under the variable's update lock, so
// concurrent increments are never lost (before: 55-86% of them were, from 8 threads: every
// commit was whole, but two calls could read the same value). Two functions updating one
// variable serialise with each other too; locks are taken in one global order, so functions
// updating overlapping sets of variables cannot deadlock. docs/guide/functions.md states it.
// Reads of shared values take no lock while the values are unchanged (SharedReads).
#include <theon/theon.hpp>

#include "graph/node.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace theon {
namespace {

void run_threads(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back(body, t);
  for (auto& th : threads) th.join();
}

TEST(UpdateSerialization, EightThreadsCountEveryIncrement) {
  SharedVar count = shared(Array::scalar(0, DType::Int64), "count");
  Function inc = function({}, {}, {.updates = {{count, count + 1}}, .name = "inc"});
  run_threads(8, [&](int) {
    for (int i = 0; i < 10000; ++i) inc();
  });
  EXPECT_EQ(count.get_value().item(), 80000);
}

TEST(UpdateSerialization, TwoFunctionsUpdatingOneVariableSerialise) {
  SharedVar total = shared(Array::scalar(0, DType::Int64), "total");
  Var k = tensor::lscalar("k");
  Function add_one = function({}, {}, {.updates = {{total, total + 1}}});
  Function add_k = function({k}, {total}, {.updates = {{total, total + k}}});  // also returns the old value
  const Array three = Array::scalar(3, DType::Int64);
  run_threads(8, [&](int t) {
    for (int i = 0; i < 5000; ++i) {
      if (t % 2) add_one();
      else add_k({three});
    }
  });
  // 4 threads x 5000 x 1 + 4 threads x 5000 x 3.
  EXPECT_EQ(total.get_value().item(), 4 * 5000 + 4 * 5000 * 3);
}

TEST(UpdateSerialization, OverlappingUpdateSetsDoNotDeadlock) {
  // f updates (a, b), g updates (b, a) written the other way round, h only b: locks are taken
  // in one order whatever the order of the updates list.
  SharedVar a = shared(Array::scalar(0, DType::Int64), "a"), b = shared(Array::scalar(0, DType::Int64), "b");
  Function f = function({}, {}, {.updates = {{a, a + 1}, {b, b + 1}}});
  Function g = function({}, {}, {.updates = {{b, b + 2}, {a, a + 2}}});
  Function h = function({}, {}, {.updates = {{b, b + 10}}});
  run_threads(6, [&](int t) {
    for (int i = 0; i < 3000; ++i) (t % 3 == 0 ? f : t % 3 == 1 ? g : h)();
  });
  EXPECT_EQ(a.get_value().item(), 2 * 3000 * (1 + 2));
  EXPECT_EQ(b.get_value().item(), 2 * 3000 * (1 + 2 + 10));
}

TEST(UpdateSerialization, AFailedCallReleasesTheLocks) {
  SharedVar v = shared(Array::from_vector<float>({0, 0}), "v");
  Var i = tensor::lvector("i");
  Function f = function({i}, {}, {.updates = {{v, tensor::inc_subtensor(v[{i}], literal(1.0, false))}}});
  EXPECT_THROW(f({Array::from_vector<int64_t>({5})}), IndexError);
  std::atomic<int> done{0};
  run_threads(4, [&](int) {
    for (int k = 0; k < 500; ++k) f({Array::from_vector<int64_t>({0})});
    ++done;
  });
  EXPECT_EQ(done.load(), 4);
  EXPECT_EQ(v.get_value().to_vector<float>(), (std::vector<float>{2000, 0}));
}

TEST(UpdateSerialization, ReadersSeeWholeCommits) {
  // A function without updates reading two variables that another function updates together
  // sees both or neither of each call's updates (the commit lock; no update lock needed).
  SharedVar a = shared(Array::scalar(0, DType::Int64), "a"), b = shared(Array::scalar(0, DType::Int64), "b");
  Function step = function({}, {}, {.updates = {{a, a + 1}, {b, b - 1}}});
  Function sum = function({}, {a + b});
  std::atomic<int> torn{0};
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop) torn += sum()[0].item() != 0;
  });
  run_threads(4, [&](int) {
    for (int i = 0; i < 2000; ++i) step();
  });
  stop = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(a.get_value().item(), 8000);
}

// A warm call reads shared values without a lock while they are unchanged (issue 18): the
// variable's own mutex is held here while another thread calls, which used to block it.
TEST(SharedReads, AWarmCallOfUnchangedValuesTakesNoLock) {
  SharedVar w = shared(Array::from_vector<float>({1, 2, 3}), "w");
  Var x = tensor::vector("x", DType::Float32);
  Function f = function({x}, {x * w});
  const Array ones = Array::from_vector<float>({1, 1, 1});
  ASSERT_EQ(f({ones})[0].to_vector<float>(), (std::vector<float>{1, 2, 3}));  // the first load caches it
  graph::SharedStorage& storage = *w.node()->storage;
  std::unique_lock<std::mutex> held(storage.mutex);
  auto call = std::async(std::launch::async, [&] { return f({ones})[0].to_vector<float>(); });
  const bool finished = call.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  held.unlock();
  EXPECT_TRUE(finished) << "the warm call waited for the variable's mutex";
  EXPECT_EQ(call.get(), (std::vector<float>{1, 2, 3}));
}

TEST(SharedReads, AWarmCallSeesEveryNewValue) {
  SharedVar w = shared(Array::from_vector<float>({1, 2}), "w");
  Function f = function({}, {w * 2.0});
  Function bump = function({}, {}, {.updates = {{w, w + 1.0}}});
  for (int i = 0; i < 5; ++i) {
    const float base = 1 + 2 * i;
    EXPECT_EQ(f()[0].to_vector<float>(), (std::vector<float>{2 * base, 2 * (base + 1)}));
    bump();  // a commit
    w.set_value(Array::from_vector<float>({base + 2, base + 3}));  // and a set from outside
  }
  // Two shapes (the same variable, another rank of value is refused; another length is not).
  w.set_value(Array::from_vector<float>({7, 8, 9}));
  EXPECT_EQ(f()[0].to_vector<float>(), (std::vector<float>{14, 16, 18}));
}

TEST(SharedReads, AnIdleFunctionKeepsNoReplacedValueAlive) {
  // The state remembers what it loaded only weakly: once the variable holds another value,
  // the old buffer is freed even though the function is not called again.
  Array first = Array::from_vector<float>({1, 2, 3});
  SharedOptions borrow;
  borrow.borrow = true;
  SharedVar w = shared(first, "w", borrow);
  Function f = function({}, {w + 1.0});
  f();
  const std::weak_ptr<Buffer> old = first.buffer();
  first = Array();
  w.set_value(Array::from_vector<float>({4, 5, 6}));
  EXPECT_TRUE(old.expired()) << "a replaced value stayed alive";
  EXPECT_EQ(f()[0].to_vector<float>(), (std::vector<float>{5, 6, 7}));
}

}  // namespace
}  // namespace theon
