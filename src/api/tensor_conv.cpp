// tensor:: convolution builders (theon/conv.hpp): Theano's keyword arguments mapped to
// ops::ConvParams, shape hints checked against the static shapes.
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "api/need_var.hpp"

#include "ops/conv.hpp"
#include "ops/elemwise.hpp"

namespace theon::tensor {

using detail::need;

namespace {

ops::ConvParams params_of(const Conv2dOptions& o, const std::string& what) {
  ops::ConvParams p;
  const BorderMode& b = o.border_mode;
  if (b.mode == "valid") p.border = ops::ConvBorder::Valid;
  else if (b.mode == "full") p.border = ops::ConvBorder::Full;
  else if (b.mode == "half") p.border = ops::ConvBorder::Half;
  else if (b.mode.empty()) {
    p.border = ops::ConvBorder::Explicit;
    p.pad_h = b.pad_h, p.pad_w = b.pad_w;
  } else {
    throw ValueError(what + ": invalid border_mode '" + b.mode + "': expected 'valid', 'full', 'half', an int or a pair of ints");
  }
  p.stride_h = o.subsample[0], p.stride_w = o.subsample[1];
  p.dil_h = o.filter_dilation[0], p.dil_w = o.filter_dilation[1];
  p.groups = o.num_groups;
  p.flip = o.filter_flip;
  return p;
}

// A shape hint (Theano's input_shape / filter_shape): 4 entries, -1 (None) where unknown,
// each known one equal to the variable's static size where that is known.
void check_hint(const std::string& what, const char* role, const std::optional<std::vector<int64_t>>& hint,
                const graph::VarPtr& v) {
  if (!hint) return;
  if (hint->size() != 4)
    throw ValueError(what + ": " + role + " must have 4 entries, got " + std::to_string(hint->size()));
  for (size_t d = 0; d < 4; ++d) {
    const int64_t h = (*hint)[d];
    if (h < -1) throw ValueError(what + ": " + role + " has a negative entry " + std::to_string(h));
    if (d < v->type.dims.size() && h >= 0 && v->type.dims[d] >= 0 && v->type.dims[d] != h)
      throw ShapeError(what + ": " + role + " says " + std::to_string(h) + " for dim " + std::to_string(d) + " but " +
                       v->label() + " has static shape " + v->type.str());
  }
}

graph::VarPtr shape_constant(const std::vector<int64_t>& shape, const std::string& what, const char* role) {
  if (shape.size() != 4 && shape.size() != 2)
    throw ValueError(what + ": " + role + " must have 4 or 2 entries, got " + std::to_string(shape.size()));
  const int64_t h = shape[shape.size() - 2], w = shape[shape.size() - 1];
  if (h < 0 || w < 0) throw ValueError(what + ": the last two entries of " + role + " must be known sizes");
  Array a = Array::zeros({2}, DType::Int64);
  a.data<int64_t>()[0] = h;
  a.data<int64_t>()[1] = w;
  return ops::constant(a);
}

}  // namespace

Var conv2d(const Var& input, const Var& filters, const Conv2dOptions& options) {
  const graph::VarPtr x = need(input, "conv2d"), w = need(filters, "conv2d");
  const std::string what = "conv2d(" + x->label() + ", " + w->label() + ")";
  check_hint(what, "input_shape", options.input_shape, x);
  check_hint(what, "filter_shape", options.filter_shape, w);
  return Var(ops::conv2d(x, w, params_of(options, what)));
}

Var separable_conv2d(const Var& input, const Var& depthwise_filters, const Var& pointwise_filters,
                     int64_t num_channels, const SeparableConv2dOptions& options) {
  const graph::VarPtr x = need(input, "separable_conv2d"), dw = need(depthwise_filters, "separable_conv2d"),
                      pw = need(pointwise_filters, "separable_conv2d");
  const std::string what = "separable_conv2d(" + x->label() + ", " + dw->label() + ", " + pw->label() + ")";
  if (num_channels < 1) throw ValueError(what + ": num_channels must be >= 1, got " + std::to_string(num_channels));
  if (x->type.ndim() == 4 && x->type.dims[1] >= 0 && x->type.dims[1] != num_channels)
    throw ShapeError(what + ": " + x->label() + " has " + std::to_string(x->type.dims[1]) +
                     " channels (static shape " + x->type.str() + ") but num_channels=" + std::to_string(num_channels));
  if (dw->type.ndim() == 4 && dw->type.dims[1] >= 0 && dw->type.dims[1] != 1)
    throw ShapeError(what + ": the depthwise filters " + dw->label() + " must have shape (depth_multiplier * " +
                     "num_channels, 1, rows, cols), got static shape " + dw->type.str());
  // Depthwise: groups = channels, the caller's border mode, stride and dilation.
  Conv2dOptions depthwise;
  depthwise.border_mode = options.border_mode;
  depthwise.subsample = options.subsample;
  depthwise.filter_flip = options.filter_flip;
  depthwise.filter_dilation = options.filter_dilation;
  depthwise.num_groups = num_channels;
  depthwise.input_shape = options.input_shape;
  depthwise.filter_shape = options.depthwise_filter_shape;
  const Var mid = conv2d(input, depthwise_filters, depthwise);
  // Pointwise: 'valid', stride 1, no dilation, one group (Theano's composition).
  Conv2dOptions pointwise;
  pointwise.filter_flip = options.filter_flip;
  pointwise.filter_shape = options.pointwise_filter_shape;
  return conv2d(mid, pointwise_filters, pointwise);
}

Var conv2d_grad_wrt_inputs(const Var& output_grad, const Var& filters, const Var& input_shape,
                           const Conv2dOptions& options) {
  const graph::VarPtr gz = need(output_grad, "conv2d_grad_wrt_inputs"), w = need(filters, "conv2d_grad_wrt_inputs");
  const std::string what = "conv2d_grad_wrt_inputs(" + gz->label() + ", " + w->label() + ")";
  check_hint(what, "filter_shape", options.filter_shape, w);
  if (options.input_shape) throw ValueError(what + ": input_shape is given positionally, not in the options");
  return Var(ops::conv2d_grad_inputs(w, gz, need(input_shape, "conv2d_grad_wrt_inputs"), params_of(options, what)));
}

Var conv2d_grad_wrt_inputs(const Var& output_grad, const Var& filters, const std::vector<int64_t>& input_shape,
                           const Conv2dOptions& options) {
  const std::string what = "conv2d_grad_wrt_inputs";
  Var shape(shape_constant(input_shape, what, "input_shape"));
  const Var out = conv2d_grad_wrt_inputs(output_grad, filters, shape, options);
  if (input_shape.size() == 4) check_hint(what, "input_shape", input_shape, out.node());
  return out;
}

Var conv2d_grad_wrt_weights(const Var& input, const Var& output_grad, const Var& filter_shape,
                            const Conv2dOptions& options) {
  const graph::VarPtr x = need(input, "conv2d_grad_wrt_weights"), gz = need(output_grad, "conv2d_grad_wrt_weights");
  const std::string what = "conv2d_grad_wrt_weights(" + x->label() + ", " + gz->label() + ")";
  check_hint(what, "input_shape", options.input_shape, x);
  if (options.filter_shape) throw ValueError(what + ": filter_shape is given positionally, not in the options");
  return Var(ops::conv2d_grad_weights(x, gz, need(filter_shape, "conv2d_grad_wrt_weights"), params_of(options, what)));
}

Var conv2d_grad_wrt_weights(const Var& input, const Var& output_grad, const std::vector<int64_t>& filter_shape,
                            const Conv2dOptions& options) {
  const std::string what = "conv2d_grad_wrt_weights";
  Var shape(shape_constant(filter_shape, what, "filter_shape"));
  const Var out = conv2d_grad_wrt_weights(input, output_grad, shape, options);
  if (filter_shape.size() == 4) check_hint(what, "filter_shape", filter_shape, out.node());
  return out;
}

}  // namespace theon::tensor
