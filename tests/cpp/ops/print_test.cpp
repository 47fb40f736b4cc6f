// Print (theano.printing.Print): values handed over as the graph runs, in its order, kept by
// the optimizer, gradients passing through.
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace theon {
namespace {

struct Seen {
  std::vector<std::string> messages;
  std::vector<Array> values;
  PrintFn fn() {
    return [this](const std::string& m, const Array& v) {
      messages.push_back(m);
      values.push_back(v);
    };
  }
};

std::vector<double> values_of(const Array& a) {
  std::vector<double> out;
  Array d = a.astype(DType::Float64).contiguous();
  for (int64_t i = 0; i < d.size(); ++i) out.push_back(d.data<double>()[i]);
  return out;
}

TEST(Print, IsItsInputAndHandsTheValueOverOnEachCall) {
  Seen seen;
  Var x = tensor::vector("x", DType::Float64);
  Var y = print(x * 2.0, "twice", seen.fn()) + 1.0;
  Function f = function({x}, {y});
  Array out = f({Array::from_vector<double>({1, 2, 3})})[0];
  EXPECT_EQ(values_of(out), (std::vector<double>{3, 5, 7}));
  f({Array::from_vector<double>({4})});
  ASSERT_EQ(seen.messages, (std::vector<std::string>{"twice", "twice"}));
  EXPECT_EQ(values_of(seen.values[0]), (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(values_of(seen.values[1]), (std::vector<double>{8}));
}

TEST(Print, RunsInGraphOrderAndBeforeALaterFailure) {
  Seen seen;
  Var x = tensor::vector("x", DType::Float64);
  Var a = print(x + 1.0, "first", seen.fn());
  Var b = print(a * 2.0, "second", seen.fn());
  Var y = tensor::specify_shape(b, {3});  // checked at run time: fails for other lengths
  Function f = function({x}, {y});
  f({Array::from_vector<double>({0, 0, 0})});
  EXPECT_EQ(seen.messages, (std::vector<std::string>{"first", "second"}));
  EXPECT_ANY_THROW(f({Array::from_vector<double>({1, 2})}));
  ASSERT_EQ(seen.messages.size(), 4u);  // both printed before the failing check
  EXPECT_EQ(values_of(seen.values[3]), (std::vector<double>{4, 6}));
}

TEST(Print, IsNotFoldedOrMergedAndTheGradientPassesThrough) {
  Seen seen;
  Var x = tensor::scalar("x", DType::Float64);
  Var c = print(constant(Array::full({}, 3.0, DType::Float64), "c"), "const", seen.fn());
  Var p = print(x, "p", seen.fn()), q = print(x, "p", seen.fn());
  Var cost = c * tensor::sqr(p) + q;
  Var g = grad(cost, x);
  Function f = function({x}, {cost, g});
  auto outs = f({Array::full({}, 2.0, DType::Float64)});
  EXPECT_EQ(values_of(outs[0])[0], 14.0);
  EXPECT_EQ(values_of(outs[1])[0], 13.0);  // 2 * 3 * x + 1: nothing printed changes it
  EXPECT_EQ(seen.messages.size(), 3u);      // the constant's Print runs too; p and q both
}

TEST(Print, DefaultWritesMessageAndValueOnStdout) {
  Var x = tensor::vector("x", DType::Float64);
  Function f = function({x}, {print(x, "x is")});
  ::testing::internal::CaptureStdout();
  f({Array::from_vector<double>({1.5})});
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("x is __str__ = "), std::string::npos) << out;
  EXPECT_NE(out.find("1.5"), std::string::npos) << out;
}

TEST(Print, UndefinedVarIsAClearError) {
  try {
    print(Var(), "m");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("print"), std::string::npos);
  }
}

}  // namespace
}  // namespace theon
