// What the executor and function() report to a registered observer (runtime/observer.hpp):
// one call_begin/call_end per call (failed calls say so), a thunk_begin/thunk_end pair per
// thunk with the op, kernel, device, bytes and provenance, allocations from the buffer pool,
// and the compile phases of a new program.
#include "runtime/observer.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <mutex>

namespace theon {
namespace {

struct Recorder : runtime::Observer {
  std::mutex mu;
  std::vector<std::string> calls, thunks, phases;
  std::vector<std::vector<std::string>> names, members;
  size_t thunk_ends = 0, allocations = 0, reused = 0, bytes_out = 0;
  void call_begin(const runtime::CallEvent& e) override {
    std::lock_guard<std::mutex> l(mu);
    calls.push_back("begin " + std::string(e.function) + " #" + std::to_string(e.call_index));
  }
  void call_end(const runtime::CallEvent& e) override {
    std::lock_guard<std::mutex> l(mu);
    calls.push_back(std::string(e.succeeded ? "end ok #" : "end failed #") + std::to_string(e.call_index));
  }
  void thunk_begin(const runtime::ThunkEvent& e) override {
    std::lock_guard<std::mutex> l(mu);
    thunks.push_back(std::string(e.op) + " [" + std::string(e.kind) + "] on " + std::string(e.context));
    names.push_back(e.provenance ? e.provenance->user_names : std::vector<std::string>{});
    members.push_back(e.provenance ? e.provenance->fused_members : std::vector<std::string>{});
  }
  void thunk_end(const runtime::ThunkEvent& e) override {
    std::lock_guard<std::mutex> l(mu);
    ++thunk_ends;
    bytes_out += e.bytes_out;
  }
  void allocation(const runtime::AllocationEvent& e) override {
    std::lock_guard<std::mutex> l(mu);
    ++allocations;
    reused += e.reused;
  }
  void compile(const runtime::CompileEvent& e) override {
    std::lock_guard<std::mutex> l(mu);
    phases.push_back(std::string(e.phase));
  }
};

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST(ObserverEvents, CallsThunksAllocationsAndCompilePhases) {
  Recorder rec;
  runtime::ScopedObserver watching(&rec);
  Var x = tensor::vector("x");
  Var total = tensor::sum(tensor::exp(x) * 2.0 + 1.0);
  total.set_name("total");
  Function f = function({x}, {total}, {.name = "f"});
  Array xv = Array::from_vector<float>({1, 2, 3});
  f({xv});
  f({xv});
  EXPECT_EQ(rec.calls, (std::vector<std::string>{"begin f #0", "end ok #0", "begin f #1", "end ok #1"}));
  EXPECT_TRUE(has(rec.phases, "lower")) << "compiled at the first call";
  EXPECT_TRUE(has(rec.phases, "prepare kernels"));
  EXPECT_TRUE(has(rec.phases, "pass merge"));
  ASSERT_FALSE(rec.thunks.empty());
  EXPECT_EQ(rec.thunk_ends, rec.thunks.size()) << "every thunk_begin has its end";
  EXPECT_EQ(rec.thunks.size() % 2, 0u) << "two calls of one program";
  // The fused node stands for exp, mul and add (and the sum), and carries the name the user gave its result.
  bool saw_fused = false;
  for (size_t i = 0; i < rec.thunks.size(); ++i) {
    if (rec.thunks[i].rfind("Composite", 0) != 0 && rec.thunks[i].rfind("FusedReduce", 0) != 0) continue;
    saw_fused = true;
    EXPECT_TRUE(has(rec.members[i], "exp")) << rec.thunks[i];
    EXPECT_TRUE(has(rec.members[i], "mul")) << rec.thunks[i];
    EXPECT_EQ(rec.names[i], std::vector<std::string>{"total"}) << rec.thunks[i];
    EXPECT_NE(rec.thunks[i].find("on cpu"), std::string::npos) << rec.thunks[i];
  }
  EXPECT_TRUE(saw_fused) << "fast_run fuses exp(x) * 2 + 1";
  EXPECT_GT(rec.allocations, 0u);
  EXPECT_GT(rec.bytes_out, 0u);
}

TEST(ObserverEvents, PooledBuffersAreReportedReused) {
  Recorder rec;
  runtime::ScopedObserver watching(&rec);
  Var m = tensor::matrix("m");
  Function f = function({m}, {tensor::sum(tensor::dot(m, m))});
  Array mv = Array::randn({4, 4}, 1);
  f({mv});
  EXPECT_EQ(rec.reused, 0u) << "a first call allocates";
  f({mv});
  EXPECT_GT(rec.reused, 0u) << "the second call reuses the dot's intermediate buffer";
}

TEST(ObserverEvents, AFailedCallEndsFailed) {
  Recorder rec;
  runtime::ScopedObserver watching(&rec);
  Var a = tensor::vector("a"), b = tensor::vector("b");
  Function f = function({a, b}, {a + b}, {.name = "add"});
  EXPECT_THROW(f({Array::from_vector<float>({1, 2}), Array::from_vector<float>({1, 2, 3})}), ShapeError);
  EXPECT_EQ(rec.calls, (std::vector<std::string>{"begin add #0", "end failed #0"}));
}

TEST(ObserverEvents, NothingIsReportedWithoutAnObserver) {
  Recorder rec;
  {
    runtime::ScopedObserver watching(&rec);
  }
  Var x = tensor::vector("x");
  function({x}, {x * 3.0})({Array::from_vector<float>({1})});
  EXPECT_TRUE(rec.calls.empty());
  EXPECT_TRUE(rec.thunks.empty());
}

}  // namespace
}  // namespace theon
