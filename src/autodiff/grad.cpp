// Reverse-mode symbolic differentiation over the graph, Theano's algorithm: walk the nodes
// that lie between the wrt variables and the cost in reverse topological order, ask each
// op for its L_op, and sum the contributions reaching each variable.
#include <theon/grad.hpp>

#include "autodiff/grad_ops.hpp"
#include "graph/function_graph.hpp"
#include "ops/elemwise.hpp"
#include "ops/make_op.hpp"
#include "ops/shape.hpp"
#include "ops/sum_to.hpp"

#include <theon/config.hpp>

#include <cmath>
#include <iostream>
#include <sstream>
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

namespace {
std::string number_text(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}
}  // namespace

void register_op_factories() {
  static const bool registered = [] {
    using OpPtr = std::shared_ptr<const graph::Op>;
    ops::register_op_factory(graph::OpKind::ZeroGrad,
                             [](ops::PropReader&) -> OpPtr { return std::make_shared<const GradientBlock>(true); });
    ops::register_op_factory(graph::OpKind::DisconnectedGrad,
                             [](ops::PropReader&) -> OpPtr { return std::make_shared<const GradientBlock>(false); });
    ops::register_op_factory(graph::OpKind::GradClip, [](ops::PropReader& p) -> OpPtr {
      const double lower = p.number("lower"), upper = p.number("upper");
      if (!(lower <= upper))
        throw ValueError("make_op(GradClip): lower " + number_text(lower) + " is above upper " + number_text(upper));
      return std::make_shared<const GradientTransform>(graph::OpKind::GradClip, lower, upper);
    });
    ops::register_op_factory(graph::OpKind::GradScale, [](ops::PropReader& p) -> OpPtr {
      return std::make_shared<const GradientTransform>(graph::OpKind::GradScale, p.number("multiplier"), 0.0);
    });
    return true;
  }();
  (void)registered;
}

graph::OpProps GradientTransform::props() const {
  if (kind_ == graph::OpKind::GradClip) return {{"lower", number_text(a_)}, {"upper", number_text(b_)}};
  return {{"multiplier", number_text(a_)}};
}

std::vector<VarPtr> GradientTransform::L_op(const Apply&, const std::vector<VarPtr>& output_grads) const {
  if (!output_grads[0]) return {nullptr};
  const VarPtr& g = output_grads[0];
  if (kind_ == graph::OpKind::GradClip)
    return {ops::elemwise(ops::ScalarOpId::Clip, {g, ops::literal(a_, false), ops::literal(b_, false)})};
  return {ops::elemwise(ops::ScalarOpId::Mul, {g, ops::literal(a_, false)})};
}

}  // namespace autodiff

namespace {

/// The dtype of a gradient of `x`: x's own when x is a float, floatX for integers and bools
/// (Theano: a gradient is never an integer).
DType grad_dtype(const graph::Variable& x) { return is_float(x.type.dtype) ? x.type.dtype : config().floatX.dtype(); }

VarPtr zeros_like(const VarPtr& x) {
  return ops::broadcast_like(ops::cast(ops::literal(0, false), grad_dtype(*x)), x);
}

bool is_elemwise(const Apply& node, ops::ScalarOpId id) {
  const auto* ew = graph::op_if<ops::Elemwise>(node.op());
  return ew && ew->scalar() == id;
}
bool is_elemwise_cast(const Apply& node) { return is_elemwise(node, ops::ScalarOpId::Cast); }

/// Theano seeds the gradient with ones_like(cost), so every gradient depends on all the inputs
/// of the cost: function([x], grad(3 * x, x)) does not call x unused. Theon's seed is the constant
/// 1 (rewrites see gz * 1); a gradient that lost some input variables of the cost gets an explicit
/// dependence on their sizes (ShapeOf reads no data: a scalar node per input and one switch,
/// only for such gradients: constant ones, or ones of linear terms). Which inputs each gradient
/// reaches is one pass over the gradients' graph (a bit set per variable), not one per gradient.
void keep_cost_inputs(std::vector<VarPtr>& grads, const std::vector<bool>& keep, const std::vector<VarPtr>& cost_inputs) {
  if (cost_inputs.empty()) return;
  const size_t words = (cost_inputs.size() + 63) / 64;
  using Bits = std::vector<uint64_t>;
  std::unordered_map<const graph::Variable*, size_t> index;
  for (size_t k = 0; k < cost_inputs.size(); ++k) index.emplace(cost_inputs[k].get(), k);
  std::unordered_map<const graph::Variable*, Bits> reach;
  auto bits_of = [&](const VarPtr& v) {
    if (v->owner) return reach.at(v.get());
    Bits b(words, 0);
    if (auto it = index.find(v.get()); it != index.end()) b[it->second / 64] |= uint64_t{1} << (it->second % 64);
    return b;
  };
  std::vector<VarPtr> roots;
  for (size_t i = 0; i < grads.size(); ++i)
    if (keep[i]) roots.push_back(grads[i]);
  for (const graph::ApplyPtr& node : graph::toposort(roots)) {
    Bits b(words, 0);
    for (const VarPtr& in : node->inputs()) {
      Bits ib = bits_of(in);
      for (size_t w = 0; w < words; ++w) b[w] |= ib[w];
    }
    for (int o = 0; o < node->num_outputs(); ++o) reach[node->output_raw(o)] = b;
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!keep[i]) continue;
    Bits have = bits_of(grads[i]);
    VarPtr dep;
    for (size_t k = 0; k < cost_inputs.size(); ++k) {
      if (have[k / 64] >> (k % 64) & 1) continue;
      VarPtr sz = ops::size_of(cost_inputs[k]);
      dep = dep ? ops::elemwise(ops::ScalarOpId::Add, {dep, sz}) : sz;
    }
    if (dep) grads[i] = ops::broadcast_like(grads[i], dep);
  }
}

}  // namespace

std::vector<Var> grad(const Var& cost, const std::vector<Var>& wrt, const GradOptions& options) {
  if (options.disconnected_inputs != "raise" && options.disconnected_inputs != "warn" &&
      options.disconnected_inputs != "ignore")
    throw ValueError("grad: disconnected_inputs must be raise, warn or ignore, got '" + options.disconnected_inputs + "'");
  std::unordered_map<const graph::Variable*, VarPtr> g;  // accumulated gradients
  // Variables whose gradient is known to be zero without a graph for it (the cost's when it is
  // an integer, and what reaches it only through integer-valued results).
  std::unordered_set<const graph::Variable*> zero;
  std::vector<VarPtr> roots;
  if (cost.defined()) {
    const VarPtr& c = cost.node();
    if (c->type.ndim() != 0)
      throw TypeError("grad: cost must be a scalar, but '" + c->label() + "' has type " + c->type.str() +
                      " (reduce it first, e.g. with tensor::sum or tensor::mean)");
    // An integer (or bool) cost is piecewise constant: its gradient is zero (Theano's answer),
    // reaching every variable it depends on through differentiable ops.
    if (is_float(c->type.dtype)) g[c.get()] = ops::cast(ops::literal(1, false), c->type.dtype);
    else zero.insert(c.get());
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
  // Integer and bool wrt variables are differentiated as if real-valued (Theano): their gradient
  // is a float, zero when they reach the cost only through integer-valued results.
  for (auto& w : wrt) {
    if (!w.defined()) throw ValueError("grad: an undefined Var in wrt");
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
    bool any = false, any_zero = false, all_discrete = true;
    for (int i = 0; i < node.num_outputs(); ++i) {
      auto f = g.find(node.output_raw(i));
      if (f != g.end()) {
        out_grads[i] = f->second;
        any = true;
      }
      any_zero = any_zero || zero.count(node.output_raw(i));
      all_discrete = all_discrete && !is_float(node.output_raw(i)->type.dtype);
    }
    if (!any && !any_zero) continue;
    if (!any || all_discrete) {
      // Integer-valued results are piecewise constant: zero gradient to every input they depend
      // on (Theano's rule), except through a shape, which does not depend on the values.
      if (graph::op_if<ops::ShapeOf>(node.op())) continue;
      for (auto& in : node.inputs())
        if (depends.count(in.get()) && !constants.count(in.get())) zero.insert(in.get());
      continue;
    }
    std::vector<VarPtr> in_grads;
    try {
      in_grads = node.op().L_op(node, out_grads);
    } catch (NotImplementedError& e) {
      e.add_context("while differentiating " + node.describe());
      throw;
    }
    in_grads.resize(node.inputs().size());
    for (size_t i = 0; i < node.inputs().size(); ++i) {
      const VarPtr& in = node.input(static_cast<int>(i));
      if (constants.count(in.get()) || !depends.count(in.get())) continue;
      // A cast of an integer to a float passes the gradient to the integer as if it were real
      // (the ops' L_op give integer inputs none).
      if (!in_grads[i] && !is_float(in->type.dtype) && is_elemwise_cast(node)) in_grads[i] = out_grads[0];
      if (!in_grads[i]) {
        // switch's condition: zero, as in Theano (an index or a shape stays disconnected).
        if (i == 0 && is_elemwise(node, ops::ScalarOpId::Switch)) zero.insert(in.get());
        continue;
      }
      if (in_grads[i]->type.ndim() != in->type.ndim())
        throw InternalError(node.describe() + ": gradient of input " + std::to_string(i) + " has rank " +
                            std::to_string(in_grads[i]->type.ndim()) + ", expected " + std::to_string(in->type.ndim()));
      VarPtr gi = in_grads[i];
      if (is_float(in->type.dtype) || !is_float(gi->type.dtype)) gi = ops::cast(gi, grad_dtype(*in));
      auto& slot = g[in.get()];
      slot = slot ? ops::elemwise(ops::ScalarOpId::Add, {slot, gi}) : gi;
    }
  }

  std::vector<VarPtr> cost_inputs;
  if (cost.defined())
    for (const VarPtr& leaf : graph::graph_leaves({cost.node()}))
      if (leaf->kind == graph::VarKind::Input) cost_inputs.push_back(leaf);
  std::vector<VarPtr> out;
  std::vector<bool> keep;  // gradients that must depend on every input of the cost
  for (auto& w : wrt) {
    auto f = g.find(w.node().get());
    if (f != g.end()) {
      out.push_back(f->second);
      keep.push_back(true);
      continue;
    }
    if (cost.defined() && w.node() == cost.node()) {  // d n / d n of an integer cost: 1, as a float
      out.push_back(ops::broadcast_like(ops::cast(ops::literal(1, false), grad_dtype(*w.node())), w.node()));
      keep.push_back(false);
      continue;
    }
    if (zero.count(w.node().get())) {
      out.push_back(zeros_like(w.node()));
      keep.push_back(true);
      continue;
    }
    out.push_back(zeros_like(w.node()));
    keep.push_back(false);
    if (options.disconnected_inputs == "ignore") continue;
    bool used = false;  // an input of a node between the wrt variables and the cost
    for (const Apply* node : relevant)
      for (auto& in : node->inputs()) used = used || in.get() == w.node().get();
    std::string msg = used
                          ? "grad: the cost depends on '" + w.node()->label() + "' (" + w.node()->type.str() +
                                ") only through operations that have no gradient for it (indices, shapes, comparisons)"
                          : "grad: the cost does not depend on '" + w.node()->label() + "' (" + w.node()->type.str() + ")";
    if (options.disconnected_inputs == "raise")
      throw ValueError(msg + "; pass disconnected_inputs=\"ignore\" or \"warn\" to get zeros");
    std::cerr << "theon: warning: " << msg << "; its gradient is zero\n";  // warn
  }
  keep_cost_inputs(out, keep, cost_inputs);
  return std::vector<Var>(out.begin(), out.end());
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

Var grad_clip(const Var& x, double lower, double upper) {
  if (!x.defined()) throw ValueError("grad_clip: undefined Var");
  if (std::isnan(lower) || std::isnan(upper) || lower > upper)
    throw ValueError("grad_clip(" + x.node()->label() + ", " + autodiff::number_text(lower) + ", " +
                     autodiff::number_text(upper) + "): the lower bound must not exceed the upper bound");
  auto op = std::make_shared<autodiff::GradientTransform>(graph::OpKind::GradClip, lower, upper);
  return Var(graph::make_output(op, {x.node()}, x.node()->type));
}

Var grad_scale(const Var& x, double multiplier) {
  if (!x.defined()) throw ValueError("grad_scale: undefined Var");
  if (!std::isfinite(multiplier))
    throw ValueError("grad_scale(" + x.node()->label() + ", " + autodiff::number_text(multiplier) +
                     "): the multiplier must be finite");
  auto op = std::make_shared<autodiff::GradientTransform>(graph::OpKind::GradScale, multiplier, 0);
  return Var(graph::make_output(op, {x.node()}, x.node()->type));
}

}  // namespace theon
