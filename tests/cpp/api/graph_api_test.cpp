// theon/graph.hpp: a variable's role and node, constants' values, clone with replacements.
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace theon {
namespace {

TEST(GraphApi, RolesAndOwners) {
  Var x = tensor::dvector("x");
  SharedVar s = shared(Array::from_vector<double>({1, 2}), "s");
  Var c = constant(Array::from_vector<double>({3, 4}), "c");
  Var y = (x + s) * c;
  EXPECT_EQ(role(x), VarRole::Input);
  EXPECT_EQ(role(s), VarRole::Shared);
  EXPECT_EQ(role(c), VarRole::Constant);
  EXPECT_EQ(role(y), VarRole::Output);
  EXPECT_FALSE(owner(x).has_value());
  std::optional<ApplyInfo> a = owner(y);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->op, "Elemwise{mul}");
  EXPECT_EQ(a->op_kind, "Elemwise");
  EXPECT_TRUE(a->op_pure);
  ASSERT_EQ(a->inputs.size(), 2u);
  EXPECT_EQ(a->inputs[1].node(), c.node());
  ASSERT_EQ(a->outputs.size(), 1u);
  EXPECT_EQ(a->outputs[0].node(), y.node());
  EXPECT_EQ(a->index, 0);
  std::optional<ApplyInfo> add = owner(a->inputs[0]);
  ASSERT_TRUE(add.has_value());
  EXPECT_EQ(role(add->inputs[1]), VarRole::Shared);  // a SharedVar comes back as one
  EXPECT_EQ(constant_value(c).to_vector<double>(), (std::vector<double>{3, 4}));
  EXPECT_THROW(constant_value(x), ValueError);
}

TEST(GraphApi, CloneReplacesWithoutTouchingTheOriginal) {
  Var x = tensor::dvector("x"), w = tensor::dvector("w");
  Var y = tensor::exp(x) * 2.0;
  y.set_name("y");
  std::vector<Var> c = clone({y}, {{x, w}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].node(), y.node());
  EXPECT_EQ(c[0].name(), "y");
  EXPECT_EQ(symbolic_inputs(c).size(), 1u);
  EXPECT_EQ(symbolic_inputs(c)[0].node(), w.node());
  EXPECT_EQ(symbolic_inputs({y})[0].node(), x.node());
  const Array v = Array::from_vector<double>({0.5, -1.0});
  const std::vector<double> got = function({w}, c)({v})[0].to_vector<double>();
  EXPECT_DOUBLE_EQ(got[0], std::exp(0.5) * 2);
  // share_inputs=false: a new input of the same type and name.
  std::vector<Var> d = clone({y}, {}, true, false);
  ASSERT_EQ(symbolic_inputs(d).size(), 1u);
  EXPECT_NE(symbolic_inputs(d)[0].node(), x.node());
  EXPECT_EQ(symbolic_inputs(d)[0].name(), "x");
  EXPECT_EQ(symbolic_inputs(d)[0].type_str(), x.type_str());
}

TEST(GraphApi, CloneChecksReplacementTypes) {
  Var x = tensor::dvector("x");
  Var s3 = tensor::tensor(DType::Float64, {3}, "s3");
  EXPECT_THROW(clone({x * 2.0}, {{x, tensor::fvector("f")}}), TypeError);
  EXPECT_THROW(clone({x * 2.0}, {{x, tensor::dmatrix("m")}}), TypeError);
  EXPECT_THROW(clone({s3 * 2.0}, {{s3, x}}), TypeError);       // strict: the size 3 would be lost
  EXPECT_NO_THROW(clone({s3 * 2.0}, {{s3, x}}, /*strict=*/false));
  EXPECT_THROW(clone({s3 * 2.0}, {{s3, tensor::tensor(DType::Float64, {4}, "s4")}}), TypeError);
  EXPECT_THROW(clone({x * 2.0}, {{x, tensor::dmatrix("m")}}, false), TypeError);  // the rank must match
  EXPECT_THROW(clone({x * 2.0}, {{x, x * 3.0}, {x, x * 4.0}}), ValueError);
}

TEST(GraphApi, CloneNonStrictRetypesForAnotherDtype) {
  // Theano's clone(strict=False) re-makes each node above a replacement of another type.
  Var x = tensor::fvector("x");
  Var y = tensor::exp(x) * 2.0 + tensor::sum(x);
  ASSERT_EQ(y.dtype(), DType::Float32);
  Var d = tensor::dvector("d");
  EXPECT_THROW(clone({y}, {{x, d}}), TypeError);  // strict: the dtype must match
  Var c = clone({y}, {{x, d}}, /*strict=*/false)[0];
  EXPECT_EQ(c.dtype(), DType::Float64);
  Function f = function({d}, {c});
  const double v = 0.1234567890123;
  const auto out = f({Array::from_vector<double>({v, 1.0})})[0].to_vector<double>();
  EXPECT_DOUBLE_EQ(out[0], std::exp(v) * 2.0 + (v + 1.0));  // computed in float64, not float32
  EXPECT_EQ(y.dtype(), DType::Float32);  // the original is unchanged
}

TEST(GraphApi, CloneNonStrictRelaxesStaticSizes) {
  // A (1, ?) row replaced by a (?, ?) matrix: the results no longer claim a size-1 dim.
  Var r = tensor::tensor(DType::Float64, {1, -1}, "r");
  Var m = tensor::dmatrix("m");
  Var y = tensor::transpose(tensor::reshape(r, {-1, 2})) * 3.0;  // Reshape: typed by the fallback
  Var c = clone({y}, {{r, m}}, false)[0];
  Function f = function({m}, {c});
  const Array out = f({Array::from_vector<double>({1, 2, 3, 4, 5, 6}).reshape({3, 2})})[0];
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{3, 9, 15, 6, 12, 18}));
}

TEST(GraphApi, CloneNonStrictFollowsTheValuesDtypeThroughViews) {
  Var x = tensor::fmatrix("x");
  Var y = tensor::sum(tensor::reshape(x, {-1}));  // Reshape follows its input's dtype
  Var c = clone({y}, {{x, tensor::dmatrix("m")}}, false)[0];
  EXPECT_EQ(c.dtype(), DType::Float64);
}

TEST(GraphApi, CloneNonStrictRefusesWhatItCannotRetype) {
  Var x = tensor::fvector("x");
  Var y = tensor::cumsum(x, 0) * 2.0f;
  try {
    clone({y}, {{x, tensor::dvector("d")}}, false);
    FAIL() << "no error";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("CumSum"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("same dtype"), std::string::npos) << e.what();
  }
  // the same graph re-typed for a replacement that only changes static sizes: fine
  EXPECT_NO_THROW(clone({y}, {{x, tensor::tensor(DType::Float32, {5}, "x5")}}, false));
}

}  // namespace
}  // namespace theon
