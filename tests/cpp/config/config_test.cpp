// config(): typed options, Theano's flag format, errors that quote the bad part.
#include <theon/config.hpp>
#include <theon/error.hpp>
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

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

// Runs `fn` with std::cerr captured.
template <class F>
std::string stderr_of(F&& fn) {
  std::stringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  try {
    fn();
  } catch (...) {
    std::cerr.rdbuf(old);
    throw;
  }
  std::cerr.rdbuf(old);
  return captured.str();
}

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

TEST_F(ConfigTest, OptionsNotImplementedYetSaySo) {
  for (const char* key : {"profile", "contexts", "print_active_device"}) {
    Config c;
    const std::string value = std::string(key) == "contexts" ? "dev0->cuda0" : "True";
    const std::string said = stderr_of([&] { c.set(key, value); });
    EXPECT_NE(said.find(std::string("config option '") + key + "' is not implemented yet"), std::string::npos)
        << said;
    EXPECT_EQ(stderr_of([&] { c.set(key, value); }), "") << "once per process";
  }
  EXPECT_NE(config().describe().find("not implemented yet"), std::string::npos);
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

}  // namespace
}  // namespace theon
