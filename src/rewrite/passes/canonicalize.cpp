// canonicalize: local algebraic simplifications applied to a fixed point (repeated sweeps in
// topological order, at most kMaxSweeps): a table of named rules (one row per rewrite, at the
// bottom of this file) run by LocalRewriter (rewrite/local_rewrite.hpp). Every replacement
// keeps the exact static type of the variable it replaces (dtype, rank and dims); a rule
// whose result would differ (a constant that broadcast x to a larger shape, an integer input
// promoted to float) does not fire.
//
// log(softmax(x)) -> log_softmax(x) is in stabilize.cpp (it runs in fast_compile too).
//
// Runs after merge and constant_fold (folded constants expose x * 1, x + 0) and before stabilize, specialize, fusion and inplace (those match plain Elemwise nodes
// and the simplified graph; inplace must see the final nodes).
//
//   x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1  -> x     (constants of any dtype, all elements equal)
//   neg(neg(x))                                -> x
//   log(exp(x))                                -> x     (exp(log(x)) is not exact: left alone)
//   log(sigmoid(x))                            -> -softplus(-x)
//   log(1 - sigmoid(x))                        -> -softplus(x)
//   dimshuffle(dimshuffle(x))                  -> one dimshuffle, or x when it is the identity
//   reshape(reshape(x, s1), s2)                -> reshape(x, s2)  (also through a flatten)
//   sum(broadcast_to(s, shape)) over all axes  -> s * size(shape) (s a 0-d variable)
//   sum_to(g, like)                            -> g     (static shapes equal, every dim known)
#include "graph/op.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/reduce.hpp"
#include "ops/shape.hpp"
#include "rewrite/local_rewrite.hpp"
#include "rewrite/passes/match.hpp"
#include "rewrite/passes/passes.hpp"
#include "util/dispatch.hpp"

#include <theon/error.hpp>

namespace theon::rewrite {
namespace {

using graph::Apply;
using graph::FunctionGraph;
using graph::VarPtr;
using ops::ScalarOpId;

constexpr int kMaxSweeps = 16;

// ---- the rules: one function per row of the table below ----

/// x * 1, 1 * x -> x
VarPtr mul_by_one(FunctionGraph&, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Mul)) return nullptr;
  const auto& in = node.inputs();
  if (is_constant_all(in[1], 1))
    if (auto r = same_type(in[0], *node.output_raw(0))) return r;
  if (is_constant_all(in[0], 1)) return same_type(in[1], *node.output_raw(0));
  return nullptr;
}

/// x + 0, 0 + x -> x
VarPtr add_zero(FunctionGraph&, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Add)) return nullptr;
  const auto& in = node.inputs();
  if (is_constant_all(in[1], 0))
    if (auto r = same_type(in[0], *node.output_raw(0))) return r;
  if (is_constant_all(in[0], 0)) return same_type(in[1], *node.output_raw(0));
  return nullptr;
}

/// x - 0 -> x
VarPtr sub_zero(FunctionGraph&, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Sub)) return nullptr;
  return is_constant_all(node.input(1), 0) ? same_type(node.input(0), *node.output_raw(0)) : nullptr;
}

/// x / 1 -> x
VarPtr div_by_one(FunctionGraph&, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::TrueDiv)) return nullptr;
  return is_constant_all(node.input(1), 1) ? same_type(node.input(0), *node.output_raw(0)) : nullptr;
}

/// maximum(x, 0), maximum(0, x) -> relu(x): one kernel the backends know (and a GEMM epilogue)
VarPtr maximum_zero_is_relu(FunctionGraph&, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Maximum)) return nullptr;
  const auto& in = node.inputs();
  const graph::Variable& out = *node.output_raw(0);
  for (int x : {0, 1})
    if (is_constant_all(in[1 - x], 0) && in[x]->type == out.type)
      return same_type(ops::elemwise(ScalarOpId::Relu, {in[x]}), out);
  return nullptr;
}

/// neg(neg(x)) -> x
VarPtr neg_neg(FunctionGraph&, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Neg)) return nullptr;
  if (const Apply* inner = elemwise_owner(node.input(0), ScalarOpId::Neg)) return same_type(inner->input(0), *node.output_raw(0));
  return nullptr;
}

/// log(exp(x)) -> x
VarPtr log_exp(FunctionGraph&, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Log)) return nullptr;
  if (const Apply* inner = elemwise_owner(node.input(0), ScalarOpId::Exp)) return same_type(inner->input(0), *node.output_raw(0));
  return nullptr;
}

/// log(sigmoid(x)) -> -softplus(-x)
VarPtr log_sigmoid(FunctionGraph&, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Log)) return nullptr;
  const Apply* sig = elemwise_owner(node.input(0), ScalarOpId::Sigmoid);
  if (!sig) return nullptr;
  VarPtr x = sig->input(0);
  if (!is_float(x->type.dtype)) return nullptr;
  VarPtr sp = ops::elemwise(ScalarOpId::Softplus, {ops::elemwise(ScalarOpId::Neg, {x})});
  return same_type(ops::elemwise(ScalarOpId::Neg, {sp}), *node.output_raw(0));
}

/// log(1 - sigmoid(x)) -> -softplus(x)
VarPtr log_one_minus_sigmoid(FunctionGraph&, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Log)) return nullptr;
  const graph::Variable& out = *node.output_raw(0);
  const Apply* sub = elemwise_owner(node.input(0), ScalarOpId::Sub);
  if (!sub || !is_constant_all(sub->input(0), 1)) return nullptr;
  const Apply* sig = elemwise_owner(sub->input(1), ScalarOpId::Sigmoid);
  if (!sig) return nullptr;
  VarPtr x = sig->input(0);
  if (!is_float(x->type.dtype) || x->type != out.type) return nullptr;
  return same_type(ops::elemwise(ScalarOpId::Neg, {ops::elemwise(ScalarOpId::Softplus, {x})}), out);
}

/// dimshuffle(dimshuffle(x)) -> one dimshuffle; an identity dimshuffle -> x
VarPtr dimshuffle_chain(FunctionGraph&, Apply& node) {
  const auto& outer = graph::op_as<ops::DimShuffle>(node.op());
  const graph::Variable& out = *node.output_raw(0);
  VarPtr x = node.input(0);
  std::vector<int> pattern = outer.pattern();
  const graph::Variable* in = x.get();
  const bool nested = in->owner && in->owner->op().kind() == graph::OpKind::DimShuffle;
  if (nested) {
    const auto& inner = graph::op_as<ops::DimShuffle>(in->owner->op());
    for (int& p : pattern) p = p < 0 ? -1 : inner.pattern()[p];
    x = in->owner->input(0);
  }
  bool identity = static_cast<int>(pattern.size()) == x->type.ndim();
  for (size_t i = 0; identity && i < pattern.size(); ++i) identity = pattern[i] == static_cast<int>(i);
  if (identity) return same_type(x, out);
  if (!nested) return nullptr;
  return same_type(ops::dimshuffle(x, pattern), out);
}

/// reshape(reshape(x, s1), s2) -> reshape(x, s2): C-order reshapes compose. Only for an outer
/// reshape to a shape vector: a flatten keeps its input's leading dims, which s1 decides.
VarPtr reshape_chain(FunctionGraph&, Apply& node) {
  if (node.inputs().size() != 2) return nullptr;
  const graph::Variable* in = node.input(0).get();
  if (!in->owner || in->owner->op().kind() != graph::OpKind::Reshape) return nullptr;
  graph::ApplyPtr merged =
      Apply::make(node.op_ptr(), {in->owner->input(0), node.input(1)}, {node.output_raw(0)->type});
  return merged->output(0);
}

/// sum(broadcast_to(s, shape)) over every axis, s a 0-d variable: s * size(shape).
VarPtr sum_of_broadcast(FunctionGraph&, Apply& node) {
  const auto& op = static_cast<const ops::Reduce&>(node.op());  // keyed on Sum
  const graph::Variable& out = *node.output_raw(0);
  const graph::Variable* in = node.input(0).get();
  if (!in->owner || in->owner->op().kind() != graph::OpKind::BroadcastTo) return nullptr;
  if (static_cast<int>(op.axes().size()) != in->type.ndim()) return nullptr;
  VarPtr s = in->owner->input(0);
  if (s->type.ndim() != 0 || !is_float(s->type.dtype) || s->type.dtype != out.type.dtype) return nullptr;
  const int64_t n = shape_size(in->type.dims);
  if (n < 0 || n > (int64_t(1) << 24)) return nullptr;  // exactly representable in float32
  return same_type(ops::elemwise(ScalarOpId::Mul, {s, ops::literal(static_cast<double>(n), false)}), out);
}

/// sum_to(g, like) -> g when the static types prove g already has like's shape (every dim
/// known and equal on both sides): nothing broadcast, nothing to sum. An unknown dim is left to
/// run time, where the executor hands g over without a copy (SumTo's pass_through_map) and
/// SumTo still checks the shapes.
VarPtr sum_to_same_shape(FunctionGraph&, Apply& node) {
  const VarPtr& g = node.input(0);
  const graph::TensorType &gt = g->type, &like = node.input(1)->type;
  if (gt.ndim() != like.ndim()) return nullptr;
  for (int d = 0; d < gt.ndim(); ++d)
    if (gt.dims[d] < 0 || gt.dims[d] != like.dims[d]) return nullptr;
  return same_type(g, *node.output_raw(0));
}

const LocalRewriter& canonicalizer() {
  using K = graph::OpKind;
  static const LocalRewriter rewriter(
      "canonicalize",
      {
          // {name, the kinds it triggers on, the rewrite}: one row per rewrite
          {"mul_by_one", {K::Elemwise}, on_output0(mul_by_one)},
          {"add_zero", {K::Elemwise}, on_output0(add_zero)},
          {"sub_zero", {K::Elemwise}, on_output0(sub_zero)},
          {"div_by_one", {K::Elemwise}, on_output0(div_by_one)},
          {"maximum_zero_is_relu", {K::Elemwise}, on_output0(maximum_zero_is_relu)},
          {"neg_neg", {K::Elemwise}, on_output0(neg_neg)},
          {"log_exp", {K::Elemwise}, on_output0(log_exp)},
          {"log_sigmoid", {K::Elemwise}, on_output0(log_sigmoid)},
          {"log_one_minus_sigmoid", {K::Elemwise}, on_output0(log_one_minus_sigmoid)},
          {"dimshuffle_chain", {K::DimShuffle}, on_output0(dimshuffle_chain)},
          {"reshape_chain", {K::Reshape}, on_output0(reshape_chain)},
          {"sum_of_broadcast", {K::Sum}, on_output0(sum_of_broadcast)},
          {"sum_to_same_shape", {K::SumTo}, on_output0(sum_to_same_shape)},
      },
      kMaxSweeps);
  return rewriter;
}

}  // namespace

bool canonicalize_pass(FunctionGraph& fgraph) { return canonicalizer().run(fgraph).changed; }

}  // namespace theon::rewrite
