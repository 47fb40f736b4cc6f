// Symbolic differentiation (Theano's theano.grad and friends).
//
//   Var cost = tensor::mean(tensor::sqr(tensor::dot(x, w) - y));
//   std::vector<Var> g = grad(cost, {w});             // d cost / d w, a symbolic graph
//   Function step = function({x, y}, {cost}, {.updates = {{w, w - 0.1 * g[0]}}});
//
//   verify_grad([](const std::vector<Var>& v) { return tensor::tanh(v[0]); },
//               {Array::randn({3, 4}, 1, DType::Float64)});   // throws GradientError if wrong
#pragma once
#include <theon/array.hpp>
#include <theon/error.hpp>
#include <theon/var.hpp>

#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace theon {

struct GradOptions {
  /// What to do when a `wrt` variable does not influence the cost: raise | warn | ignore
  /// (warn and ignore return zeros for it).
  std::string disconnected_inputs = "raise";
  /// Variables treated as constants: no gradient flows through them.
  std::vector<Var> consider_constant = {};
  /// Gradients given for intermediate variables: (variable, d cost / d variable). With
  /// known_grads the cost may be undefined (Var()).
  std::vector<std::pair<Var, Var>> known_grads = {};
};

/// The symbolic gradient of scalar `cost` with respect to each of `wrt`. The result is a
/// graph like any other (grad of grad works). As in Theano, a gradient is never an integer: an
/// integer or bool `wrt` gets a floatX (or float) gradient, and the gradient through integer-valued
/// results (an integer cost among them) is zero. Each gradient depends on every input variable
/// of the cost, as Theano's do, so no input of the cost is "unused" in a function computing it.
std::vector<Var> grad(const Var& cost, const std::vector<Var>& wrt, const GradOptions& options = {});
Var grad(const Var& cost, const Var& wrt, const GradOptions& options = {});
/// A braced list is always the list form: `grad(cost, {v})[0]` is v's whole gradient.
std::vector<Var> grad(const Var& cost, std::initializer_list<Var> wrt, const GradOptions& options = {});

/// x in the forward pass; its gradient is treated as disconnected (stops backpropagation).
Var disconnected_grad(const Var& x);
/// x in the forward pass; its gradient is zero.
Var zero_grad(const Var& x);
/// x in the forward pass; the gradient flowing back through it is clipped to [lower, upper]
/// elementwise (Theano's theano.gradient.grad_clip). ValueError when lower > upper.
Var grad_clip(const Var& x, double lower, double upper);
/// x in the forward pass; the gradient flowing back through it is multiplied by `multiplier`
/// (Theano's theano.gradient.grad_scale).
Var grad_scale(const Var& x, double multiplier);

/// d y[i] / d x for a vector y of static length: a matrix (len(y), x.size) reshaped to
/// y.shape + x.shape. (A dynamic length needs scan, which Theon does not have yet.)
Var jacobian(const Var& y, const Var& x);
/// The Hessian of scalar `cost` with respect to vector `x` of static length.
Var hessian(const Var& cost, const Var& x);

/// The symbolic gradient disagreed with finite differences.
class GradientError : public Error {
  using Error::Error;
};

struct VerifyGradOptions {
  double eps = 1e-6;   // central-difference step (the points are converted to float64)
  double rtol = 1e-4;
  double atol = 1e-6;
  uint64_t seed = 42;  // for the random projection of the output
};

/// Checks the symbolic gradient of sum(fn(points) * R), for a random R, against central
/// finite differences in float64. Throws GradientError naming the input and the worst
/// element (its index, both values and the difference).
void verify_grad(const std::function<Var(const std::vector<Var>&)>& fn, const std::vector<Array>& points,
                 const VerifyGradOptions& options = {});

}  // namespace theon
