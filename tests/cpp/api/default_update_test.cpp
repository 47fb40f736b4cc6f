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

TEST(DefaultUpdate, IsHeldWeakly) {
  SharedVar s = shared(Array::from_vector<double>({0}), "s");
  {
    Var update = s + 1.0;
    set_default_update(s, update);
  }
  // The update's graph reads s: holding it strongly would be a cycle. The caller keeps it.
  EXPECT_FALSE(default_update(s).has_value());
}

}  // namespace
}  // namespace theon
