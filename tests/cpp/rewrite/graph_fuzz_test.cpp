// Graph fuzzer: random graphs over the core's ops, compiled in fast_run and in none (no
// optimizations), must agree. Catches rewrites that change results.
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <random>

namespace theon {
namespace {

struct RandomGraph {
  std::vector<Var> inputs;
  std::vector<Array> values;
  Var output;
};

// Builds a graph of `steps` random ops over inputs of shape (rows, cols) or broadcastable
// variants; every intermediate keeps rank 2 so any op can follow any other.
RandomGraph make_graph(std::mt19937_64& rng, DType dtype) {
  std::uniform_int_distribution<int> dim(1, 5), pick(0, 1 << 20);
  const int64_t rows = dim(rng), cols = dim(rng);
  RandomGraph g;
  std::vector<Var> pool;
  const int n_inputs = 1 + pick(rng) % 3;
  for (int i = 0; i < n_inputs; ++i) {
    int variant = pick(rng) % 3;  // full, row (1, cols), column (rows, 1)
    Shape s = variant == 0 ? Shape{rows, cols} : variant == 1 ? Shape{1, cols} : Shape{rows, 1};
    Var v = tensor::tensor(dtype, {-1, -1}, "in" + std::to_string(i));
    g.inputs.push_back(v);
    g.values.push_back(Array::randn(s, pick(rng), dtype));
    pool.push_back(v);
  }
  auto any = [&]() { return pool[pick(rng) % pool.size()]; };
  // A (cols, cols) weight for the matrix-product cases (dot + bias becomes a Gemm).
  Var w = constant(Array::randn({cols, cols}, pick(rng), dtype), "w");
  const int steps = 2 + pick(rng) % 8;
  for (int s = 0; s < steps; ++s) {
    Var a = any(), b = any(), r;
    switch (pick(rng) % 19) {
      case 0: r = a + b; break;
      case 1: r = a - b * 0.5; break;
      case 2: r = a * b; break;
      case 3: r = tensor::tanh(a); break;
      case 4: r = tensor::exp(tensor::minimum(a, b) * 0.1); break;
      case 5: r = tensor::log1p(tensor::abs(a)); break;
      case 6: r = tensor::sum(a, std::vector<int>{1}, true) + b; break;
      case 7: r = tensor::max(a, std::vector<int>{0}, true) * a; break;
      case 8: r = tensor::switch_(a > b, a, b * 2.0); break;
      case 9: r = tensor::sigmoid(a) + tensor::sigmoid(a); break;  // a common subexpression
      case 10: r = tensor::mean(a, std::vector<int>{0, 1}, true) - a; break;
      case 11: r = tensor::clip(a, as_var(-1.0), as_var(1.0)) + tensor::relu(b); break;
      case 12: r = a * (constant(Array::full({1, 1}, 2.0, dtype)) + 1.0); break;  // foldable
      case 13: r = tensor::sqrt(tensor::sqr(a) + 1.0) / (tensor::abs(b) + 1.0); break;
      // Cases for canonicalize and specialize (Gemm): the rules must keep results.
      case 14: r = tensor::dot(tensor::broadcast_to(a, {rows, cols}), w) + b; break;  // bias of any broadcast
      case 15:  // a (1, cols) product broadcast against b at run time, scaled
        r = tensor::dot(tensor::broadcast_to(tensor::max(a, std::vector<int>{0}, true), {1, cols}), w) * 0.5 - b;
        break;
      case 16: r = tensor::log(tensor::softmax(a)) + b; break;
      case 17: r = -(-a) * 1.0 + b / 1.0 - 0.0; break;
      case 18: r = tensor::log(tensor::sigmoid(a)) + tensor::log(1.0 - tensor::sigmoid(b)); break;
    }
    pool.push_back(r);
  }
  g.output = pool.back();
  for (size_t i = n_inputs; i + 1 < pool.size(); ++i)  // use every intermediate
    if (pick(rng) % 3 == 0) g.output = g.output + tensor::sum(pool[i]);
  return g;
}

TEST(GraphFuzz, FastRunAgreesWithNone) {
  std::mt19937_64 rng(20261122);
  int compared = 0;
  for (int trial = 0; trial < 220; ++trial) {
    DType dtype = trial % 2 ? DType::Float32 : DType::Float64;
    RandomGraph g = make_graph(rng, dtype);
    Function opt = function(g.inputs, {g.output}, {.mode = "fast_run", .on_unused_input = "ignore"});
    Function ref = function(g.inputs, {g.output}, {.mode = "none", .on_unused_input = "ignore"});
    Array a = opt(g.values)[0], b = ref(g.values)[0];
    double tol = dtype == DType::Float32 ? 1e-5 : 1e-12;
    ASSERT_TRUE(allclose(a, b, tol, tol)) << "trial " << trial << "\n" << debugprint(g.output) << "\nfast_run:\n"
                                          << a << "\nnone:\n" << b;
    ++compared;
  }
  EXPECT_EQ(compared, 220);
}

}  // namespace
}  // namespace theon
