// The context map (the `contexts` flag): Theano's rules, each broken rule quoted back.
#include "runtime/contexts.hpp"

#include "error_of.hpp"

#include <theon/error.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>

namespace theon::runtime {
namespace {

using testing_util::error_of;

TEST(RuntimeContexts, DevicesAreTheirOwnContexts) {
  const ContextMap map;
  EXPECT_TRUE(map.mappings().empty());
  EXPECT_EQ(map.resolve("cpu"), (Context{"cpu", Device::cpu()}));
  EXPECT_EQ(map.resolve("cuda0"), (Context{"cuda0", Device::cuda(0)}));
  EXPECT_EQ(map.resolve("cuda12"), (Context{"cuda12", Device::cuda(12)}));  // existence is checked on use
  EXPECT_TRUE(ContextMap::parse("").mappings().empty());
}

TEST(RuntimeContexts, ParsesNamesToDevicesInOrder) {
  const ContextMap map = ContextMap::parse("dev0->cuda0;dev1->cuda1; host -> cpu");
  ASSERT_EQ(map.mappings().size(), 3u);
  EXPECT_EQ(map.mappings()[0], (Context{"dev0", Device::cuda(0)}));
  EXPECT_EQ(map.mappings()[1], (Context{"dev1", Device::cuda(1)}));
  EXPECT_EQ(map.mappings()[2], (Context{"host", Device::cpu()}));  // spaces around are dropped
  EXPECT_EQ(map.resolve("dev1"), (Context{"dev1", Device::cuda(1)}));
  EXPECT_EQ(map.resolve("host"), (Context{"host", Device::cpu()}));
  EXPECT_EQ(map.resolve("cuda1"), (Context{"cuda1", Device::cuda(1)}));
}

TEST(RuntimeContexts, SeveralNamesMayMapToOneDevice) {
  const ContextMap map = ContextMap::parse("a->cuda1;b->cuda1;c->cuda1");
  for (const char* name : {"a", "b", "c"}) EXPECT_EQ(map.resolve(name).device, Device::cuda(1)) << name;
}

// Each malformed map is a ConfigError quoting the entry at fault and saying what is wrong.
TEST(RuntimeContexts, EveryBrokenRuleIsAnErrorQuotingTheEntry) {
  struct Case {
    std::string spec, entry, why;
  };
  const std::vector<Case> cases = {
      {"dev0", "'dev0'", "not of the form name->device"},
      {"dev0->cuda0;dev1", "'dev1'", "not of the form name->device"},
      {"de;v0->cuda0", "'de'", "not of the form name->device"},  // ';' separates: no name holds one
      {"a->b->cuda0", "'a->b->cuda0'", "more than one '->'"},
      {"dev0->cuda0;", "''", "empty entry"},
      {";dev0->cuda0", "''", "empty entry"},
      {"dev0->cuda0; ;dev1->cuda1", "' '", "empty entry"},
      {"->cuda0", "'->cuda0'", "no name"},
      {"cuda0->cuda1", "'cuda0->cuda1'", "may not begin with 'cuda' or 'opencl'"},
      {"cuda_big->cuda0", "'cuda_big->cuda0'", "may not begin with 'cuda' or 'opencl'"},
      {"opencl0:0->cuda0", "'opencl0:0->cuda0'", "may not begin with 'cuda' or 'opencl'"},
      {"cpu->cuda0", "'cpu->cuda0'", "the CPU's own context"},
      {"dev0->gpu0", "'dev0->gpu0'", "'gpu0', which is not a device"},
      {"dev0->cuda", "'dev0->cuda'", "'cuda', which is not a device"},
      {"dev0->cuda01", "'dev0->cuda01'", "'cuda01', which is not a device"},
      {"dev0->opencl0:0", "'dev0->opencl0:0'", "not a device"},
      {"dev0->", "'dev0->'", "'', which is not a device"},
      {"dev0->cuda0;dev0->cuda1", "'dev0->cuda1'", "defines 'dev0' again (it maps to cuda0)"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of<ConfigError>([&] { ContextMap::parse(c.spec); });
    EXPECT_NE(e.find("contexts: " + c.entry + " "), std::string::npos) << c.spec << ": " << e;
    EXPECT_NE(e.find(c.why), std::string::npos) << c.spec << ": " << e;
    EXPECT_NE(e.find("contexts='" + c.spec + "'"), std::string::npos) << c.spec << ": " << e;
  }
}

TEST(RuntimeContexts, AnUnknownNameIsAnErrorListingTheKnownNames) {
  const ContextMap map = ContextMap::parse("dev0->cuda0;host->cpu");
  for (const char* unknown : {"dev1", "cuda", "gpu", "opencl0:0", ""}) {
    const std::string e = error_of<ValueError>([&] { map.resolve(unknown); });
    EXPECT_NE(e.find(std::string("context '") + unknown + "' is not defined"), std::string::npos) << e;
    EXPECT_NE(e.find("dev0 (cuda0), host (cpu)"), std::string::npos) << e;
    EXPECT_NE(e.find("cpu, cuda0, cuda1"), std::string::npos) << e;
  }
}

// context_threads: budgets per context name, defaulting to the cores shared out.
TEST(RuntimeContexts, ThreadBudgetsPerContext) {
  ContextMap map = ContextMap::parse("a->cpu;b->cpu;g->cuda0");
  const int cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(map.threads("a", 2), std::max(1, cores / 2));
  map.set_thread_budgets("a=2; cpu = 5");
  EXPECT_EQ(map.threads("a", 2), 2);
  EXPECT_EQ(map.threads("cpu", 2), 5);  // a device's own context may have one too
  EXPECT_EQ(map.threads("b", 3), std::max(1, cores / 3));
  map.set_thread_budgets("");  // no entries: the defaults again
  EXPECT_EQ(map.threads("a", 1), cores);
  for (const char* bad : {"a", "a=0", "a=1.5", "a=9999999", "x=1", "a=1;;b=1", "a=1;a=1"}) {
    const std::string e = error_of<ConfigError>([&] { map.set_thread_budgets(bad); });
    EXPECT_NE(e.find(std::string("context_threads='") + bad + "'"), std::string::npos) << bad << ": " << e;
  }
  EXPECT_EQ(map.threads("a", 1), cores);  // a rejected text changes nothing
}

}  // namespace
}  // namespace theon::runtime
