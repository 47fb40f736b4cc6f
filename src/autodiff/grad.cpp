// Reverse-mode symbolic differentiation over the graph, Theano's algorithm: walk the nodes
// that lie between the wrt variables and the cost in reverse topological order, ask each
// op for its L_op, and sum the contributions reaching each variable.
#include <theon/grad.hpp>
#include <theon/tensor.hpp>

#include "autodiff/grad_ops.hpp"
#include "graph/function_graph.hpp"
#include "ops/elemwise.hpp"
#include "ops/sum_to.hpp"

#include <iostream>
#include <unordered_map>
#include <unordered_set>

namespace theon {

using graph::Apply;
using graph::VarPtr;

namespace autodiff {

std::vector<VarPtr> GradientBlock::L_op(const Apply&, const std::vector<VarPtr>& output_grads) const {
  if (!zero_ || !output_grads[0]) return {nullptr};
  return {ops::elemwise(ops::ScalarOpId::Mul, {output_grads[0], ops::literal(0, false)})};
}

}  // namespace autodiff

namespace {

VarPtr zeros_like(const VarPtr& x) {
  return ops::broadcast_like(ops::cast(ops::literal(0, false), x->type.dtype), x);
}

}  // namespace

std::vector<Var> grad(const Var& cost, const std::vector<Var>& wrt, const GradOptions& options) {
  if (options.disconnected_inputs != "raise" && options.disconnected_inputs != "warn" &&
      options.disconnected_inputs != "ignore")
    throw ValueError("grad: disconnected_inputs must be raise, warn or ignore, got '" + options.disconnected_inputs + "'");
  std::unordered_map<const graph::Variable*, VarPtr> g;  // accumulated gradients
  std::vector<VarPtr> roots;
  if (cost.defined()) {
    const VarPtr& c = cost.node();
    if (c->type.ndim() != 0)
      throw TypeError("grad: cost must be a scalar, but '" + c->label() + "' has type " + c->type.str() +
                      " (reduce it first, e.g. with tensor::sum or tensor::mean)");
    if (!is_float(c->type.dtype))
      throw TypeError("grad: cost '" + c->label() + "' has dtype " + std::string(dtype_name(c->type.dtype)) +
                      "; only float costs are differentiable");
    g[c.get()] = ops::cast(ops::literal(1, false), c->type.dtype);
    roots.push_back(c);
  } else if (options.known_grads.empty()) {
    throw ValueError("grad: no cost and no known_grads given");
  }
  for (auto& [v, gv] : options.known_grads) {
    if (!v.defined() || !gv.defined()) throw ValueError("grad: known_grads has an undefined Var");
    if (gv.ndim() != v.ndim())
      throw TypeError("grad: known gradient of '" + v.node()->label() + "' has rank " + std::to_string(gv.ndim()) +
                      ", expected " + std::to_string(v.ndim()));
    auto& slot = g[v.node().get()];
    slot = slot ? ops::elemwise(ops::ScalarOpId::Add, {slot, gv.node()}) : gv.node();
    roots.push_back(v.node());
  }
  std::unordered_set<const graph::Variable*> constants, wrt_set;
  for (auto& c : options.consider_constant)
    if (c.defined()) constants.insert(c.node().get());
  for (auto& w : wrt) {
    if (!w.defined()) throw ValueError("grad: an undefined Var in wrt");
    if (!is_float(w.dtype()))
      throw TypeError("grad: cannot differentiate with respect to '" + w.node()->label() + "' of dtype " +
                      std::string(dtype_name(w.dtype())) + " (integer and boolean variables are not differentiable)");
    wrt_set.insert(w.node().get());
  }

  // Nodes on a path from some wrt variable to a root.
  std::vector<graph::ApplyPtr> order = graph::toposort(roots);
  std::unordered_set<const graph::Variable*> depends(wrt_set);
  std::unordered_set<const Apply*> relevant;
  for (auto& node : order) {
    if (node->num_outputs() && constants.count(node->output_raw(0))) continue;
    bool any = false;
    for (auto& in : node->inputs()) any = any || (depends.count(in.get()) && !constants.count(in.get()));
    if (!any) continue;
    relevant.insert(node.get());
    for (int i = 0; i < node->num_outputs(); ++i) depends.insert(node->output_raw(i));
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Apply& node = **it;
    if (!relevant.count(&node)) continue;
    std::vector<VarPtr> out_grads(node.num_outputs());
    bool any = false;
    for (int i = 0; i < node.num_outputs(); ++i) {
      auto f = g.find(node.output_raw(i));
      if (f != g.end()) {
        out_grads[i] = f->second;
        any = true;
      }
    }
    if (!any) continue;
    std::vector<VarPtr> in_grads;
    try {
      in_grads = node.op().L_op(node, out_grads);
    } catch (NotImplementedError& e) {
      e.add_context("while differentiating " + node.describe());
      throw;
    }
    for (size_t i = 0; i < node.inputs().size() && i < in_grads.size(); ++i) {
      const VarPtr& in = node.input(static_cast<int>(i));
      if (!in_grads[i] || constants.count(in.get()) || !depends.count(in.get())) continue;
      if (in_grads[i]->type.ndim() != in->type.ndim())
        throw InternalError(node.describe() + ": gradient of input " + std::to_string(i) + " has rank " +
                            std::to_string(in_grads[i]->type.ndim()) + ", expected " + std::to_string(in->type.ndim()));
      VarPtr gi = ops::cast(in_grads[i], in->type.dtype);
      auto& slot = g[in.get()];
      slot = slot ? ops::elemwise(ops::ScalarOpId::Add, {slot, gi}) : gi;
    }
  }

  std::vector<Var> result;
  for (auto& w : wrt) {
    auto f = g.find(w.node().get());
    if (f != g.end()) {
      result.push_back(Var(f->second));
      continue;
    }
    std::string msg = "grad: the cost does not depend on '" + w.node()->label() + "' (" + w.node()->type.str() + ")";
    if (options.disconnected_inputs == "raise")
      throw ValueError(msg + "; pass disconnected_inputs=\"ignore\" or \"warn\" to get zeros");
    if (options.disconnected_inputs == "warn") std::cerr << "theon: warning: " << msg << "; its gradient is zero\n";
    result.push_back(Var(zeros_like(w.node())));
  }
  return result;
}

Var grad(const Var& cost, const Var& wrt, const GradOptions& options) { return grad(cost, std::vector<Var>{wrt}, options)[0]; }

std::vector<Var> grad(const Var& cost, std::initializer_list<Var> wrt, const GradOptions& options) {
  return grad(cost, std::vector<Var>(wrt), options);
}

Var disconnected_grad(const Var& x) {
  if (!x.defined()) throw ValueError("disconnected_grad: undefined Var");
  return Var(graph::make_output(std::make_shared<autodiff::GradientBlock>(false), {x.node()}, x.node()->type));
}

Var zero_grad(const Var& x) {
  if (!x.defined()) throw ValueError("zero_grad: undefined Var");
  return Var(graph::make_output(std::make_shared<autodiff::GradientBlock>(true), {x.node()}, x.node()->type));
}

}  // namespace theon

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
