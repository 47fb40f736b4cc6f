#include "ops/conv.hpp"
#include "ops/make_op.hpp"

#include "graph/user_names.hpp"
#include "ops/elemwise.hpp"
#include "ops/reduce.hpp"
#include "ops/shape.hpp"
#include "util/checked_size.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

namespace theon::ops {

using graph::Apply;
using graph::OpKind;
using graph::VarPtr;

namespace {

std::string pair_text(int64_t a, int64_t b) { return "(" + std::to_string(a) + ", " + std::to_string(b) + ")"; }

std::string described(const VarPtr& v) { return v->label() + " (" + v->type.str() + ")"; }

const char* call_name(OpKind k) {
  switch (k) {
    case OpKind::Conv2dGradInputs: return "conv2d_grad_wrt_inputs";
    case OpKind::Conv2dGradWeights: return "conv2d_grad_wrt_weights";
    default: return "conv2d";
  }
}

void check_params(const ConvParams& p, const std::string& what) {
  if (p.border == ConvBorder::Explicit && (p.pad_h < 0 || p.pad_w < 0))
    throw ValueError(what + ": border_mode pads must be >= 0, got " + pair_text(p.pad_h, p.pad_w));
  if (p.stride_h < 1 || p.stride_w < 1)
    throw ValueError(what + ": subsample must be >= 1, got " + pair_text(p.stride_h, p.stride_w));
  if (p.dil_h < 1 || p.dil_w < 1)
    throw ValueError(what + ": filter_dilation must be >= 1, got " + pair_text(p.dil_h, p.dil_w));
  if (p.groups < 1) throw ValueError(what + ": num_groups must be >= 1, got " + std::to_string(p.groups));
}

// Float16, float32 or float64 for both tensors (mixed: the wider; float16 computes in float32,
// docs/guide/float16.md); integers are a TypeError.
DType conv_dtype(const std::string& what, const VarPtr& a, const VarPtr& b) {
  for (const VarPtr& v : {a, b}) {
    require_supported(v->type.dtype, what);
    if (v->type.dtype != DType::Float16 && v->type.dtype != DType::Float32 && v->type.dtype != DType::Float64)
      throw TypeError(what + ": " + described(v) + " must be float16, float32 or float64");
    if (v->type.ndim() != 4)
      throw TypeError(what + ": " + described(v) + " must be a 4-d tensor (batch, channels, rows, cols)");
  }
  return promote_types(a->type.dtype, b->type.dtype);
}

// An integer vector of length 2 or 4, as int64; its static values when it is a constant.
VarPtr shape_input(const std::string& what, const VarPtr& v, const char* role, std::array<int64_t, 2>& known) {
  known = {graph::kUnknownDim, graph::kUnknownDim};
  if (v->type.ndim() != 1 || !is_integer(v->type.dtype) ||
      (v->type.dims[0] != 2 && v->type.dims[0] != 4))
    throw TypeError(what + ": " + role + " must be an integer vector of static length 2 or 4, got " + described(v));
  if (v->kind == graph::VarKind::Constant) {
    const Array a = v->constant.astype(DType::Int64);
    const int64_t* d = a.data<int64_t>();
    const int64_t len = a.size();
    known = {d[len - 2], d[len - 1]};
    for (int64_t k : known)
      if (k < 0) throw ValueError(what + ": " + role + " has a negative size: " + described(v));
  }
  return cast(v, DType::Int64);
}

int64_t mul_dim(int64_t a, int64_t b) { return a < 0 || b < 0 ? graph::kUnknownDim : a * b; }

}  // namespace

// ---- params and geometry ----

std::string ConvParams::border_text() const {
  switch (border) {
    case ConvBorder::Valid: return "valid";
    case ConvBorder::Full: return "full";
    case ConvBorder::Half: return "half";
    case ConvBorder::Explicit: break;
  }
  return pair_text(pad_h, pad_w);
}

graph::OpProps ConvParams::props() const {
  return {{"border_mode", border_text()},
          {"subsample", pair_text(stride_h, stride_w)},
          {"filter_flip", flip ? "True" : "False"},
          {"filter_dilation", pair_text(dil_h, dil_w)},
          {"num_groups", std::to_string(groups)}};
}

std::string ConvEpilogue::text() const {
  const bool relu = act == ConvActivation::Relu;
  if (bias) return relu ? "bias+relu" : "bias";
  return relu ? "relu" : "none";
}

namespace {

// One spatial axis of a convolution, overflow-checked: the dilated filter's span
// (k - 1) * dil + 1, the pad of the border mode (valid 0; full span - 1; half span // 2;
// explicit as given), the padded input in + 2 * pad and Theano's output size
// (padded - span) // stride + 1 (0 when the filter is larger than the padded input;
// conv_geometry refuses that).
// ShapeError naming `what` when a size leaves int64 (a dilation or pad too big to exist).
struct ConvAxis {
  int64_t span = 0, pad = 0, padded = 0, out = 0;
};

ConvAxis conv_axis(const ConvParams& p, int axis, int64_t in, int64_t k, const std::string& what) {
  const bool rows = axis == 0;
  const int64_t dil = rows ? p.dil_h : p.dil_w, stride = rows ? p.stride_h : p.stride_w;
  const std::string along = rows ? " along the rows" : " along the columns";
  ConvAxis a;
  if (!detail::checked_mul(k - 1, dil, a.span) || !detail::checked_add(a.span, 1, a.span))
    throw ShapeError(what + ": the dilated filter" + along + ", (" + std::to_string(k) + " - 1) * " +
                     std::to_string(dil) + " + 1, is too big (beyond int64)");
  switch (p.border) {
    case ConvBorder::Valid: a.pad = 0; break;
    case ConvBorder::Full: a.pad = a.span - 1; break;
    case ConvBorder::Half: a.pad = a.span / 2; break;
    case ConvBorder::Explicit: a.pad = rows ? p.pad_h : p.pad_w; break;
  }
  if (!detail::checked_mul(a.pad, 2, a.padded) || !detail::checked_add(a.padded, in, a.padded))
    throw ShapeError(what + ": the padded input" + along + ", " + std::to_string(in) + " + 2 * " + std::to_string(a.pad) +
                     " with border_mode=" + p.border_text() + ", is too big (beyond int64)");
  a.out = a.span > a.padded ? 0 : (a.padded - a.span) / stride + 1;
  return a;
}

}  // namespace

ConvGeometry conv_geometry(const ConvParams& p, const Shape& in, const Shape& f, const std::string& what) {
  ConvGeometry g;
  g.n = in[0], g.c = in[1], g.h = in[2], g.w = in[3];
  g.m = f[0], g.kh = f[2], g.kw = f[3];
  g.sh = p.stride_h, g.sw = p.stride_w, g.dh = p.dil_h, g.dw = p.dil_w, g.groups = p.groups, g.flip = p.flip;
  const std::string shapes = " (input " + shape_str(in) + ", filters " + shape_str(f) + ")";
  if (f[1] * p.groups != g.c)
    throw ShapeError(what + ": the input has " + std::to_string(g.c) + " channels but the filters take " +
                     std::to_string(f[1]) + " per group x " + std::to_string(p.groups) + " group(s)" + shapes);
  if (g.m % p.groups != 0)
    throw ShapeError(what + ": the filters' " + std::to_string(g.m) + " output channels are not divisible by num_groups=" +
                     std::to_string(p.groups) + shapes);
  if (g.kh < 1 || g.kw < 1) throw ShapeError(what + ": the filters have no rows or columns" + shapes);
  const ConvAxis ah = conv_axis(p, 0, g.h, g.kh, what + shapes), aw = conv_axis(p, 1, g.w, g.kw, what + shapes);
  g.ph = ah.pad, g.pw = aw.pad;
  if (ah.span > ah.padded || aw.span > aw.padded)
    throw ShapeError(what + ": the filters (dilated " + pair_text(ah.span, aw.span) +
                     ") are larger than the padded input " + pair_text(ah.padded, aw.padded) +
                     " with border_mode=" + p.border_text() + shapes);
  g.oh = ah.out, g.ow = aw.out;
  return g;
}

std::vector<int64_t> conv_static_output(const ConvParams& p, const std::vector<int64_t>& in,
                                        const std::vector<int64_t>& f, const std::string& what) {
  std::vector<int64_t> out = {in[0], f[0], graph::kUnknownDim, graph::kUnknownDim};
  for (int axis = 0; axis < 2; ++axis) {
    if (in[2 + axis] < 0 || f[2 + axis] < 1) continue;
    const ConvAxis a = conv_axis(p, axis, in[2 + axis], f[2 + axis], what);
    if (a.span <= a.padded) out[2 + axis] = a.out;
  }
  return out;
}

// ---- builders ----

VarPtr conv2d(const VarPtr& input, const VarPtr& filters, const ConvParams& p) {
  const std::string what = "conv2d(" + input->label() + ", " + filters->label() + ")";
  const DType t = conv_dtype(what, input, filters);
  check_params(p, what);
  const auto& in = input->type.dims;
  const auto& f = filters->type.dims;
  if (in[1] >= 0 && f[1] >= 0 && in[1] != f[1] * p.groups)
    throw ShapeError(what + ": " + described(input) + " has " + std::to_string(in[1]) + " channels but " +
                     described(filters) + " takes " + std::to_string(f[1]) + " per group x " +
                     std::to_string(p.groups) + " group(s)");
  if (f[0] >= 0 && f[0] % p.groups != 0)
    throw ShapeError(what + ": the " + std::to_string(f[0]) + " output channels of " + described(filters) +
                     " are not divisible by num_groups=" + std::to_string(p.groups));
  // Spatial sizes known statically: a filter larger than the padded input fails now (the
  // channel dims stand in with consistent values: they may be unknown).
  if (in[2] >= 0 && in[3] >= 0 && f[2] >= 1 && f[3] >= 1)
    conv_geometry(p, Shape{1, p.groups, in[2], in[3]}, Shape{p.groups, 1, f[2], f[3]},
                  what + " with " + described(input) + " and " + described(filters));
  graph::TensorType type;
  type.dtype = t;
  type.dims = conv_static_output(p, in, f, what + " with " + described(input) + " and " + described(filters));
  return graph::make_output(std::make_shared<Conv2d>(OpKind::Conv2d, p), {cast(input, t), cast(filters, t)}, type);
}

VarPtr conv2d(const VarPtr& input, const VarPtr& filters, const ConvParams& p, const VarPtr& bias,
              ConvActivation act) {
  const VarPtr plain = conv2d(input, filters, p);
  const ConvEpilogue epi{bias != nullptr, act};
  if (!epi.any()) return plain;
  const graph::Apply& node = *plain->owner;
  std::vector<VarPtr> ins = {node.input(0), node.input(1)};
  graph::TensorType type = plain->type;
  if (bias) {
    const std::string what = "conv2d(" + input->label() + ", " + filters->label() + ") + bias";
    if (bias->type.ndim() != 1 || !is_float(bias->type.dtype))
      throw TypeError(what + ": the bias " + described(bias) + " must be a float vector of the output channels' size");
    const int64_t cb = bias->type.dims[0], co = type.dims[1];
    if (cb >= 0 && co >= 0 && cb != co)
      throw ShapeError(what + ": the bias " + described(bias) + " has " + std::to_string(cb) + " entries but " +
                       described(filters) + " has " + std::to_string(co) + " output channels");
    if (co < 0) type.dims[1] = cb;
    ins.push_back(cast(bias, type.dtype));
  }
  return graph::make_output(std::make_shared<Conv2d>(OpKind::Conv2d, p, epi), ins, type);
}

VarPtr conv2d_grad_inputs(const VarPtr& filters, const VarPtr& output_grad, const VarPtr& input_shape,
                          const ConvParams& p) {
  const std::string what = "conv2d_grad_wrt_inputs(" + output_grad->label() + ", " + filters->label() + ")";
  const DType t = conv_dtype(what, filters, output_grad);
  check_params(p, what);
  std::array<int64_t, 2> hw;
  VarPtr shape = shape_input(what, input_shape, "input_shape", hw);
  const auto& f = filters->type.dims;
  const auto& gz = output_grad->type.dims;
  if (f[0] >= 0 && gz[1] >= 0 && f[0] != gz[1])
    throw ShapeError(what + ": " + described(output_grad) + " has " + std::to_string(gz[1]) + " channels but " +
                     described(filters) + " has " + std::to_string(f[0]) + " output channels");
  graph::TensorType type;
  type.dtype = t;
  type.dims = {gz[0], mul_dim(f[1], p.groups), hw[0], hw[1]};
  if (hw[0] >= 0 && f[2] >= 1 && f[3] >= 1 && f[0] >= 0 && f[1] >= 0) {
    const ConvGeometry g = conv_geometry(p, Shape{1, f[1] * p.groups, hw[0], hw[1]}, Shape(f), what);
    if ((gz[2] >= 0 && gz[2] != g.oh) || (gz[3] >= 0 && gz[3] != g.ow))
      throw ShapeError(what + ": " + described(output_grad) + " is not the output of an input of size " +
                       pair_text(hw[0], hw[1]) + ", which gives " + pair_text(g.oh, g.ow));
  }
  return graph::make_output(std::make_shared<Conv2d>(OpKind::Conv2dGradInputs, p),
                            {cast(filters, t), cast(output_grad, t), shape}, type);
}

VarPtr conv2d_grad_weights(const VarPtr& input, const VarPtr& output_grad, const VarPtr& filter_shape,
                           const ConvParams& p) {
  const std::string what = "conv2d_grad_wrt_weights(" + input->label() + ", " + output_grad->label() + ")";
  const DType t = conv_dtype(what, input, output_grad);
  check_params(p, what);
  std::array<int64_t, 2> khw;
  VarPtr shape = shape_input(what, filter_shape, "filter_shape", khw);
  const auto& in = input->type.dims;
  const auto& gz = output_grad->type.dims;
  if (in[0] >= 0 && gz[0] >= 0 && in[0] != gz[0])
    throw ShapeError(what + ": " + described(input) + " and " + described(output_grad) + " differ in batch size");
  if (in[1] >= 0 && in[1] % p.groups != 0)
    throw ShapeError(what + ": the " + std::to_string(in[1]) + " channels of " + described(input) +
                     " are not divisible by num_groups=" + std::to_string(p.groups));
  graph::TensorType type;
  type.dtype = t;
  type.dims = {gz[1], in[1] >= 0 ? in[1] / p.groups : graph::kUnknownDim, khw[0], khw[1]};
  return graph::make_output(std::make_shared<Conv2d>(OpKind::Conv2dGradWeights, p),
                            {cast(input, t), cast(output_grad, t), shape}, type);
}

// ---- the op ----

graph::OpProps Conv2d::props() const {
  graph::OpProps out = params_.props();
  if (epilogue_.any()) out.emplace_back("epilogue", epilogue_.text());
  return out;
}

const Conv2d* Conv2d::of(const graph::Op& op) {
  const OpKind k = op.kind();
  return k == OpKind::Conv2d || k == OpKind::Conv2dGradInputs || k == OpKind::Conv2dGradWeights
             ? static_cast<const Conv2d*>(&op)
             : nullptr;
}

ConvGeometry Conv2d::geometry_from_shapes(const Apply& node, const std::vector<Shape>& s,
                                          const int64_t* shape_values) const {
  // "conv2d(images, kernels)" with the user's names, then the op's parameters.
  const std::string a = graph::user_label(*node.input(0)), b = graph::user_label(*node.input(1));
  const std::string what = std::string(call_name(kind_)) + "(" +
                           (kind_ == OpKind::Conv2dGradInputs ? b + ", " + a : a + ", " + b) +
                           ", border_mode=" + params_.border_text() + ", subsample=" +
                           pair_text(params_.stride_h, params_.stride_w) + ", filter_dilation=" +
                           pair_text(params_.dil_h, params_.dil_w) + ", num_groups=" + std::to_string(params_.groups) + ")";
  if (kind_ == OpKind::Conv2d) return conv_geometry(params_, s[0], s[1], what);
  const Shape& gz = s[1];
  ConvGeometry g;
  if (kind_ == OpKind::Conv2dGradInputs) {
    const Shape& f = s[0];
    if (shape_values[0] < 0 || shape_values[1] < 0)
      throw ValueError(what + ": input_shape has a negative size " + pair_text(shape_values[0], shape_values[1]));
    if (gz[1] != f[0])
      throw ShapeError(what + ": the output gradient " + shape_str(gz) + " has " + std::to_string(gz[1]) +
                       " channels but the filters " + shape_str(f) + " have " + std::to_string(f[0]));
    g = conv_geometry(params_, Shape{gz[0], f[1] * params_.groups, shape_values[0], shape_values[1]}, f, what);
  } else {
    const Shape& in = s[0];
    if (shape_values[0] < 1 || shape_values[1] < 1)
      throw ValueError(what + ": filter_shape must be >= 1, got " + pair_text(shape_values[0], shape_values[1]));
    if (in[1] % params_.groups != 0)
      throw ShapeError(what + ": the input " + shape_str(in) + " has channels not divisible by num_groups=" +
                       std::to_string(params_.groups));
    if (gz[1] % params_.groups != 0)
      throw ShapeError(what + ": the output gradient " + shape_str(gz) +
                       " has channels not divisible by num_groups=" + std::to_string(params_.groups));
    if (gz[0] != in[0])
      throw ShapeError(what + ": the input " + shape_str(in) + " and the output gradient " + shape_str(gz) +
                       " differ in batch size");
    g = conv_geometry(params_, in, Shape{gz[1], in[1] / params_.groups, shape_values[0], shape_values[1]}, what);
  }
  if (gz[0] != g.n || gz[2] != g.oh || gz[3] != g.ow)
    throw ShapeError(what + ": the output gradient has shape " + shape_str(gz) + " but the convolution gives " +
                     shape_str(Shape{g.n, g.m, g.oh, g.ow}));
  return g;
}

ConvGeometry Conv2d::geometry(const Apply& node, const std::vector<Array>& inputs) const {
  std::vector<Shape> shapes = {inputs[0].shape(), inputs[1].shape()};
  int64_t hw[2] = {0, 0};
  if (kind_ != OpKind::Conv2d) {
    const Array s = inputs[2].astype(DType::Int64);  // on the host (the CUDA kernel declares it)
    const int64_t len = s.size();
    hw[0] = s.data<int64_t>()[len - 2], hw[1] = s.data<int64_t>()[len - 1];
  }
  return geometry_from_shapes(node, shapes, hw);
}

std::vector<Shape> Conv2d::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const ConvGeometry g = geometry(node, inputs);
  Shape out;
  if (kind_ == OpKind::Conv2d) {
    out = {g.n, g.m, g.oh, g.ow};
    if (epilogue_.bias && (inputs[2].ndim() != 1 || inputs[2].shape()[0] != g.m))
      throw ShapeError(graph::user_describe(node) + ": the bias " + graph::user_label(*node.input(2)) + " has shape " +
                       shape_str(inputs[2].shape()) + " but the convolution has " + std::to_string(g.m) +
                       " output channels (filters " + shape_str(inputs[1].shape()) + ")");
  }
  else if (kind_ == OpKind::Conv2dGradInputs) out = {g.n, g.c, g.h, g.w};
  else out = {g.m, g.cg(), g.kh, g.kw};
  detail::checked_nbytes(out, node.output_raw(0)->type.dtype, [&] { return graph::user_describe(node); });
  return {out};
}

graph::Cost Conv2d::cost(const Apply& node, const std::vector<Shape>& s) const {
  // Multiply-adds of the forward product (the same count for both gradients).
  graph::Cost c;
  const Shape& a = s[0];
  const Shape& b = s[1];
  const auto total = [](const Shape& x) {
    double n = 1;
    for (int64_t d : x) n *= static_cast<double>(d);
    return n;
  };
  double macs = 0;
  const double item = static_cast<double>(itemsize(node.input(0)->type.dtype));
  if (kind_ == OpKind::Conv2d) {
    // input (n, c, h, w), filters (m, cg, kh, kw): each output reads cg*kh*kw products; the
    // output size is at most n*m*h*w.
    macs = total(b) * static_cast<double>(a[0]) * static_cast<double>(a[2]) * static_cast<double>(a[3]) /
           std::max<double>(1, static_cast<double>(params_.stride_h * params_.stride_w));
  } else if (kind_ == OpKind::Conv2dGradInputs) {
    macs = total(a) * static_cast<double>(b[0]) * static_cast<double>(b[2]) * static_cast<double>(b[3]);
  } else {
    // input (n, c, h, w), output gradient (n, m, oh, ow): each gradient element meets
    // cg*kh*kw inputs (kh, kw from the static output type when known).
    const auto& od = node.output_raw(0)->type.dims;
    const double taps = od[2] > 0 && od[3] > 0 ? static_cast<double>(od[2] * od[3]) : 1.0;
    macs = total(b) * static_cast<double>(a[1]) / static_cast<double>(params_.groups) * taps;
  }
  c.flops = 2 * macs;
  c.bytes = (total(a) + total(b)) * item;
  return c;
}

std::vector<VarPtr> Conv2d::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr& g = output_grads[0];
  const VarPtr a = node.input(0), b = node.input(1);
  if (!g) return std::vector<VarPtr>(node.inputs().size(), nullptr);
  const DType t = node.output_raw(0)->type.dtype;
  VarPtr gc = cast(g, t);
  switch (kind_) {
    case OpKind::Conv2d: {  // a = input, b = filters (, bias)
      if (epilogue_.act == ConvActivation::Relu) {
        // relu'(z) = z > 0, and z > 0 exactly where relu(z) > 0 (NaN: both false).
        const VarPtr out = const_cast<Apply&>(node).output(0);
        gc = elemwise(ScalarOpId::Switch, {elemwise(ScalarOpId::Gt, {out, literal(0, false)}), gc, literal(0, false)});
      }
      std::vector<VarPtr> grads = {conv2d_grad_inputs(b, gc, shape_of(a), params_),
                                   conv2d_grad_weights(a, gc, shape_of(b), params_)};
      if (epilogue_.bias) grads.push_back(reduce(ReduceKind::Sum, gc, std::vector<int>{0, 2, 3}, false));
      return grads;
    }
    case OpKind::Conv2dGradInputs:  // a = filters, b = output_grad
      return {conv2d_grad_weights(gc, b, shape_of(a), params_), conv2d(gc, a, params_), nullptr};
    default:  // a = input, b = output_grad
      return {conv2d_grad_inputs(gc, b, shape_of(a), params_), conv2d(a, gc, params_), nullptr};
  }
}

std::string Conv2d::render(const std::vector<std::string>& inputs, int output) const {
  if (output != 0 || inputs.size() < 2) return Op::render(inputs, output);
  if (kind_ == OpKind::Conv2d && epilogue_.any()) {
    std::string s = "conv2d(" + inputs[0] + ", " + inputs[1] + ")";
    if (epilogue_.bias && inputs.size() > 2) s += " + " + inputs[2];
    return epilogue_.act == ConvActivation::Relu ? "relu(" + s + ")" : s;
  }
  if (kind_ == OpKind::Conv2dGradInputs) return std::string(call_name(kind_)) + "(" + inputs[1] + ", " + inputs[0] + ")";
  return std::string(call_name(kind_)) + "(" + inputs[0] + ", " + inputs[1] + ")";
}

// ---- factories ----

namespace {

std::shared_ptr<const graph::Op> conv_from_props(OpKind kind, PropReader& p) {
  ConvParams c;
  const std::string border = p.text("border_mode");
  if (border == "valid") c.border = ConvBorder::Valid;
  else if (border == "full") c.border = ConvBorder::Full;
  else if (border == "half") c.border = ConvBorder::Half;
  else {
    PropReader pads(kind, {{"pads", border}});
    const Shape s = pads.shape("pads");
    if (s.size() != 2) throw ValueError("make_op(" + std::string(graph::kind_name(kind)) + "): bad border_mode '" + border + "'");
    c.border = ConvBorder::Explicit;
    c.pad_h = s[0], c.pad_w = s[1];
  }
  const Shape stride = p.shape("subsample"), dil = p.shape("filter_dilation");
  if (stride.size() != 2 || dil.size() != 2)
    throw ValueError("make_op(" + std::string(graph::kind_name(kind)) + "): subsample and filter_dilation are pairs");
  c.stride_h = stride[0], c.stride_w = stride[1], c.dil_h = dil[0], c.dil_w = dil[1];
  c.flip = p.flag("filter_flip");
  c.groups = p.integer("num_groups");
  check_params(c, "make_op(" + std::string(graph::kind_name(kind)) + ")");
  ConvEpilogue e;
  const std::string epi = p.text("epilogue", "none");
  if (epi == "bias" || epi == "bias+relu") e.bias = true;
  if (epi == "relu" || epi == "bias+relu") e.act = ConvActivation::Relu;
  if (epi != "none" && !e.any())
    throw ValueError("make_op(" + std::string(graph::kind_name(kind)) + "): bad epilogue '" + epi +
                     "' (none, bias, relu or bias+relu)");
  if (e.any() && kind != OpKind::Conv2d)
    throw ValueError("make_op(" + std::string(graph::kind_name(kind)) + "): only Conv2d takes an epilogue");
  return p.done(std::make_shared<const Conv2d>(kind, c, e));
}

}  // namespace

template <>
std::shared_ptr<const graph::Op> op_from_props<OpKind::Conv2d>(PropReader& p) {
  return conv_from_props(OpKind::Conv2d, p);
}
template <>
std::shared_ptr<const graph::Op> op_from_props<OpKind::Conv2dGradInputs>(PropReader& p) {
  return conv_from_props(OpKind::Conv2dGradInputs, p);
}
template <>
std::shared_ptr<const graph::Op> op_from_props<OpKind::Conv2dGradWeights>(PropReader& p) {
  return conv_from_props(OpKind::Conv2dGradWeights, p);
}

}  // namespace theon::ops
