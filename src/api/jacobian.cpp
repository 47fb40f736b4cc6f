// jacobian and hessian: built from grad() and the public tensor:: builders, so they sit
// with the public API (api layer), above autodiff.
#include <theon/grad.hpp>
#include <theon/tensor.hpp>

#include "graph/node.hpp"

namespace theon {

Var jacobian(const Var& y, const Var& x) {
  if (!y.defined() || !x.defined()) throw ValueError("jacobian: undefined Var");
  GradOptions opt;
  opt.disconnected_inputs = "ignore";
  if (y.ndim() == 0) return grad(y, x, opt);
  if (y.ndim() != 1)
    throw ShapeError("jacobian: y must be a scalar or a vector, got '" + y.node()->label() + "' (" + y.type_str() + ")");
  const int64_t n = y.static_shape()[0];
  if (n < 0)
    throw NotImplementedError("jacobian: '" + y.node()->label() + "' (" + y.type_str() +
                              ") has no static length; a dynamic length needs scan, which Theon does not have yet "
                              "(declare the length, e.g. tensor::tensor(dtype, {n}))");
  if (n == 0) throw ShapeError("jacobian: '" + y.node()->label() + "' is empty");
  std::vector<Var> rows;
  for (int64_t i = 0; i < n; ++i) rows.push_back(grad(y[Index(i)], x, opt));
  return tensor::stack(rows, 0);
}

Var hessian(const Var& cost, const Var& x) {
  if (!x.defined()) throw ValueError("hessian: undefined Var");
  if (x.ndim() != 1) throw ShapeError("hessian: x must be a vector, got '" + x.node()->label() + "' (" + x.type_str() + ")");
  GradOptions opt;
  opt.disconnected_inputs = "ignore";
  Var g = grad(cost, x, opt);
  if (g.static_shape()[0] < 0 && x.static_shape()[0] >= 0)
    g = tensor::reshape(g, std::vector<int64_t>{x.static_shape()[0]});
  return jacobian(g, x);
}

}  // namespace theon
