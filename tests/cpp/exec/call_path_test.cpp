// The per-call path after its allocation work was cut (ExecState keeps slots and argument
// vectors between calls; inputs are bound without copies when no cast is needed; large
// host blocks are recycled): results stay right across shapes, casts, failed calls and
// threads, and recycled output memory never aliases a live array.
#include <theon/theon.hpp>

#include "exec/function_impl.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace theon {
namespace {

// (x + y) * x - y, elementwise, computed here.
std::vector<float> expected(const Array& x, const Array& y, const Shape& out) {
  Array xb = x.broadcast_to(out), yb = y.broadcast_to(out);
  auto xv = xb.to_vector<float>(), yv = yb.to_vector<float>();
  std::vector<float> r(xv.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = (xv[i] + yv[i]) * xv[i] - yv[i];
  return r;
}

TEST(CallPath, StateIsReusedAcrossShapesAndBroadcastPatterns) {
  for (const char* mode : {"fast_run", "none"}) {
    Var x = tensor::matrix("x"), y = tensor::matrix("y");
    Function f = function({x, y}, {(x + y) * x - y}, {.mode = mode});
    const std::vector<std::pair<Shape, Shape>> calls = {
        {{3, 4}, {3, 4}}, {{1, 4}, {3, 4}}, {{5, 2}, {5, 2}}, {{3, 4}, {3, 1}},
        {{3, 4}, {3, 4}}, {{0, 4}, {0, 4}}, {{7, 9}, {7, 9}}, {{1, 4}, {3, 4}}};
    uint64_t seed = 1;
    for (auto& [xs, ys] : calls) {
      Array xv = Array::randn(xs, seed++), yv = Array::randn(ys, seed++);
      Shape out = {std::max(xs[0], ys[0]), std::max(xs[1], ys[1])};
      if (xs[0] == 0) out[0] = 0;
      Array r = f({xv, yv})[0];
      ASSERT_EQ(r.shape(), out) << mode;
      auto got = r.to_vector<float>(), want = expected(xv, yv, out);
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << mode << " element " << i;
    }
  }
}

TEST(CallPath, CastInputsBesideExactOnes) {
  Var x = tensor::vector("x", DType::Float64), y = tensor::vector("y", DType::Float32);
  Function f = function({x, y}, {x * 2.0 + y});
  Array xv = Array::from_vector<float>({1, 2, 3});  // float32 -> float64 (lossless cast)
  Array yv = Array::from_vector<float>({10, 20, 30});
  for (int i = 0; i < 3; ++i) {
    Array r = f({xv, yv})[0];
    EXPECT_EQ(r.dtype(), DType::Float64);
    EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{12, 24, 36}));
  }
  // The cast comes second here: the exact first input is bound beside it.
  Var a = tensor::vector("a", DType::Float32), b = tensor::vector("b", DType::Float64);
  Function g = function({a, b}, {a + b});
  EXPECT_EQ(g({yv, xv})[0].to_vector<double>(), (std::vector<double>{11, 22, 33}));
  EXPECT_THROW(g({Array::from_vector<double>({1.0}), xv}), TypeError);  // float64 -> float32 loses
}

TEST(CallPath, ACallAfterAFailedCallIsRight) {
  Var x = tensor::vector("x"), y = tensor::vector("y");
  Function f = function({x, y}, {(x + y) * x - y});
  Array a = Array::from_vector<float>({1, 2, 3}), b = Array::from_vector<float>({4, 5, 6});
  Array bad = Array::from_vector<float>({1, 2});
  for (int i = 0; i < 3; ++i) {
    EXPECT_THROW(f({a, bad}), ShapeError);
    EXPECT_EQ(f({a, b})[0].to_vector<float>(), expected(a, b, {3}));
  }
  auto m = f.impl()->memory_report();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->allocated + m->reused + m->inplace, 1);  // one fused node, one output
}

TEST(CallPath, OutputsAreFreshEachCallAndRightAfterReuse) {
  // Large outputs (recycled host blocks); in mode none also large dead intermediates.
  const int64_t n = int64_t{1} << 20;  // 4 MiB of float32: a "large" host block
  for (const char* mode : {"fast_run", "none"}) {
    Var x = tensor::vector("x");
    Function f = function({x}, {(x + 1.0) * x - 2.0}, {.mode = mode});
    Array xv = Array::rand({n}, 7, DType::Float32);
    auto xs = xv.to_vector<float>();
    auto check = [&](const Array& r) {
      auto v = r.to_vector<float>();
      for (int64_t i = 0; i < n; i += 4099) ASSERT_EQ(v[i], (xs[i] + 1.0f) * xs[i] - 2.0f) << mode << " " << i;
    };
    Array r1 = f({xv})[0], r2 = f({xv})[0];
    EXPECT_NE(r1.data(), r2.data());  // both alive: never the same memory
    EXPECT_NE(r1.data(), xv.data());
    check(r1);
    check(r2);
    r1.data<float>()[0] = -1;  // the user owns an output: writing it changes nothing else
    const void* freed = r2.data();
    r2 = Array();
    Array r3 = f({xv})[0];
    check(r3);
    EXPECT_NE(r3.data(), r1.data());
    // One node, no intermediates: r2's block went back to the host block cache and this
    // call's output took it, already paged in.
    if (std::string(mode) == "fast_run") {
      EXPECT_EQ(r3.data(), freed);
    }
    EXPECT_EQ(r1.to_vector<float>()[0], -1.0f);
    EXPECT_EQ(xv.to_vector<float>(), xs);
  }
}

TEST(CallPath, ConcurrentCallsWithLargeOutputs) {
  const int64_t n = int64_t{1} << 18;  // 1 MiB of float32: at the large-block threshold
  Var x = tensor::vector("x");
  Function f = function({x}, {x * 3.0 - 1.0});
  std::vector<Array> in;
  for (int t = 0; t < 4; ++t) in.push_back(Array::full({n + t * 1000}, t, DType::Float32));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Array keep;
      for (int i = 0; i < 20; ++i) {
        Array r = f({in[t]})[0];
        if (r.size() != n + t * 1000 || r.item(0) != 3.0 * t - 1 || r.item(r.size() - 1) != 3.0 * t - 1) ++wrong;
        if (i % 2) keep = r;  // some outputs outlive the next call, some die at once
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

// The lock-free warm path (the entry of the last signature through one atomic pointer, one
// spare state per entry exchanged atomically, the memory report a seqlock): threads calling
// with two broadcast patterns at once keep swapping the hot entry and overflow the spare
// into the idle list; every result must be right, and the memory reports readable meanwhile.
TEST(CallPath, ConcurrentCallsAcrossSignaturesAndReports) {
  Var x = tensor::matrix("x"), y = tensor::matrix("y");
  Function f = function({x, y}, {(x + y) * x - y});
  const Array xa = Array::randn({3, 4}, 1), ya = Array::randn({3, 4}, 2), yb = Array::randn({3, 1}, 3);
  const std::vector<float> want_a = expected(xa, ya, {3, 4}), want_b = expected(xa, yb, {3, 4});
  std::atomic<int> wrong{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const bool b = (i + t) % 3 == 0;
        if (f({xa, b ? yb : ya})[0].to_vector<float>() != (b ? want_b : want_a)) ++wrong;
      }
    });
  std::thread reader([&] {
    while (!done.load()) {
      if (auto m = f.impl()->memory_report())
        if (m->allocated + m->reused != 1) ++wrong;  // one output buffer a call, read whole
    }
  });
  for (auto& th : threads) th.join();
  done = true;
  reader.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(f.impl()->num_programs(), 2u);
  ASSERT_TRUE(f.impl()->memory_report({xa, yb}).has_value());
  ASSERT_TRUE(f.impl()->memory_report({xa, ya}).has_value());
}

}  // namespace
}  // namespace theon
