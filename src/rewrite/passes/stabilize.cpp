// stabilize: Theano's stabilization rewrites for softmax, log-softmax and cross-entropy, so
// that a probability underflowing to 0 gives neither an inf/NaN cost nor a NaN gradient. A
// table of named rules (one row per rewrite, at the bottom of this file) run to a fixed point
// by LocalRewriter (rewrite/local_rewrite.hpp). Every replacement keeps the exact static type
// of what it replaces.
//
//   exp(z) / sum(exp(z), axis, keepdims)       -> softmax(z, axis)        (Theano's softmax_simplifier)
//   softmax(x - max(x, axis, keepdims), axis)  -> softmax(x, axis)        (also log_softmax; the max may be
//                                                                          under disconnected_grad / zero_grad)
//   log(softmax(x, axis))                      -> log_softmax(x, axis)    (local_logsoftmax)
//   the gradient of the hand-written softmax   -> softmax's gradient      (g_p being the gradient reaching p)
//     (g_p / s + broadcast(sum_to(-(g_p * e) / (s * s), s))) * e  -> (g_p - sum(g_p * sm, axis, keepdims)) * sm
//   softmax's gradient of log(softmax)         -> log_softmax's gradient  (local_logsoftmax_grad)
//     (a / sm - sum(a / sm * sm, axis, keepdims)) * sm                    -> a - sum(a, axis, keepdims) * sm
//   softmax's gradient of categorical_crossentropy(sm, labels) -> SoftmaxCrossentropyGrad(g, sm, labels)
//   categorical_crossentropy(softmax(x), labels) -> SoftmaxCrossentropy(x, labels)   (integer labels;
//                                              crossentropy_to_crossentropy_with_softmax, match.cpp)
//
// The gradient rules are needed because grad() builds the gradient before any rewrite: the
// forward rewrites make the cost finite, but the gradient graph still divides by the
// probability (log's gradient a / p) and multiplies by it again (softmax's gradient), inf * 0.
// The rewritten gradient is the same value wherever the original is finite. A softmax fused
// with its crossentropy (SoftmaxCrossentropy's output 1) counts as a softmax over axis 1.
//
// Runs in fast_run and fast_compile (Theano runs local_logsoftmax even in fast_compile),
// after canonicalize (which may merge the dimshuffle chains of a gradient) and before
// specialize (whose softmax_crossentropy fusion then sees the softmax the simplifier made)
// and fusion (which would hide the elementwise patterns inside Composites).
#include "autodiff/grad_ops.hpp"
#include "graph/op.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/nnet.hpp"
#include "ops/nnet_fused.hpp"
#include "ops/reduce.hpp"
#include "ops/subtensor.hpp"
#include "ops/sum_to.hpp"
#include "rewrite/local_rewrite.hpp"
#include "rewrite/passes/match.hpp"
#include "rewrite/passes/passes.hpp"

#include <theon/error.hpp>

#include <optional>

namespace theon::rewrite {
namespace {

using graph::Apply;
using graph::FunctionGraph;
using graph::OpKind;
using graph::VarPtr;
using ops::ScalarOpId;

constexpr int kMaxSweeps = 8;

VarPtr mul(const VarPtr& a, const VarPtr& b) { return ops::elemwise(ScalarOpId::Mul, {a, b}); }
VarPtr sub(const VarPtr& a, const VarPtr& b) { return ops::elemwise(ScalarOpId::Sub, {a, b}); }
VarPtr sum_keepdims(const VarPtr& v, int axis) { return ops::reduce(ops::ReduceKind::Sum, v, std::vector<int>{axis}, true); }

/// The axis when `v` is a softmax (not log): a Softmax node's output, or the softmax output
/// of a SoftmaxCrossentropy (axis 1).
std::optional<int> softmax_axis(const VarPtr& v) {
  if (!v->owner) return std::nullopt;
  if (v->owner->op().kind() == OpKind::Softmax) return static_cast<const ops::Softmax&>(v->owner->op()).axis();
  if (v->owner->op().kind() == OpKind::SoftmaxCrossentropy && v->owner->output_raw(1) == v.get()) return 1;
  return std::nullopt;
}

/// `v` without the disconnected_grad / zero_grad nodes around it (they pass values unchanged).
VarPtr through_grad_blocks(VarPtr v) {
  while (v->owner && (v->owner->op().kind() == OpKind::DisconnectedGrad || v->owner->op().kind() == OpKind::ZeroGrad))
    v = v->owner->input(0);
  return v;
}

/// `v` as reduce(kind, x, axis, keepdims=true) over one axis: the reduction's node put back
/// to x's rank by a DimShuffle with 'x' at `axis` (how the keepdims builder writes it, and
/// sum(x, axis).dimshuffle(0, 'x') for a matrix). Returns x and sets `axis`, else null.
/// With `blocks`, gradient blocks may sit around the reduction or its DimShuffle.
VarPtr keepdims_reduce_input(VarPtr v, ops::ReduceKind kind, int* axis, bool blocks = false) {
  if (blocks) v = through_grad_blocks(v);
  if (!v->owner || v->owner->op().kind() != OpKind::DimShuffle) return nullptr;
  const auto& ds = static_cast<const ops::DimShuffle&>(v->owner->op());
  const VarPtr r = blocks ? through_grad_blocks(v->owner->input(0)) : v->owner->input(0);
  if (!r->owner || r->owner->op().kind() != ops::reduce_op_kind(kind)) return nullptr;
  const auto& red = static_cast<const ops::Reduce&>(r->owner->op());
  const VarPtr& x = r->owner->input(0);
  if (red.axes().size() != 1 || red.out_dtype() != x->type.dtype) return nullptr;
  const int ax = red.axes()[0];
  const std::vector<int>& p = ds.pattern();
  if (static_cast<int>(p.size()) != x->type.ndim()) return nullptr;
  for (int d = 0, k = 0; d < x->type.ndim(); ++d)
    if (p[d] != (d == ax ? -1 : k++)) return nullptr;
  *axis = ax;
  return x;
}

/// Looks through a chain of DimShuffle nodes from `v`: `base` when the chain only drops and
/// re-adds size-1 dims, so that `v` holds `base`'s values in `base`'s shape.
bool same_values_view(const VarPtr& v, const VarPtr& base) {
  const graph::Variable* p = v.get();
  std::vector<int> pattern(v->type.ndim());
  for (int i = 0; i < v->type.ndim(); ++i) pattern[i] = i;  // positions in *p
  while (p != base.get()) {
    if (!p->owner || p->owner->op().kind() != OpKind::DimShuffle) return false;
    const auto& ds = static_cast<const ops::DimShuffle&>(p->owner->op());
    for (int& q : pattern) q = q < 0 ? -1 : ds.pattern()[q];
    p = p->owner->input(0).get();
  }
  if (static_cast<int>(pattern.size()) != base->type.ndim()) return false;
  for (int i = 0; i < base->type.ndim(); ++i)
    if (pattern[i] != i && !(pattern[i] < 0 && base->type.dims[i] == 1)) return false;
  return true;
}

bool same_runtime_shape(const VarPtr& a, const VarPtr& b);

/// Strips SumTo nodes whose target has `like`'s shape: returns their gradient input (or `v`
/// itself). `stripped` tells whether one was stripped.
VarPtr through_sum_to(const VarPtr& v, const VarPtr& like, bool* stripped) {
  *stripped = false;
  VarPtr r = v;
  while (r->owner && r->owner->op().kind() == OpKind::SumTo && same_runtime_shape(r->owner->input(1), like)) {
    r = r->owner->input(0);
    *stripped = true;
  }
  return r;
}

/// `v` as shape(x)[axis] (a constant index): x, else null.
const graph::Variable* dim_of(const VarPtr& v, int axis) {
  if (!v->owner || v->owner->op().kind() != OpKind::Subtensor) return nullptr;
  const ops::IndexSpec& spec = static_cast<const ops::Subtensor&>(v->owner->op()).spec();
  if (spec.size() != 1 || spec[0].is_slice || spec[0].start.kind != ops::IndexEntry::Kind::Const ||
      spec[0].start.value != axis)
    return nullptr;
  const VarPtr& shape = v->owner->input(0);
  if (!shape->owner || shape->owner->op().kind() != OpKind::Shape) return nullptr;
  return shape->owner->input(0).get();
}

/// The variable whose run-time shape `v` has by construction: through ops whose output has
/// one input's shape (unary elementwise ops, softmax, log_softmax, SumTo's target, the
/// gradients' label and subtensor ops, the fused softmax, alloc(c, shape(x)[0], ...,
/// shape(x)[n-1])).
const graph::Variable* shape_root(const VarPtr& v) {
  const graph::Variable* p = v.get();
  while (p->owner) {
    const Apply& n = *p->owner;
    const graph::Variable* next = nullptr;
    switch (n.op().kind()) {
      case OpKind::Elemwise:
        if (n.inputs().size() == 1) next = n.input(0).get();
        break;
      case OpKind::Softmax: case OpKind::LogSoftmax: case OpKind::IncSubtensor: case OpKind::AdvancedIncSubtensor1:
        next = n.input(0).get();
        break;
      case OpKind::SumTo: case OpKind::CrossentropyGrad: case OpKind::LabelScatter: case OpKind::SoftmaxCrossentropyGrad:
        next = n.input(1).get();
        break;
      case OpKind::SoftmaxCrossentropy:  // (loss, softmax of x)
        if (n.output_raw(1) == p) next = n.input(0).get();
        break;
      case OpKind::Alloc: {
        const int nd = static_cast<int>(n.inputs().size()) - 1;
        next = nd == p->type.ndim() && nd > 0 ? dim_of(n.input(1), 0) : nullptr;
        for (int d = 1; next && d < nd; ++d)
          if (dim_of(n.input(d + 1), d) != next) next = nullptr;
        break;
      }
      default: break;
    }
    if (!next || next->type.ndim() != p->type.ndim()) break;
    p = next;
  }
  return p;
}

/// Do `a` and `b` have the same shape at run time, whatever it is?
bool same_runtime_shape(const VarPtr& a, const VarPtr& b) {
  if (a->type.ndim() != b->type.ndim()) return false;
  bool known = true;
  for (int d = 0; d < a->type.ndim(); ++d) known = known && a->type.dims[d] >= 0 && a->type.dims[d] == b->type.dims[d];
  return known || shape_root(a) == shape_root(b);
}

/// `v` as an array of `like`'s run-time shape, the way the gradient `sum_to(v / like, like)`
/// sees it: broadcast up to like's shape, then (with `sum_back`) summed down to it. `v`
/// itself where the shapes are provably equal.
VarPtr spread_like(const VarPtr& v, const VarPtr& like, bool sum_back) {
  if (same_runtime_shape(v, like)) return v;
  VarPtr b = ops::broadcast_like(v, like);
  return sum_back ? ops::sum_to(b, like) : b;
}

/// The softmax(z, axis) the graph already has (the simplifier's, maybe fused with its
/// crossentropy), else a new one.
VarPtr softmax_in_graph(const FunctionGraph& fg, const VarPtr& z, int axis) {
  for (const auto& [client, idx] : fg.clients(z.get())) {
    if (!client || idx != 0) continue;
    for (int o = 0; o < client->num_outputs(); ++o)
      if (softmax_axis(client->output(o)) == axis) return client->output(o);
  }
  return ops::softmax(z, axis, false);
}

// ---- the rules: one function per row of the table below ----

/// exp(z) / sum(exp(z), axis, keepdims) -> softmax(z, axis)
VarPtr softmax_simplifier(FunctionGraph&, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::TrueDiv)) return nullptr;
  const VarPtr &e = node.input(0), &s = node.input(1);
  const Apply* exp = elemwise_owner(e, ScalarOpId::Exp);
  if (!exp) return nullptr;
  int axis = -1;
  if (keepdims_reduce_input(s, ops::ReduceKind::Sum, &axis) != e) return nullptr;
  const VarPtr& z = exp->input(0);
  if (!is_float(z->type.dtype)) return nullptr;
  return same_type(ops::softmax(z, axis, false), *node.output_raw(0));
}

/// softmax(x - max(x, axis, keepdims), axis) -> softmax(x, axis), and the same for
/// log_softmax: softmax subtracts the lane's maximum itself (the shifted lane's maximum is 0),
/// so the values are the same. The max may be under disconnected_grad / zero_grad.
VarPtr softmax_of_max_shift(FunctionGraph&, Apply& node) {
  const auto& sm = static_cast<const ops::Softmax&>(node.op());
  const Apply* shift = elemwise_owner(node.input(0), ScalarOpId::Sub);
  if (!shift) return nullptr;
  const VarPtr& x = shift->input(0);
  int axis = -1;
  if (keepdims_reduce_input(shift->input(1), ops::ReduceKind::Max, &axis, /*blocks=*/true) != x || axis != sm.axis())
    return nullptr;
  if (!is_float(x->type.dtype)) return nullptr;
  return same_type(ops::softmax(x, sm.axis(), sm.is_log()), *node.output_raw(0));
}

/// log(softmax(x, axis)) -> log_softmax(x, axis)
VarPtr log_softmax(FunctionGraph&, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Log)) return nullptr;
  const VarPtr& in = node.input(0);
  const std::optional<int> axis = softmax_axis(in);
  if (!axis) return nullptr;
  return same_type(ops::softmax(in->owner->input(0), *axis, /*log=*/true), *node.output_raw(0));
}

/// The gradient grad() builds for p = exp(z) / s, s = sum(exp(z), axis, keepdims), at z:
/// (g_e) * e with e = exp(z) and g_e = div(D, s) + broadcast(sum_to(-(D * e) / (s * s), s))
/// (D the gradient reaching p; sum_to to e and DimShuffle pairs around the second term) ->
/// (D - sum(D * sm, axis, keepdims)) * sm, sm = softmax(z, axis): softmax's own gradient,
/// which log_softmax_grad and softmax_crossentropy_grad then make stable.
VarPtr softmax_grad_simplifier(FunctionGraph& fg, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Mul)) return nullptr;
  for (int i = 0; i < 2; ++i) {
    const VarPtr &e = node.input(i), &ge = node.input(1 - i);
    const Apply* exp = elemwise_owner(e, ScalarOpId::Exp);
    const Apply* add = elemwise_owner(ge, ScalarOpId::Add);
    if (!exp || !add) continue;
    for (int j = 0; j < 2; ++j) {
      // First term: sum_to(D / s, e).
      bool stripped = false;
      const Apply* div = elemwise_owner(through_sum_to(add->input(j), e, &stripped), ScalarOpId::TrueDiv);
      if (!div) continue;
      const VarPtr &d = div->input(0), &s = div->input(1);
      int axis = -1;
      if (keepdims_reduce_input(s, ops::ReduceKind::Sum, &axis) != e) continue;
      // Second term: switch(1, view of sum_to(-(D * e) / (s * s), s), e), Sum's gradient.
      const Apply* bcast = elemwise_owner(add->input(1 - j), ScalarOpId::Switch);
      if (!bcast || !is_constant_all(bcast->input(0), 1) || bcast->input(2) != e) continue;
      VarPtr view = bcast->input(1);
      while (view->owner && view->owner->op().kind() == OpKind::DimShuffle) view = view->owner->input(0);
      const VarPtr g_s = view;
      if (!same_values_view(bcast->input(1), g_s)) continue;
      const Apply* neg = elemwise_owner(through_sum_to(g_s, s, &stripped), ScalarOpId::Neg);
      if (!neg) continue;
      const Apply* quotient = elemwise_owner(neg->input(0), ScalarOpId::TrueDiv);
      if (!quotient) continue;
      const Apply* num = elemwise_owner(quotient->input(0), ScalarOpId::Mul);
      const Apply* den = elemwise_owner(quotient->input(1), ScalarOpId::Mul);
      if (!num || !den || den->input(0) != s || den->input(1) != s) continue;
      if (!((num->input(0) == d && num->input(1) == e) || (num->input(0) == e && num->input(1) == d))) continue;
      const VarPtr& z = exp->input(0);
      if (!is_float(z->type.dtype)) continue;
      const VarPtr sm = softmax_in_graph(fg, z, axis);
      const VarPtr gz = spread_like(d, e, true);
      return same_type(mul(sub(gz, sum_keepdims(mul(gz, sm), axis)), sm), *node.output_raw(0));
    }
  }
  return nullptr;
}

/// Softmax's gradient as Softmax::L_op writes it, (gz - sum(gz * sm, axis, keepdims)) * sm
/// (either order of each product): sets gz and sm and returns the axis, else nullopt.
std::optional<int> match_softmax_grad(const Apply& node, VarPtr* gz, VarPtr* sm) {
  if (!elemwise_is(node, ScalarOpId::Mul)) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const VarPtr& s = node.input(i);
    const std::optional<int> sm_axis = softmax_axis(s);
    const Apply* diff = elemwise_owner(node.input(1 - i), ScalarOpId::Sub);
    if (!sm_axis || !diff) continue;
    const VarPtr& g = diff->input(0);
    int axis = -1;
    const VarPtr summed = keepdims_reduce_input(diff->input(1), ops::ReduceKind::Sum, &axis);
    const Apply* prod = summed ? elemwise_owner(summed, ScalarOpId::Mul) : nullptr;
    if (!prod || axis != *sm_axis) continue;
    if (!((prod->input(0) == g && prod->input(1) == s) || (prod->input(0) == s && prod->input(1) == g))) continue;
    *gz = g;
    *sm = s;
    return axis;
  }
  return std::nullopt;
}

/// Softmax's gradient of log(softmax): gz = sum_to(a / sm, sm) (the gradient log(sm) sends
/// back) -> a - sum(a, axis, keepdims) * sm, log_softmax's gradient: no division by the
/// probability, finite where it underflows to 0 (Theano's local_logsoftmax_grad).
VarPtr log_softmax_grad(FunctionGraph&, Apply& node) {
  VarPtr gz, sm;
  const std::optional<int> axis = match_softmax_grad(node, &gz, &sm);
  if (!axis) return nullptr;
  bool summed = false;
  const Apply* div = elemwise_owner(through_sum_to(gz, sm, &summed), ScalarOpId::TrueDiv);
  if (!div || div->input(1) != sm) return nullptr;
  const VarPtr a = spread_like(div->input(0), sm, summed);
  if (a->type.dtype != sm->type.dtype) return nullptr;
  return same_type(sub(a, mul(sum_keepdims(a, *axis), sm)), *node.output_raw(0));
}

/// Softmax's gradient of categorical_crossentropy(sm, labels): gz = CrossentropyGrad(g, sm,
/// labels) -> SoftmaxCrossentropyGrad(g, sm, labels), what Softmax::L_op builds when it sees
/// that pair (here the softmax was written by hand and made by the simplifier).
VarPtr softmax_crossentropy_grad(FunctionGraph&, Apply& node) {
  VarPtr gz, sm;
  const std::optional<int> axis = match_softmax_grad(node, &gz, &sm);
  if (axis != 1 || sm->type.ndim() != 2) return nullptr;
  bool summed = false;
  const VarPtr g = through_sum_to(gz, sm, &summed);
  if (!g->owner || g->owner->op().kind() != OpKind::CrossentropyGrad || g->owner->input(1) != sm) return nullptr;
  return same_type(ops::softmax_crossentropy_grad(g->owner->input(0), sm, g->owner->input(2)), *node.output_raw(0));
}

const LocalRewriter& stabilizer() {
  using K = graph::OpKind;
  static const LocalRewriter rewriter(
      "stabilize",
      {
          // {name, the kinds it triggers on, the rewrite}: one row per rewrite
          {"softmax_simplifier", {K::Elemwise}, on_output0(softmax_simplifier)},
          {"softmax_of_max_shift", {K::Softmax, K::LogSoftmax}, on_output0(softmax_of_max_shift)},
          {"log_softmax", {K::Elemwise}, on_output0(log_softmax)},
          {"softmax_grad_simplifier", {K::Elemwise}, on_output0(softmax_grad_simplifier)},
          {"log_softmax_grad", {K::Elemwise}, on_output0(log_softmax_grad)},
          {"softmax_crossentropy_grad", {K::Elemwise}, on_output0(softmax_crossentropy_grad)},
          {"softmax_crossentropy", {K::CategoricalCrossentropy}, softmax_crossentropy_fusion},
      },
      kMaxSweeps);
  return rewriter;
}

}  // namespace

bool stabilize_pass(FunctionGraph& fgraph) { return stabilizer().run(fgraph).changed; }

}  // namespace theon::rewrite
