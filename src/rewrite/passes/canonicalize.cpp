// canonicalize: local algebraic simplifications applied to a fixed point (repeated sweeps in
// topological order, at most kMaxSweeps). Every replacement keeps the exact static type of
// the variable it replaces (dtype, rank and dims); a rule whose result would differ (a
// constant that broadcast x to a larger shape, an integer input promoted to float) does not fire.
//
//   x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1  -> x     (constants of any dtype, all elements equal)
//   neg(neg(x))                                -> x
//   log(exp(x))                                -> x     (exp(log(x)) is not exact: left alone)
//   log(softmax(x, axis))                      -> log_softmax(x, axis)
//   log(sigmoid(x))                            -> -softplus(-x)
//   log(1 - sigmoid(x))                        -> -softplus(x)
//   dimshuffle(dimshuffle(x))                  -> one dimshuffle, or x when it is the identity
//   reshape(reshape(x, s1), s2)                -> reshape(x, s2)  (also through a flatten)
//   sum(broadcast_to(s, shape)) over all axes  -> s * size(shape) (s a 0-d variable)
#include "graph/op.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/nnet.hpp"
#include "ops/reduce.hpp"
#include "ops/shape.hpp"
#include "rewrite/passes/passes.hpp"
#include "util/dispatch.hpp"

#include <theon/error.hpp>

#include <unordered_set>

namespace theon::rewrite {
namespace {

using graph::Apply;
using graph::VarPtr;
using ops::ScalarOpId;

constexpr int kMaxSweeps = 16;

/// The Elemwise op computing `v` when it is `id`, else null.
const Apply* elemwise_owner(const VarPtr& v, ScalarOpId id) {
  if (!v->owner || v->owner->op().kind() != graph::OpKind::Elemwise) return nullptr;
  return static_cast<const ops::Elemwise&>(v->owner->op()).scalar() == id ? v->owner : nullptr;
}

/// The constant behind `v`, looking through DimShuffle and Cast nodes (which keep 0s and 1s).
const Array* constant_through(const VarPtr& v) {
  auto passthrough = [](const Apply* a) {
    if (a->inputs().size() != 1) return false;
    if (a->op().kind() == graph::OpKind::DimShuffle) return true;
    return a->op().kind() == graph::OpKind::Elemwise && static_cast<const ops::Elemwise&>(a->op()).scalar() == ScalarOpId::Cast;
  };
  const graph::Variable* p = v.get();
  while (p->owner && passthrough(p->owner)) p = p->owner->input(0).get();
  return p->kind == graph::VarKind::Constant ? &p->constant : nullptr;
}

/// Is `v` a non-empty constant whose elements all equal `value`?
bool is_constant_all(const VarPtr& v, double value) {
  const Array* c = constant_through(v);
  if (!c || c->size() == 0) return false;
  Array a = c->contiguous();
  return detail::visit_dtype(a.dtype(), [&]<class T>() {
    const T* p = a.data<T>();
    for (int64_t i = 0; i < a.size(); ++i)
      if (static_cast<double>(p[i]) != value) return false;
    return true;
  });
}

/// `candidate` when it has exactly `out`'s type, else null (the rule does not fire).
VarPtr same_type(const VarPtr& candidate, const graph::Variable& out) {
  return candidate && candidate->type == out.type ? candidate : nullptr;
}

VarPtr rewrite_elemwise(Apply& node) {
  const auto& op = static_cast<const ops::Elemwise&>(node.op());
  const graph::Variable& out = *node.output_raw(0);
  const auto& in = node.inputs();
  switch (op.scalar()) {
    case ScalarOpId::Mul:
      if (is_constant_all(in[1], 1))
        if (auto r = same_type(in[0], out)) return r;
      if (is_constant_all(in[0], 1)) return same_type(in[1], out);
      return nullptr;
    case ScalarOpId::Add:
      if (is_constant_all(in[1], 0))
        if (auto r = same_type(in[0], out)) return r;
      if (is_constant_all(in[0], 0)) return same_type(in[1], out);
      return nullptr;
    case ScalarOpId::Sub:
      return is_constant_all(in[1], 0) ? same_type(in[0], out) : nullptr;
    case ScalarOpId::TrueDiv:
      return is_constant_all(in[1], 1) ? same_type(in[0], out) : nullptr;
    case ScalarOpId::Neg:
      if (const Apply* inner = elemwise_owner(in[0], ScalarOpId::Neg)) return same_type(inner->input(0), out);
      return nullptr;
    case ScalarOpId::Log: {
      if (const Apply* inner = elemwise_owner(in[0], ScalarOpId::Exp)) return same_type(inner->input(0), out);
      if (in[0]->owner && in[0]->owner->op().kind() == graph::OpKind::Softmax) {
        const auto& sm = static_cast<const ops::Softmax&>(in[0]->owner->op());
        return same_type(ops::softmax(in[0]->owner->input(0), sm.axis(), /*log=*/true), out);
      }
      if (const Apply* sig = elemwise_owner(in[0], ScalarOpId::Sigmoid)) {  // -softplus(-x)
        VarPtr x = sig->input(0);
        if (!is_float(x->type.dtype)) return nullptr;
        VarPtr sp = ops::elemwise(ScalarOpId::Softplus, {ops::elemwise(ScalarOpId::Neg, {x})});
        return same_type(ops::elemwise(ScalarOpId::Neg, {sp}), out);
      }
      if (const Apply* sub = elemwise_owner(in[0], ScalarOpId::Sub); sub && is_constant_all(sub->input(0), 1))
        if (const Apply* sig = elemwise_owner(sub->input(1), ScalarOpId::Sigmoid)) {  // -softplus(x)
          VarPtr x = sig->input(0);
          if (!is_float(x->type.dtype) || x->type != out.type) return nullptr;
          return same_type(ops::elemwise(ScalarOpId::Neg, {ops::elemwise(ScalarOpId::Softplus, {x})}), out);
        }
      return nullptr;
    }
    default: return nullptr;
  }
}

VarPtr rewrite_dimshuffle(Apply& node) {
  const auto& outer = static_cast<const ops::DimShuffle&>(node.op());
  const graph::Variable& out = *node.output_raw(0);
  VarPtr x = node.input(0);
  std::vector<int> pattern = outer.pattern();
  const graph::Variable* in = x.get();
  const bool nested = in->owner && in->owner->op().kind() == graph::OpKind::DimShuffle;
  if (nested) {
    const auto& inner = static_cast<const ops::DimShuffle&>(in->owner->op());
    for (int& p : pattern) p = p < 0 ? -1 : inner.pattern()[p];
    x = in->owner->input(0);
  }
  bool identity = static_cast<int>(pattern.size()) == x->type.ndim();
  for (size_t i = 0; identity && i < pattern.size(); ++i) identity = pattern[i] == static_cast<int>(i);
  if (identity) return same_type(x, out);
  if (!nested) return nullptr;
  return same_type(ops::dimshuffle(x, pattern), out);
}

VarPtr rewrite_reshape(Apply& node) {
  // reshape(reshape(x, s1), s2) -> reshape(x, s2): C-order reshapes compose. Only for an outer
  // reshape to a shape vector: a flatten keeps its input's leading dims, which s1 decides.
  if (node.inputs().size() != 2) return nullptr;
  const graph::Variable* in = node.input(0).get();
  if (!in->owner || in->owner->op().kind() != graph::OpKind::Reshape) return nullptr;
  graph::ApplyPtr merged =
      Apply::make(node.op_ptr(), {in->owner->input(0), node.input(1)}, {node.output_raw(0)->type});
  return merged->output(0);
}

VarPtr rewrite_sum(Apply& node) {
  // sum(broadcast_to(s, shape)) over every axis, s a 0-d variable: s * size(shape).
  const auto& op = static_cast<const ops::Reduce&>(node.op());
  const graph::Variable& out = *node.output_raw(0);
  const graph::Variable* in = node.input(0).get();
  if (op.kind() != graph::OpKind::Sum || !in->owner || in->owner->op().kind() != graph::OpKind::BroadcastTo) return nullptr;
  if (static_cast<int>(op.axes().size()) != in->type.ndim()) return nullptr;
  VarPtr s = in->owner->input(0);
  if (s->type.ndim() != 0 || !is_float(s->type.dtype) || s->type.dtype != out.type.dtype) return nullptr;
  const int64_t n = shape_size(in->type.dims);
  if (n < 0 || n > (int64_t(1) << 24)) return nullptr;  // exactly representable in float32
  return same_type(ops::elemwise(ScalarOpId::Mul, {s, ops::literal(static_cast<double>(n), false)}), out);
}

VarPtr rewrite_node(Apply& node) {
  if (!node.op().pure() || node.num_outputs() != 1) return nullptr;
  try {
    switch (node.op().kind()) {
      case graph::OpKind::Elemwise: return rewrite_elemwise(node);
      case graph::OpKind::DimShuffle: return rewrite_dimshuffle(node);
      case graph::OpKind::Reshape: return rewrite_reshape(node);
      case graph::OpKind::Sum: return rewrite_sum(node);
      default: return nullptr;
    }
  } catch (const Error&) {
    // a builder refused the replacement: the rule does not apply
  }
  return nullptr;
}

}  // namespace

bool canonicalize_pass(graph::FunctionGraph& fgraph) {
  bool changed = false;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool any = false;
    const std::vector<graph::ApplyPtr> nodes = fgraph.nodes();  // a snapshot: replace re-sorts
    std::unordered_set<const Apply*> live;
    auto refresh = [&] {
      live.clear();
      for (auto& n : fgraph.nodes()) live.insert(n.get());
    };
    refresh();
    for (const graph::ApplyPtr& node : nodes) {
      if (!live.count(node.get())) continue;  // removed by an earlier replacement
      VarPtr replacement = rewrite_node(*node);
      if (!replacement) continue;
      fgraph.replace(node->output(0), replacement, "canonicalize");
      any = true;
      refresh();
    }
    if (!any) break;
    changed = true;
  }
  return changed;
}

}  // namespace theon::rewrite
