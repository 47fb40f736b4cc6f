// 2-d convolution, Theano 1.0's theano.tensor.nnet.conv2d and its two gradients
// (abstract_conv's AbstractConv2d, AbstractConv2d_gradInputs, AbstractConv2d_gradWeights).
//
// Layouts are Theano's: input (batch, channels, rows, cols), filters (out_channels,
// channels / num_groups, rows, cols), output (batch, out_channels, out_rows, out_cols).
// With filter_flip (the default) the filters are flipped along both spatial axes (a true
// convolution); without it the op is a cross-correlation. One ConvParams describes the three
// kinds; conv_geometry resolves it against run-time shapes (the border mode's pads depend on
// the filter size) and is the one place the output-shape rule and the shape checks live, for
// infer_shape and for every backend's kernels.
//
//   out[n, g*Mg + m, y, x] = sum_{c < Cg, i < kh, j < kw}
//       in[n, g*Cg + c, y*sh - ph + i*dh, x*sw - pw + j*dw] * w[g*Mg + m, c, i', j']
//   with (i', j') = (kh-1-i, kw-1-j) when flipping, (i, j) otherwise; reads outside the input
//   are zeros (the padding).
#pragma once
#include "graph/op.hpp"

#include <theon/dtype.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace theon::ops {

enum class ConvBorder : uint8_t { Valid, Full, Half, Explicit };

/// What a conv2d call fixes: border mode (with its pads when explicit), stride (subsample),
/// dilation, groups and flipping.
struct ConvParams {
  ConvBorder border = ConvBorder::Valid;
  int64_t pad_h = 0, pad_w = 0;  // ConvBorder::Explicit only
  int64_t stride_h = 1, stride_w = 1;
  int64_t dil_h = 1, dil_w = 1;
  int64_t groups = 1;
  bool flip = true;

  /// "valid", "full", "half" or "(1, 2)".
  std::string border_text() const;
  graph::OpProps props() const;
  bool operator==(const ConvParams&) const = default;
};

/// The epilogue a Conv2d (forward) node may carry, folded in by the conv_epilogue rewrite
/// (src/rewrite/passes/conv_epilogue.cpp): out = act(conv(x, w) + bias[channel]). With a bias
/// the node has a third input, a vector of the output channels' size (C_out,); the
/// activation is none or relu (Theon's relu: NaN stays NaN). The gradient kinds never carry one.
enum class ConvActivation : uint8_t { None, Relu };
struct ConvEpilogue {
  bool bias = false;
  ConvActivation act = ConvActivation::None;
  bool any() const { return bias || act != ConvActivation::None; }
  /// "none", "bias", "relu" or "bias+relu" (the `epilogue` prop).
  std::string text() const;
  bool operator==(const ConvEpilogue&) const = default;
};

/// Every size of one convolution, resolved at run-time shapes.
struct ConvGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t m = 0, kh = 0, kw = 0;        // filters: (m, c / groups, kh, kw)
  int64_t oh = 0, ow = 0;               // output rows and cols
  int64_t ph = 0, pw = 0;               // resolved top/left pads
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, groups = 1;
  bool flip = true;
  int64_t cg() const { return c / groups; }
  int64_t mg() const { return m / groups; }
};

/// The geometry of a convolution of `input` (n, c, h, w) with `filters` (m, c/groups, kh, kw).
/// Throws ShapeError naming `what` and the shapes: channels not matching filters * groups,
/// out_channels not divisible by groups, a (dilated) filter larger than the padded input, a
/// dilated filter or padded input whose size leaves int64.
ConvGeometry conv_geometry(const ConvParams& p, const Shape& input, const Shape& filters, const std::string& what);

/// Static output dims for static input/filter dims (kUnknownDim where not known); ShapeError
/// naming `what` for a dilated filter or padded input whose size leaves int64.
std::vector<int64_t> conv_static_output(const ConvParams& p, const std::vector<int64_t>& input,
                                        const std::vector<int64_t>& filters, const std::string& what);

/// The three kinds: Conv2d (inputs: input, filters), Conv2dGradInputs (inputs: filters,
/// output_grad, input_shape) and Conv2dGradWeights (inputs: input, output_grad,
/// filter_shape). The shape inputs are int64 vectors of length 2 (rows, cols) or 4 (only the
/// last two are read), read on the host: with a stride the output does not determine them.
class Conv2d final : public graph::Op {
 public:
  Conv2d(graph::OpKind kind, ConvParams params, ConvEpilogue epilogue = {})
      : kind_(kind), params_(params), epilogue_(epilogue) {}
  const ConvParams& params() const { return params_; }
  /// Conv2d only: bias (input 2) and activation applied to the output; none for the gradients.
  const ConvEpilogue& epilogue() const { return epilogue_; }
  /// The op when `op` is one of the three conv kinds, else nullptr.
  static const Conv2d* of(const graph::Op& op);

  graph::OpKind kind() const override { return kind_; }
  /// The ConvParams props, then `epilogue` (e.g. "bias+relu") when the node carries one.
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// Conv2d: (grad_inputs(w, gz, shape(x)), grad_weights(x, gz, shape(w))). The gradient ops
  /// are linear in both their tensor inputs, so their own L_op is exact (grad of grad):
  /// GradInputs(w, gz): w gets grad_weights(g, gz, shape(w)), gz gets conv2d(g, w);
  /// GradWeights(x, gz): x gets grad_inputs(g, gz, shape(x)), gz gets conv2d(x, g). The
  /// shape inputs are disconnected. With an epilogue the output gradient is first masked by
  /// out > 0 (relu) and the bias gets its sum over (batch, rows, cols).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  /// "conv2d(x, w)", "conv2d_grad_wrt_inputs(gz, w)", "conv2d_grad_wrt_weights(x, gz)"; with an
  /// epilogue "relu(conv2d(x, w) + b)".
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;

  /// The geometry of `node` (one of the three kinds) at run-time input values: shape inputs
  /// are read from `inputs` (host arrays) where the kind has one.
  ConvGeometry geometry(const graph::Apply& node, const std::vector<Array>& inputs) const;
  ConvGeometry geometry_from_shapes(const graph::Apply& node, const std::vector<Shape>& shapes,
                                    const int64_t* shape_values) const;

 private:
  graph::OpKind kind_;
  ConvParams params_;
  ConvEpilogue epilogue_;
};

/// Builders (checks name the user's variables; float32 and float64, mixed ones promote).
/// `input_shape` / `filter_shape` of the gradients are integer vectors of length 2 or 4.
graph::VarPtr conv2d(const graph::VarPtr& input, const graph::VarPtr& filters, const ConvParams& p);
/// conv2d with an epilogue: act(conv2d(input, filters) + bias[c]); `bias` null for none, else
/// a float vector of the output channels' size (cast to the convolution's dtype). Checks name
/// the variables and shapes.
graph::VarPtr conv2d(const graph::VarPtr& input, const graph::VarPtr& filters, const ConvParams& p,
                     const graph::VarPtr& bias, ConvActivation act);
graph::VarPtr conv2d_grad_inputs(const graph::VarPtr& filters, const graph::VarPtr& output_grad,
                                 const graph::VarPtr& input_shape, const ConvParams& p);
graph::VarPtr conv2d_grad_weights(const graph::VarPtr& input, const graph::VarPtr& output_grad,
                                  const graph::VarPtr& filter_shape, const ConvParams& p);

}  // namespace theon::ops
