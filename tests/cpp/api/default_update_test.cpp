// theon/default_update.hpp: Theano's shared_var.default_update, applied by function() through
// the mechanism random streams use (FunctionOptions::no_default_updates skips it).
#include <theon/default_update.hpp>
#include <theon/theon.hpp>

#include <gtest/gtest.h>

namespace theon {
namespace {

TEST(DefaultUpdate, FunctionAppliesItUnlessSkippedOrOverridden) {
  SharedVar s = shared(Array::from_vector<double>({0, 0}), "s");
  Var update = s + 1.0;
  set_default_update(s, update);
  ASSERT_TRUE(default_update(s).has_value());
  EXPECT_EQ(default_update(s)->node(), update.node());
  Var out = s * 2.0;
  Function f = function({}, {out});
  f({});
  f({});
  EXPECT_EQ(s.get_value().to_vector<double>(), (std::vector<double>{2, 2}));
  Function frozen = function({}, {out}, {.no_default_updates = true});
  frozen({});
  EXPECT_EQ(s.get_value().to_vector<double>(), (std::vector<double>{2, 2}));
  Function skip = function({}, {out}, {.no_default_updates_of = {s}});
  skip({});
  EXPECT_EQ(s.get_value().to_vector<double>(), (std::vector<double>{2, 2}));
  Function explicit_update = function({}, {out}, {.updates = {{s, s * 0.0}}});
  explicit_update({});
  EXPECT_EQ(s.get_value().to_vector<double>(), (std::vector<double>{0, 0}));
  set_default_update(s, std::nullopt);
  EXPECT_FALSE(default_update(s).has_value());
  function({}, {out})({});
  EXPECT_EQ(s.get_value().to_vector<double>(), (std::vector<double>{0, 0}));
}

TEST(DefaultUpdate, TypeMustMatchAndOnlySharedVariablesHaveOne) {
  SharedVar s = shared(Array::from_vector<double>({0, 0}), "s");
  EXPECT_THROW(set_default_update(s, tensor::dmatrix("m")), TypeError);
  EXPECT_THROW(set_default_update(s, tensor::cast(s, DType::Float32)), TypeError);
  EXPECT_FALSE(default_update(s).has_value());
}

TEST(DefaultUpdate, OutlivesTheCallersUpdateAndDoesNotKeepTheVariableAlive) {
  std::weak_ptr<graph::Variable> alive;
  {
    SharedVar s = shared(Array::from_vector<double>({0}), "s");
    alive = s.node();
    Var x = tensor::scalar("x", DType::Float64);
    {
      Var update = s + x;
      set_default_update(s, update);
    }
    // The caller's update is gone: the kept one still applies (Lasagne sets it on a clone it drops).
    ASSERT_TRUE(default_update(s).has_value());
    EXPECT_EQ(role(*default_update(s)), VarRole::Output);
    Function f = function({x}, {s * 1.0});
    f({Array::scalar(2.0, DType::Float64)});
    f({Array::scalar(3.0, DType::Float64)});
    EXPECT_EQ(s.get_value().to_vector<double>(), (std::vector<double>{5}));
  }
  // The update's graph reads s, yet s is freed with its last user (no cycle through the update).
  EXPECT_TRUE(alive.expired());
}

}  // namespace
}  // namespace theon
