// The `contexts`, `print_active_device` and `context_threads` options: the map is resolved
// where it is first used (runtime::active_contexts), checked then, printed once per mapping.
#include <theon/config.hpp>
#include <theon/error.hpp>
#include <theon/theon.hpp>

#include "error_of.hpp"
#include "runtime/contexts.hpp"
#include "runtime/devices.hpp"
#include "stderr_of.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>

namespace theon {
namespace {

using testing_util::error_of;
using testing_util::stderr_of;

class ContextsFlag : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = config(); }
  void TearDown() override {
    config() = saved_;
    runtime::active_contexts();  // the next test starts from the default map
  }
  Config saved_;
};

std::string cpu_model() { return runtime::device_info(Device::cpu()).name; }

TEST_F(ContextsFlag, TheMapIsResolvedAtFirstUseAndAgainWhenItChanges) {
  config().print_active_device = true;
  // Setting the flag checks nothing and prints nothing: the map is resolved where it is used.
  EXPECT_EQ(stderr_of([] { config().set("contexts", "dev0->cpu; dev1 -> cpu"); }), "");
  std::shared_ptr<const runtime::ContextMap> map;
  const std::string said = stderr_of([&] { map = runtime::active_contexts(); });
  EXPECT_EQ(said, "Mapped name dev0 to device cpu: " + cpu_model() + "\nMapped name dev1 to device cpu: " +
                      cpu_model() + "\n");
  ASSERT_EQ(map->mappings().size(), 2u);
  EXPECT_EQ(map->resolve("dev1"), (runtime::Context{"dev1", Device::cpu()}));
  // Once per mapping: later uses print nothing and share the resolved map.
  EXPECT_EQ(stderr_of([&] { EXPECT_EQ(runtime::active_contexts(), map); }), "");
  EXPECT_EQ(stderr_of([] { runtime::resolve_context("dev0"); }), "");
  // Another text is another map, resolved (and printed) at its first use.
  config().contexts = "big->cpu";
  EXPECT_EQ(stderr_of([] { EXPECT_EQ(runtime::resolve_context("big").device, Device::cpu()); }),
            "Mapped name big to device cpu: " + cpu_model() + "\n");
  EXPECT_NE(error_of<ValueError>([] { runtime::resolve_context("dev0"); }).find("context 'dev0' is not defined"),
            std::string::npos);
  // print_active_device=False: resolved silently.
  config().print_active_device = false;
  config().contexts = "quiet->cpu";
  EXPECT_EQ(stderr_of([] { runtime::active_contexts(); }), "");
  EXPECT_EQ(runtime::active_contexts()->mappings().at(0).name, "quiet");
}

// A malformed map is accepted when set and rejected where it is used, each time, quoting the
// mapping at fault; the map in force before is not replaced by part of the new one.
TEST_F(ContextsFlag, AMalformedMapIsAConfigErrorWhereItIsUsed) {
  config().print_active_device = false;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"dev0", "'dev0' is not of the form name->device"},
      {"dev0->cpu;dev1", "'dev1' is not of the form name->device"},
      {"->cpu", "has no name"},
      {"dev0->gpu0", "'gpu0', which is not a device"},
      {"dev0->cpu;dev0->cpu", "defines 'dev0' again"},
      {"cuda0->cpu", "may not begin with 'cuda' or 'opencl'"},
      {"openclx->cpu", "may not begin with 'cuda' or 'opencl'"},
      {"cpu->cpu", "the CPU's own context"},
      {"dev0->cpu;", "empty entry"},
  };
  for (const auto& [spec, why] : cases) {
    EXPECT_NO_THROW(config().set("contexts", spec)) << spec;
    for (int use = 0; use < 2; ++use) {
      const std::string e = error_of<ConfigError>([] { runtime::active_contexts(); });
      EXPECT_NE(e.find(why), std::string::npos) << spec << ": " << e;
      EXPECT_NE(e.find("contexts='" + spec + "'"), std::string::npos) << spec << ": " << e;
    }
  }
  // A function's compile, shared(target=), transfer(name) and a context scope are uses.
  config().contexts = "dev0->cpu;oops";
  Var x = tensor::vector("x");
  for (const auto& use : std::vector<std::function<void()>>{
           [&] { function({x}, {x * 2.0}); },
           [] { shared(Array::zeros({2}, DType::Float32), "w", {.target = "cpu"}); },
           [&] { transfer(x, "cpu"); },
           [] { ContextScope scope("cpu"); }}) {
    const std::string e = error_of<ConfigError>(use);
    EXPECT_NE(e.find("contexts: 'oops' is not of the form name->device"), std::string::npos) << e;
  }
}

// cudaN must exist: checked when the map is resolved, through the device registry. Where no
// CUDA device can be used at all (CI), a GPU context is what device=cuda0 is: the map resolves
// and compiling applies on_fallback (raise: a DeviceError naming the context).
TEST_F(ContextsFlag, AGpuIndexPastTheLastDeviceIsAConfigError) {
  config().print_active_device = false;
  const size_t cuda_devices = runtime::devices().size() - 1;
  const std::string past = "cuda" + std::to_string(cuda_devices);
  config().contexts = "dev0->cpu;far->" + past;
  if (cuda_devices == 0) {
    EXPECT_NO_THROW(runtime::active_contexts());
    const std::string saved = config().on_fallback;
    config().on_fallback = "raise";
    SharedVar w = shared(Array::zeros({2}, DType::Float32), "w", {.target = "far"});
    const std::string e = error_of<DeviceError>([&] { function({}, {w * 2.0f}); });
    config().on_fallback = saved;
    EXPECT_NE(e.find("context far (cuda0)"), std::string::npos) << e;
    return;
  }
  const std::string e = error_of<ConfigError>([] { runtime::active_contexts(); });
  EXPECT_NE(e.find("contexts: 'far->" + past + "' maps to " + past), std::string::npos) << e;
  EXPECT_NE(e.find(cuda_devices == 1 ? "there is 1 CUDA device" : "there are " + std::to_string(cuda_devices) +
                                                                      " CUDA devices"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find(past + " does not exist"), std::string::npos) << e;
}

TEST_F(ContextsFlag, ThreadBudgetsComeFromContextThreads) {
  config().print_active_device = false;
  config().contexts = "dev0->cpu;dev1->cpu";
  config().context_threads = "dev0=3";
  const auto map = runtime::active_contexts();
  const int cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(map->threads("dev0", 2), 3);
  EXPECT_EQ(map->threads("dev1", 2), std::max(1, cores / 2));  // the default: cores / cpu contexts
  EXPECT_EQ(map->threads("dev1", 1), cores);
  EXPECT_EQ(map->threads("cpu", 4 * cores), 1);  // never below one
  config().context_threads = " dev1 = 2 ; cpu=1";
  EXPECT_EQ(runtime::active_contexts()->threads("dev1", 2), 2);
  EXPECT_EQ(runtime::active_contexts()->threads("cpu", 2), 1);
  EXPECT_EQ(runtime::active_contexts()->threads("dev0", 1), cores);

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"dev0", "'dev0' is not of the form name=threads"},
      {"dev0=0", "gives '0' threads"},
      {"dev0=-1", "gives '-1' threads"},
      {"dev0=two", "gives 'two' threads"},
      {"dev0=", "gives '' threads"},
      {"=1", "has no context name"},
      {"dev0=1;", "empty entry"},
      {"dev0=1;dev0=2", "gives 'dev0' a budget again"},
      {"dev9=1", "'dev9=1' names no context; the contexts are dev0 (cpu), dev1 (cpu), "},
  };
  for (const auto& [spec, why] : cases) {
    EXPECT_NO_THROW(config().set("context_threads", spec)) << spec;
    const std::string e = error_of<ConfigError>([] { runtime::active_contexts(); });
    EXPECT_NE(e.find(why), std::string::npos) << spec << ": " << e;
    EXPECT_NE(e.find("context_threads='" + spec + "'"), std::string::npos) << spec << ": " << e;
  }
}

// device= and contexts= together: the device flag names the default context, the map adds names.
TEST_F(ContextsFlag, TheDeviceFlagAndTheMapTogether) {
  config().print_active_device = false;
  config().device = "cpu";
  config().contexts = "dev0->cpu";
  EXPECT_EQ(runtime::resolve_context(config().device), (runtime::Context{"cpu", Device::cpu()}));
  EXPECT_EQ(runtime::resolve_context("dev0"), (runtime::Context{"dev0", Device::cpu()}));
}

}  // namespace
}  // namespace theon
