#include "ops/arange.hpp"
#include "ops/make_op.hpp"

#include "graph/user_names.hpp"
#include "ops/elemwise.hpp"
#include "ops/reduce.hpp"
#include "ops/shape.hpp"
#include "ops/subtensor.hpp"
#include "util/checked_size.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

#include <charconv>
#include <cmath>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

namespace {

// A scalar's value as NumPy prints it (shortest round-trip form for floats).
std::string value_text(const Array& a) {
  if (a.dtype() == DType::Int64) return std::to_string(a.data<int64_t>()[0]);
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, a.item());
  return std::string(buf, r.ptr);
}

std::string values_text(const Array& start, const Array& stop, const Array& step) {
  return "start=" + value_text(start) + ", stop=" + value_text(stop) + ", step=" + value_text(step);
}

}  // namespace

int64_t arange_length(const Array& start, const Array& stop, const Array& step, const std::string& what) {
  if (step.dtype() == DType::Int64) {  // exact: the builder cast all three to int64
    const int64_t a = start.data<int64_t>()[0], b = stop.data<int64_t>()[0], s = step.data<int64_t>()[0];
    if (s == 0) throw ValueError(what + ": the step is 0 (" + values_text(start, stop, step) + ")");
    // In uint64, where stop - start cannot overflow: ceil(distance / |step|).
    if (s > 0) return b <= a ? 0 : static_cast<int64_t>((uint64_t(b) - uint64_t(a) - 1) / uint64_t(s) + 1);
    return a <= b ? 0 : static_cast<int64_t>((uint64_t(a) - uint64_t(b) - 1) / (uint64_t(0) - uint64_t(s)) + 1);
  }
  const double a = start.item(), b = stop.item(), s = step.item();
  if (s == 0) throw ValueError(what + ": the step is 0 (" + values_text(start, stop, step) + ")");
  const double n = std::ceil((b - a) / s);
  if (std::isnan(n) || n >= 9.2e18)
    throw ValueError(what + ": the length is not finite or too large (" + values_text(start, stop, step) + ")");
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

DType arange_dtype(const VarPtr& start, const VarPtr& stop, const VarPtr& step) {
  const DType t = result_type({{start->type.dtype, start->weak}, {stop->type.dtype, stop->weak}, {step->type.dtype, step->weak}},
                              config().floatX);
  return is_float(t) ? t : DType::Int64;
}

VarPtr arange(const VarPtr& start, const VarPtr& stop, const VarPtr& step, std::optional<DType> dtype_in) {
  const std::string what = "arange(" + start->label() + ", " + stop->label() + ", " + step->label() + ")";
  for (const VarPtr& v : {start, stop, step})
    if (v->type.ndim() != 0 || !(is_float(v->type.dtype) || is_integer(v->type.dtype) || v->type.dtype == DType::Bool))
      throw TypeError(what + ": " + label_type(v) + " must be a numeric scalar");
  const DType dtype = dtype_in.value_or(arange_dtype(start, stop, step));
  require_supported(dtype, what);
  if (!is_float(dtype) && !is_integer(dtype))
    throw TypeError(what + ": the dtype must be an integer or float, got " + std::string(dtype_name(dtype)));
  bool all_integer = !is_float(dtype);
  for (const VarPtr& v : {start, stop, step}) all_integer = all_integer && !is_float(v->type.dtype);
  const DType compute = all_integer ? DType::Int64 : DType::Float64;
  std::vector<VarPtr> inputs;
  for (const VarPtr& v : {start, stop, step}) inputs.push_back(cast(v, compute));
  graph::TensorType t;
  t.dtype = dtype;
  t.dims = {graph::kUnknownDim};
  // Constant bounds give a static length (and a constant step of 0 fails now).
  const auto is_const = [](const VarPtr& v) { return v->kind == graph::VarKind::Constant; };
  if (is_const(step)) {
    const Array s = step->constant.astype(compute);
    if (s.item() == 0) throw ValueError(what + ": the step is 0");
    if (is_const(start) && is_const(stop)) t.dims = {arange_length(start->constant.astype(compute), stop->constant.astype(compute), s, what)};
  }
  return graph::make_output(std::make_shared<ARange>(dtype), inputs, t);
}

std::vector<Shape> ARange::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const int64_t n = arange_length(inputs[0], inputs[1], inputs[2], graph::user_describe(node));
  detail::checked_nbytes(Shape{n}, dtype_, [&] { return graph::user_describe(node); });
  return {Shape{n}};
}

graph::Cost ARange::cost(const Apply& node, const std::vector<Shape>&) const {
  // The length is a value: only a static one counts.
  graph::Cost c;
  const int64_t n = node.output_raw(0)->type.dims[0];
  if (n > 0) {
    c.flops = static_cast<double>(n);
    c.bytes = static_cast<double>(n) * static_cast<double>(itemsize(dtype_));
  }
  return c;
}

std::string ARange::render(const std::vector<std::string>& inputs, int output) const {
  if (output != 0 || inputs.size() != 3) return Op::render(inputs, output);
  return "arange(" + inputs[0] + ", " + inputs[1] + ", " + inputs[2] + ")";
}

std::vector<VarPtr> ARange::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr& g = output_grads[0];
  if (!g) return {nullptr, nullptr, nullptr};
  const VarPtr out = const_cast<Apply&>(node).output(0);
  const VarPtr n = subtensor(shape_of(out), {Index(int64_t{0})});
  const VarPtr steps_taken = arange(literal(0, true), n, literal(1, true), dtype_);
  const VarPtr g_start = reduce(ReduceKind::Sum, g, std::nullopt, false);
  const VarPtr g_step = reduce(ReduceKind::Sum, elemwise(ScalarOpId::Mul, {g, steps_taken}), std::nullopt, false);
  const DType in = node.input(0)->type.dtype;
  return {cast(g_start, in), nullptr, cast(g_step, in)};
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::ARange>(PropReader& p) {
  return std::make_shared<const ARange>(parse_dtype(p.text("dtype")));
}

}  // namespace theon::ops
