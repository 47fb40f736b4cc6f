#include "ops/reduce.hpp"
#include "ops/make_op.hpp"

#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/sum_to.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

namespace {

// Per kind, in ReduceKind's order: its name and the dtype it gives (its init/combine/finish
// are its functor in ops/scalar/reduce_ops.hpp; see backends/cpu/reduce_accumulate.hpp).
enum class OutDType {
  Int64UnlessFloat,   // sum, prod: integers and bools widen to int64
  Float64UnlessFloat, // mean
  Bool,               // any, all (the input is cast to bool first)
  Same,               // max, min
  Given,              // count: reduce_count's dtype
};
struct ReduceKindRow {
  ReduceKind kind;
  std::string_view name;
  OutDType out;
  graph::OpKind op_kind;  // the node's OpKind (ops.def)
};
constexpr ReduceKindRow kReduceKinds[] = {
    {ReduceKind::Sum, "sum", OutDType::Int64UnlessFloat, graph::OpKind::Sum},
    {ReduceKind::Prod, "prod", OutDType::Int64UnlessFloat, graph::OpKind::Prod},
    {ReduceKind::Max, "max", OutDType::Same, graph::OpKind::Max},
    {ReduceKind::Min, "min", OutDType::Same, graph::OpKind::Min},
    {ReduceKind::Any, "any", OutDType::Bool, graph::OpKind::Any},
    {ReduceKind::All, "all", OutDType::Bool, graph::OpKind::All},
    {ReduceKind::Mean, "mean", OutDType::Float64UnlessFloat, graph::OpKind::Mean},
    {ReduceKind::Count, "count", OutDType::Given, graph::OpKind::Count},
};

const ReduceKindRow& row(ReduceKind kind) {
  const auto i = static_cast<size_t>(kind);
  if (i >= std::size(kReduceKinds) || kReduceKinds[i].kind != kind) throw InternalError("kReduceKinds is out of order");
  return kReduceKinds[i];
}

}  // namespace

std::string_view reduce_kind_name(ReduceKind kind) { return row(kind).name; }

graph::OpKind reduce_op_kind(ReduceKind kind) { return row(kind).op_kind; }

std::optional<ReduceKind> reduce_kind_of(graph::OpKind kind) {
  for (const ReduceKindRow& r : kReduceKinds)
    if (r.op_kind == kind) return r.kind;
  return std::nullopt;
}

graph::OpKind Reduce::kind() const { return reduce_op_kind(kind_); }

graph::OpProps Reduce::props() const {
  std::string a = "(";
  for (size_t i = 0; i < axes_.size(); ++i) a += (i ? ", " : "") + std::to_string(axes_[i]);
  a += axes_.size() == 1 ? ",)" : ")";
  return {{"axes", a}};
}

std::vector<int> normalize_axes(const std::string& what, const VarPtr& x, std::vector<int> axes) {
  const int nd = x->type.ndim();
  for (int& a : axes) {
    int orig = a;
    if (a < 0) a += nd;
    if (a < 0 || a >= nd)
      throw ShapeError(what + ": axis " + std::to_string(orig) + " is out of bounds for " + x->label() + " of rank " +
                       std::to_string(nd) + " (" + x->type.str() + ")");
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw ShapeError(what + ": repeated axis for " + x->label());
  return axes;
}

VarPtr reduce(ReduceKind kind, const VarPtr& x_in, std::optional<std::vector<int>> axes_in, bool keepdims) {
  const std::string what = std::string(reduce_kind_name(kind)) + "(" + x_in->label() + ")";
  require_supported(x_in->type.dtype, what);
  VarPtr x = x_in;
  const int nd = x->type.ndim();
  std::vector<int> axes;
  if (axes_in) axes = normalize_axes(what, x, *axes_in);
  else
    for (int d = 0; d < nd; ++d) axes.push_back(d);

  const DType in = x->type.dtype;
  DType out = in;
  switch (row(kind).out) {
    case OutDType::Int64UnlessFloat: out = is_float(in) ? in : DType::Int64; break;
    case OutDType::Float64UnlessFloat: out = is_float(in) ? in : DType::Float64; break;
    case OutDType::Bool:
      out = DType::Bool;
      x = cast(x, DType::Bool);
      break;
    case OutDType::Same: break;
    case OutDType::Given: throw InternalError(what + ": use reduce_count");
  }
  graph::TensorType t;
  t.dtype = out;
  for (int d = 0; d < nd; ++d)
    if (!std::binary_search(axes.begin(), axes.end(), d)) t.dims.push_back(x->type.dims[d]);
  VarPtr r = graph::make_output(std::make_shared<Reduce>(kind, axes, out), {x}, t);
  if (!keepdims) return r;
  std::vector<int> pattern;
  int k = 0;
  for (int d = 0; d < nd; ++d) pattern.push_back(std::binary_search(axes.begin(), axes.end(), d) ? -1 : k++);
  return dimshuffle(r, pattern);
}

VarPtr reduce_count(const VarPtr& x, const std::vector<int>& axes, DType dtype) {
  graph::TensorType t;
  t.dtype = dtype;
  return graph::make_output(std::make_shared<Reduce>(ReduceKind::Count, axes, dtype), {x}, t);
}

std::vector<Shape> Reduce::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const Shape& in = inputs[0].shape();
  Shape out;
  if (kind_ == ReduceKind::Count) return {Shape{}};
  for (int d = 0; d < static_cast<int>(in.size()); ++d) {
    bool reduced = std::binary_search(axes_.begin(), axes_.end(), d);
    if (!reduced) out.push_back(in[d]);
    else if (in[d] == 0 && (kind_ == ReduceKind::Max || kind_ == ReduceKind::Min))
      throw ValueError(node.describe() + ": zero-size array to reduction operation " +
                       std::string(reduce_kind_name(kind_)) + " which has no identity (" + node.input(0)->label() +
                       " has shape " + shape_str(in) + ")");
  }
  return {out};
}

}  // namespace theon::ops

namespace theon::ops {

std::vector<VarPtr> Reduce::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr& x = node.input(0);
  const VarPtr& gz = output_grads[0];
  // any/all are boolean and count depends on x's shape only: no gradient flows to x's values.
  if (!gz || !is_float(x->type.dtype) || kind_ == ReduceKind::Any || kind_ == ReduceKind::All ||
      kind_ == ReduceKind::Count)
    return {nullptr};
  // Put the reduced axes back as broadcastable dims, then broadcast to x's shape.
  std::vector<int> pattern;
  for (int d = 0, k = 0; d < x->type.ndim(); ++d)
    pattern.push_back(std::binary_search(axes_.begin(), axes_.end(), d) ? -1 : k++);
  auto expand = [&](const VarPtr& v) { return dimshuffle(cast(v, x->type.dtype), pattern); };
  const VarPtr g = expand(gz);
  switch (kind_) {
    case ReduceKind::Sum: return {broadcast_like(g, x)};
    case ReduceKind::Mean:
      return {broadcast_like(elemwise(ScalarOpId::TrueDiv, {g, reduce_count(x, axes_, x->type.dtype)}), x)};
    case ReduceKind::Prod: {
      // prod / x, exact where x has no zeros (Theano's default gradient as well).
      const VarPtr out = expand(const_cast<Apply&>(node).output(0));
      return {elemwise(ScalarOpId::TrueDiv, {elemwise(ScalarOpId::Mul, {g, out}), x})};
    }
    case ReduceKind::Max: case ReduceKind::Min: {
      // Every position equal to the extremum gets the gradient (ties share it all, as Theano).
      const VarPtr out = expand(const_cast<Apply&>(node).output(0));
      return {elemwise(ScalarOpId::Switch, {elemwise(ScalarOpId::Eq, {x, out}), g, literal(0, false)})};
    }
    case ReduceKind::Any: case ReduceKind::All: case ReduceKind::Count: break;  // returned above
  }
  return {nullptr};
}

}  // namespace theon::ops

namespace theon::ops {

namespace {
// Props: "axes" (sorted, distinct, non-negative) and, not printed, the result "dtype"
// (rebuild_props adds it).
std::shared_ptr<const graph::Op> reduce_from_props(ReduceKind kind, PropReader& p) {
  const Shape axes = p.shape("axes");
  const std::optional<DType> out = p.dtype_or_none("dtype");
  if (!out)
    p.not_rebuildable("a Reduce's result dtype is not among its printed props (rebuild_props adds it as dtype)");
  std::vector<int> ax;
  constexpr int64_t kMaxRank = 64;
  for (const int64_t a : axes) {
    if (a < 0 || a >= kMaxRank || (!ax.empty() && a <= ax.back()))
      p.fail("axes must be distinct non-negative dims in increasing order, got " + shape_str(axes));
    ax.push_back(static_cast<int>(a));
  }
  return std::make_shared<const Reduce>(kind, std::move(ax), *out);
}
}  // namespace

#define THEON_REDUCE_FACTORY(Kind)                                                      \
  template <>                                                                           \
  std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Kind>(PropReader & p) { \
    return reduce_from_props(ReduceKind::Kind, p);                                      \
  }
THEON_REDUCE_FACTORY(Sum)
THEON_REDUCE_FACTORY(Prod)
THEON_REDUCE_FACTORY(Max)
THEON_REDUCE_FACTORY(Min)
THEON_REDUCE_FACTORY(Any)
THEON_REDUCE_FACTORY(All)
THEON_REDUCE_FACTORY(Mean)
THEON_REDUCE_FACTORY(Count)
#undef THEON_REDUCE_FACTORY

}  // namespace theon::ops

namespace theon::ops {

// The builders of the Reduce rows of theon/ops.def (signature class Reduce).
#define THEON_REDUCE_BUILDER(name, kind)                                                              \
  graph::VarPtr name(const graph::VarPtr& x, std::optional<std::vector<int>> axes, bool keepdims) { \
    return reduce(ReduceKind::kind, x, std::move(axes), keepdims);                                   \
  }
THEON_REDUCE_BUILDER(sum, Sum)
THEON_REDUCE_BUILDER(mean, Mean)
THEON_REDUCE_BUILDER(prod, Prod)
THEON_REDUCE_BUILDER(max, Max)
THEON_REDUCE_BUILDER(min, Min)
THEON_REDUCE_BUILDER(any, Any)
THEON_REDUCE_BUILDER(all, All)
#undef THEON_REDUCE_BUILDER

}  // namespace theon::ops
