// The observer: registration for the process or a scope, every callback reaching a
// recording observer, and reports from several threads at once.
#include "runtime/observer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <thread>

namespace theon::runtime {
namespace {

// Keeps every event as a line of text (events' views are valid only during the callback).
class RecordingObserver : public Observer {
 public:
  void call_begin(const CallEvent& e) override {
    add("call_begin " + std::string(e.function) + " #" + std::to_string(e.call_index));
  }
  void call_end(const CallEvent& e) override {
    add("call_end " + std::string(e.function) + " #" + std::to_string(e.call_index) + (e.succeeded ? " ok" : " failed"));
  }
  void thunk_begin(const ThunkEvent& e) override {
    std::string line = "thunk_begin " + std::to_string(e.thunk_index) + " " + std::string(e.op) + " " +
                       std::string(e.kind) + " on " + std::string(e.context) + "/" + e.device.str() + " " +
                       stream_kind_name(e.stream) + " " + std::to_string(e.bytes_in) + "->" + std::to_string(e.bytes_out);
    if (e.provenance) {
      for (const std::string& n : e.provenance->user_names) line += " name=" + n;
      for (const std::string& m : e.provenance->fused_members) line += " member=" + m;
      line += " at=" + e.provenance->created_at;
    }
    add(line);
  }
  void thunk_end(const ThunkEvent& e) override { add("thunk_end " + std::to_string(e.thunk_index)); }
  void transfer(const TransferEvent& e) override {
    add("transfer " + e.from.str() + "->" + e.to.str() + " " + std::to_string(e.bytes) + " " +
        transfer_direction_name(e.direction) + " " + std::string(e.what));
  }
  void allocation(const AllocationEvent& e) override {
    add("allocation " + e.device.str() + " " + std::to_string(e.bytes) + (e.reused ? " reused" : " new"));
  }
  void compile(const CompileEvent& e) override {
    add("compile " + std::string(e.phase) + " " + std::string(e.what) + (e.cache_hit ? " hit" : " compiled") +
        (e.seconds > 0 ? " timed" : ""));
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  void add(std::string line) {
    std::lock_guard<std::mutex> lock(mu_);  // callbacks may come from several threads
    lines_.push_back(std::move(line));
  }
  std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST(RuntimeObserver, NobodyObservesByDefault) { EXPECT_EQ(observer(), nullptr); }

TEST(RuntimeObserver, SetObserverReturnsTheOneItReplaces) {
  RecordingObserver a, b;
  EXPECT_EQ(set_observer(&a), nullptr);
  EXPECT_EQ(observer(), &a);
  EXPECT_EQ(set_observer(&b), &a);
  EXPECT_EQ(set_observer(nullptr), &b);
  EXPECT_EQ(observer(), nullptr);
}

TEST(RuntimeObserver, AScopedObserverPutsThePreviousOneBack) {
  RecordingObserver outer, inner;
  {
    ScopedObserver watching(&outer);
    {
      ScopedObserver nested(&inner);
      EXPECT_EQ(observer(), &inner);
    }
    EXPECT_EQ(observer(), &outer);
  }
  EXPECT_EQ(observer(), nullptr);
}

TEST(RuntimeObserver, EveryKindOfEventReachesTheObserver) {
  RecordingObserver rec;
  ScopedObserver watching(&rec);
  const Provenance provenance{{"h"}, {"mul", "add", "tanh"}, "model.cpp:12"};
  Observer* o = observer();
  ASSERT_EQ(o, &rec);
  o->compile({"optimize", 0.25, false, "step"});
  o->compile({"nvrtc", 0, true, "elemwise_f32"});
  o->call_begin({"step", 3});
  o->allocation({Device::cuda(1), 4096, true});
  o->transfer({Device::cpu(), Device::cuda(1), 64, transfer_direction(Device::cpu(), Device::cuda(1)), "input x"});
  o->thunk_begin({7, "Composite{mul,add,tanh}", "cuda.elemwise", "dev1", Device::cuda(1), StreamKind::Compute, 128, 64,
                  &provenance});
  o->thunk_end({7, "Composite{mul,add,tanh}", "cuda.elemwise", "dev1", Device::cuda(1), StreamKind::Compute, 128, 64,
                &provenance});
  o->transfer({Device::cuda(1), Device::cpu(), 64, transfer_direction(Device::cuda(1), Device::cpu()), "output 0"});
  o->call_end({"step", 3, false});
  const std::vector<std::string> expected = {
      "compile optimize step compiled timed",
      "compile nvrtc elemwise_f32 hit",
      "call_begin step #3",
      "allocation cuda1 4096 reused",
      "transfer cpu->cuda1 64 host to device input x",
      "thunk_begin 7 Composite{mul,add,tanh} cuda.elemwise on dev1/cuda1 compute 128->64 name=h member=mul "
      "member=add member=tanh at=model.cpp:12",
      "thunk_end 7",
      "transfer cuda1->cpu 64 device to host output 0",
      "call_end step #3 failed",
  };
  EXPECT_EQ(rec.lines(), expected);
  EXPECT_EQ(transfer_direction(Device::cuda(0), Device::cuda(1)), TransferDirection::DeviceToDevice);
}

TEST(RuntimeObserver, TheDefaultCallbacksDoNothing) {
  Observer quiet;  // a profiler overrides only what it needs
  ScopedObserver watching(&quiet);
  observer()->call_begin({"f", 0});
  observer()->thunk_end({});
  observer()->compile({});
}

TEST(RuntimeObserver, ReportsMayComeFromSeveralThreads) {
  RecordingObserver rec;
  ScopedObserver watching(&rec);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      const std::string function = "f" + std::to_string(t);
      for (uint64_t i = 0; i < 100; ++i)
        if (Observer* o = observer()) o->call_begin({function, i});
    });
  for (std::thread& t : threads) t.join();
  const std::vector<std::string> lines = rec.lines();
  EXPECT_EQ(lines.size(), 400u);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "call_begin f2 #99"), 1);
}

}  // namespace
}  // namespace theon::runtime
