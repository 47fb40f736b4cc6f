// config(): typed options, Theano's flag format, errors that quote the bad part.
#include <theon/config.hpp>
#include <theon/error.hpp>
#include <theon/theon.hpp>

#include "stderr_of.hpp"
#include "util/kernel_cache.hpp"

#include <theon/kernel_cache.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace theon {
namespace {

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = config(); }
  void TearDown() override { config() = saved_; }
  Config saved_;
};

TEST_F(ConfigTest, DefaultsAndTypedAccess) {
  Config c;
  EXPECT_EQ(c.floatX, DType::Float32);
  EXPECT_EQ(c.device, "cpu");
  EXPECT_EQ(c.on_fallback, "warn");
  EXPECT_FALSE(c.allow_tf32);
  EXPECT_EQ(c.get("print_active_device"), "True");
  EXPECT_NE(c.describe().find("floatX = float32"), std::string::npos);
}

TEST_F(ConfigTest, FlagsInTheanoFormat) {
  Config c;
  c.apply_flags("floatX=float64, mode=FAST_COMPILE,device=cuda0,allow_tf32=True");
  EXPECT_EQ(c.floatX, DType::Float64);
  EXPECT_EQ(c.mode, "FAST_COMPILE");
  EXPECT_EQ(canonical_mode(c.mode), "fast_compile");
  EXPECT_EQ(c.device, "cuda0");
  EXPECT_TRUE(c.allow_tf32);
  c.apply_flags("floatx=float32");  // Theano spelling accepted
  EXPECT_EQ(c.floatX, DType::Float32);
}

TEST_F(ConfigTest, UnknownKeysRaiseAndNameTheKey) {
  Config c;
  try {
    c.apply_flags("floatX=float32,no_such_option=1");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown config option 'no_such_option'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("THEON_FLAGS"), std::string::npos);
  }
  EXPECT_THROW(c.apply_flags("floatX"), ConfigError);             // no '='
  EXPECT_THROW(c.apply_flags("=3"), ConfigError);                 // empty key
  EXPECT_THROW(c.apply_flags("floatX=int32"), ConfigError);       // floatX must be a float
  EXPECT_THROW(c.apply_flags("mode=turbo"), ConfigError);
  EXPECT_THROW(c.apply_flags("device=gpu7"), ConfigError);
  EXPECT_THROW(c.apply_flags("on_fallback=maybe"), ConfigError);
  EXPECT_THROW(c.apply_flags("print_active_device=perhaps"), ConfigError);
  EXPECT_EQ(c.floatX, DType::Float32);  // a rejected value leaves the option as it was
}

TEST_F(ConfigTest, TheanoOnlyKeysWarnOnceAndAreIgnored) {
  Config c;
  std::stringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  c.apply_flags("lib.cnmem=0.8,floatX=float64", "THEANO_FLAGS");
  c.apply_flags("lib.cnmem=0.5", "THEANO_FLAGS");
  std::cerr.rdbuf(old);
  EXPECT_EQ(c.floatX, DType::Float64);
  std::string out = captured.str();
  EXPECT_NE(out.find("'lib.cnmem' is a Theano option"), std::string::npos);
  EXPECT_EQ(out.find("lib.cnmem"), out.rfind("lib.cnmem"));  // once
}

TEST_F(ConfigTest, ModeNamesAreCaseInsensitive) {
  EXPECT_EQ(canonical_mode("FAST_RUN"), "fast_run");
  EXPECT_EQ(canonical_mode("Fast_Compile"), "fast_compile");
  EXPECT_EQ(canonical_mode("NONE"), "none");
  EXPECT_THROW(canonical_mode("FAST"), ConfigError);
}

TEST_F(ConfigTest, FloatXIsReadWhenVariablesAreMade) {
  config().floatX = DType::Float64;
  Var x = tensor::matrix("x");
  EXPECT_EQ(x.dtype(), DType::Float64);
  EXPECT_EQ(Array::randn({2}, 1).dtype(), DType::Float64);
  config().floatX = DType::Float32;
  EXPECT_EQ(tensor::vector("v").dtype(), DType::Float32);
  EXPECT_EQ((tensor::ivector("i") * 1.5).dtype(), DType::Float32);  // float literal beside ints: floatX
}

TEST_F(ConfigTest, SetValidatesOnACopy) {
  config().set("on_fallback", "raise");
  EXPECT_EQ(config().on_fallback, "raise");
  EXPECT_THROW(config().set("on_fallback", "loud"), ConfigError);
  EXPECT_EQ(config().on_fallback, "raise");
  EXPECT_THROW(config().get("nope"), ConfigError);
}

using testing_util::stderr_of;

// Every way a flag string can be rejected, after entries that are fine: none applies.
TEST_F(ConfigTest, ARejectedFlagStringAppliesNothing) {
  const char* rejected[] = {
      "floatX=float64,mode=turbo",          "mode=fast_compile,floatX=int32",
      "device=cuda0,no_such_option=1",      "on_fallback=raise,floatX",
      "deterministic=True,=3",              "compiledir_max_mb=5,allow_tf32=perhaps",
      "optimizer_excluding=fusion,device=gpu7", "lib.cnmem=0.9,floatX=float64,cxx=,mode=nope",
  };
  for (const char* flags : rejected) {
    Config c;
    const std::string before = c.describe();
    std::string err;
    const std::string said = stderr_of([&] {
      try {
        c.apply_flags(flags, "THEON_FLAGS");
      } catch (const ConfigError& e) {
        err = e.what();
      }
    });
    EXPECT_NE(err, "") << flags;
    EXPECT_NE(err.find("THEON_FLAGS"), std::string::npos) << err;
    EXPECT_NE(err.find("nothing"), std::string::npos) << err;
    EXPECT_EQ(c.describe(), before) << flags << " was partly applied";
    EXPECT_EQ(said, "") << "a rejected string warns about nothing: " << said;
  }
}

TEST_F(ConfigTest, TheanoWarnKeysAreAcceptedAndIgnoredOnce) {
  Config c;
  const std::string said = stderr_of([&] {
    c.apply_flags("warn.subtensor_merge_bug=False,warn.sum_div_dimshuffle_bug=False", "THEANO_FLAGS");
    c.apply_flags("warn.subtensor_merge_bug=True", "THEANO_FLAGS");
  });
  EXPECT_NE(said.find("'warn.subtensor_merge_bug' is a Theano option"), std::string::npos) << said;
  EXPECT_EQ(said.find("warn.subtensor_merge_bug"), said.rfind("warn.subtensor_merge_bug")) << "once: " << said;
  EXPECT_EQ(c.get("warn.subtensor_merge_bug"), "True");  // reads back what was set
  EXPECT_THROW(c.apply_flags("warn=1"), ConfigError);     // the section itself is no key
}

TEST_F(ConfigTest, CastPolicyIsATheanoOptionTheonIgnores) {
  Config c;
  const auto keys = Config::keys();
  EXPECT_EQ(std::find(keys.begin(), keys.end(), "cast_policy"), keys.end());
  const std::string said = stderr_of([&] { c.apply_flags("cast_policy=numpy+floatX", "THEANO_FLAGS"); });
  EXPECT_NE(said.find("'cast_policy' is a Theano option that Theon does not support"), std::string::npos) << said;
}

// Accepted but not acted on yet: another value than the default warns once per option (the
// default asks for nothing and says nothing); the doc says so.
TEST_F(ConfigTest, OptionsNotImplementedYetWarnWhenSetToAnotherValue) {
  struct Case {
    const char* key;
    const char* default_text;
    const char* other;
    const char* another;
  };
  for (const Case& k : {Case{"profile", "False", "True", "1"}}) {
    Config c;
    EXPECT_EQ(stderr_of([&] { c.set(k.key, k.default_text); }), "") << k.key << ": the default says nothing";
    const std::string said = stderr_of([&] { c.set(k.key, k.other); });
    EXPECT_NE(said.find(std::string("config option '") + k.key + "' is not implemented yet; " + k.key + "="),
              std::string::npos)
        << said;
    EXPECT_NE(said.find("has no effect"), std::string::npos) << said;
    EXPECT_EQ(stderr_of([&] { c.set(k.key, k.another); }), "") << k.key << ": once per process";
    EXPECT_NE(c.describe().find(std::string(k.key) + " = "), std::string::npos);
  }
  {
    Config c;  // a flag string warns too, after it was accepted
    std::string said = stderr_of([&] { c.apply_flags("profile=True", "THEON_FLAGS"); });
    EXPECT_EQ(said, "") << "the option already warned once: " << said;
  }
  std::istringstream table(config().describe());
  for (std::string line; std::getline(table, line);)
    if (line.rfind("profile ", 0) == 0) {
      EXPECT_NE(line.find("not implemented yet"), std::string::npos) << line;
    }
  try {
    Config c;
    c.set("device", "auto");  // used to be accepted, then refused by function() as unknown
    FAIL() << "device=auto was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not implemented yet"), std::string::npos) << e.what();
  }
}

TEST_F(ConfigTest, ANonexistentDeviceIsRefusedWhenAFunctionIsMade) {
  config().set("device", "cuda999");  // accepted: CUDA is not loaded to check it now
  Var x = tensor::vector("x");
  for (const char* fallback : {"warn", "ignore", "raise"}) {
    config().on_fallback = fallback;
    try {
      function({x}, {x * 2.0});
      FAIL() << "device=cuda999 was accepted";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("device=cuda999 does not exist"), std::string::npos) << msg;
      EXPECT_NE(msg.find("CUDA device(s) found"), std::string::npos) << msg;
    }
  }
}

// compiledir_max_mb: 0 is no limit (as documented), a negative value is refused (it used to
// mean "no limit" too, silently).
TEST_F(ConfigTest, CompiledirMaxMbZeroIsNoLimitAndNegativesAreRefused) {
  for (const char* bad : {"-1", "-1024"}) {
    try {
      config().set("compiledir_max_mb", bad);
      FAIL() << "compiledir_max_mb=" << bad << " was accepted";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'compiledir_max_mb'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::string("got ") + bad), std::string::npos) << msg;
    }
  }
  EXPECT_EQ(config().compiledir_max_mb, 1024);  // refused: unchanged
  Config c;
  EXPECT_THROW(c.apply_flags("compiledir_max_mb=-5"), ConfigError);

  namespace fs = std::filesystem;
  const fs::path base = fs::temp_directory_path() / ("theon-config-max-mb-" + std::to_string(getpid()));
  fs::remove_all(base);
  config().compiledir = (base / "cache").string();
  config().set("compiledir_max_mb", "0");
  EXPECT_EQ(kernel_cache_info().limit_bytes, 0);
  detail::KernelCacheFolder cpu("cpu");
  const std::string block(400 * 1024, 'k');
  std::string error;
  for (const char* name : {"a.so", "b.so", "c.so"}) ASSERT_TRUE(cpu.store(name, block, error)) << error;
  detail::enforce_kernel_cache_limit();  // 1.2 MiB and no limit: everything stays
  EXPECT_EQ(kernel_cache_info().entries, 3);
  config().set("compiledir_max_mb", "1");  // the same cache under a 1 MiB limit: evicted
  detail::enforce_kernel_cache_limit();
  const KernelCacheInfo limited = kernel_cache_info();
  EXPECT_LT(limited.entries, 3);
  EXPECT_LE(limited.bytes, int64_t{1} << 20);
  fs::remove_all(base);
}

// Each row of options.def names the test that proves the option's effect: that test exists
// (a GoogleTest under tests/, or a pytest function) and its body mentions the option.
TEST(ConfigTable, EveryOptionNamesATestThatExists) {
  namespace fs = std::filesystem;
  struct Row {
    const char* option;
    const char* test;
  };
  const std::vector<Row> rows = {
#define THEON_OPTION(name, type, def, doc, test) {#name, test},
#include <theon/options.def>
#undef THEON_OPTION
  };
  EXPECT_EQ(rows.size(), Config::keys().size());
  const fs::path root = THEON_SOURCE_DIR;
  auto read = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  // Every GoogleTest under tests/: "Suite.Name" -> the text from its TEST line to the next one.
  std::multimap<std::string, std::string> gtests;
  const std::regex head("^\\s*TEST(_F|_P)?\\(\\s*(\\w+)\\s*,\\s*(\\w+)\\s*\\)");
  for (const auto& e : fs::recursive_directory_iterator(root / "tests")) {
    if (!e.is_regular_file() || (e.path().extension() != ".cpp" && e.path().extension() != ".hpp")) continue;
    const std::string text = read(e.path());
    for (size_t at = text.find("TEST"); at != std::string::npos; at = text.find("TEST", at + 4)) {
      const size_t line = text.rfind('\n', at) + 1;  // npos + 1 == 0 on the first line
      std::smatch m;
      const std::string first = text.substr(line, text.find('\n', at) - line);
      if (!std::regex_search(first, m, head)) continue;
      const size_t next = text.find("\nTEST", at);
      gtests.emplace(m[2].str() + "." + m[3].str(), text.substr(at, next == std::string::npos ? next : next - at));
    }
  }
  ASSERT_GT(gtests.size(), 100u) << "no tests found under " << root;
  // Each definition of the named test (a pytest id is "tests/python/file.py::test_name").
  auto bodies_of = [&](const std::string& test) {
    std::vector<std::string> bodies;
    if (const size_t sep = test.find("::"); sep != std::string::npos) {
      const std::string text = read(root / test.substr(0, sep));
      const std::string def = "\ndef " + test.substr(sep + 2) + "(";
      if (const size_t at = text.find(def); at != std::string::npos)
        bodies.push_back(text.substr(at, text.find("\ndef ", at + 1) - at));
    } else {
      auto [first, last] = gtests.equal_range(test);
      for (auto it = first; it != last; ++it) bodies.push_back(it->second);
    }
    return bodies;
  };
  EXPECT_TRUE(bodies_of("ConfigTable.NoSuchTest").empty());  // the check can fail
  EXPECT_TRUE(bodies_of("tests/python/test_config.py::test_no_such_test").empty());
  EXPECT_EQ(bodies_of("ConfigTable.EveryOptionNamesATestThatExists").size(), 1u);
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string(row.option) + " -> " + row.test);
    const auto bodies = bodies_of(row.test);
    ASSERT_EQ(bodies.size(), 1u) << "the test named by options.def does not exist (or is defined twice); "
                                    "expected Suite.Name or tests/python/file.py::test_name";
    EXPECT_NE(bodies[0].find(row.option), std::string::npos) << "the named test never mentions the option";
  }
}

}  // namespace
}  // namespace theon
