// config(): typed options, Theano's flag format, errors that quote the bad part.
#include <theon/config.hpp>
#include <theon/error.hpp>
#include <theon/theon.hpp>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace theon
