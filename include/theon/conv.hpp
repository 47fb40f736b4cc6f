// Convolution: Theano 1.0's theano.tensor.nnet.conv2d, separable_conv2d and the two gradients
// of theano.tensor.nnet.abstract_conv (conv2d_grad_wrt_inputs, conv2d_grad_wrt_weights).
// Included by theon/tensor.hpp; the names are also in nnet::.
//
//   Var x = tensor::tensor4("x"), w = tensor::tensor4("w");
//   Var y = tensor::conv2d(x, w, {.border_mode = "half", .subsample = {2, 2}});
//   Var z = tensor::conv2d(x, w, {.border_mode = {1, 2}, .filter_flip = false, .num_groups = 2});
//
// Layouts are Theano's: input (batch, channels, rows, cols), filters (out_channels,
// channels / num_groups, rows, cols). docs/guide/conv.md has the border modes and what runs where.
#pragma once
#include <theon/var.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace theon::tensor {

/// Theano's border_mode: "valid" (no padding), "full" (pad by the dilated filter size - 1),
/// "half" (pad by half the dilated filter size, rounded down: same-size output for odd
/// filters at stride 1), an int (both axes) or a pair of ints (rows, cols).
struct BorderMode {
  std::string mode = "valid";  // "valid", "full", "half", or "" for explicit pads
  int64_t pad_h = 0, pad_w = 0;
  BorderMode() = default;
  BorderMode(const char* m) : mode(m) {}
  BorderMode(std::string m) : mode(std::move(m)) {}
  BorderMode(int64_t pad) : mode(""), pad_h(pad), pad_w(pad) {}
  BorderMode(int pad) : BorderMode(static_cast<int64_t>(pad)) {}
  BorderMode(int64_t ph, int64_t pw) : mode(""), pad_h(ph), pad_w(pw) {}
  BorderMode(std::array<int64_t, 2> p) : mode(""), pad_h(p[0]), pad_w(p[1]) {}
};

/// The keyword arguments of Theano's conv2d (and of its gradients). input_shape and
/// filter_shape are optional hints (-1 for an unknown entry): they are checked against the
/// variables' static shapes and refine them.
struct Conv2dOptions {
  BorderMode border_mode = "valid";
  std::array<int64_t, 2> subsample = {1, 1};
  bool filter_flip = true;
  std::array<int64_t, 2> filter_dilation = {1, 1};
  int64_t num_groups = 1;
  std::optional<std::vector<int64_t>> input_shape = std::nullopt;
  std::optional<std::vector<int64_t>> filter_shape = std::nullopt;
};

/// Theano's conv2d(input, filters, ...): a 2-d convolution (filter_flip, the default) or
/// cross-correlation of a 4-d input with 4-d filters; float32 and float64 (mixed: float64).
Var conv2d(const Var& input, const Var& filters, const Conv2dOptions& options = {});
/// The gradient of conv2d with respect to its input, given the output's gradient:
/// input_shape is the input's shape (4 entries, the first two may be -1; or 2: rows, cols);
/// needed because a stride leaves it open.
Var conv2d_grad_wrt_inputs(const Var& output_grad, const Var& filters, const std::vector<int64_t>& input_shape,
                           const Conv2dOptions& options = {});
/// As above with a symbolic integer vector (length 4 or 2; the last two entries are read).
Var conv2d_grad_wrt_inputs(const Var& output_grad, const Var& filters, const Var& input_shape,
                           const Conv2dOptions& options = {});
/// The gradient of conv2d with respect to its filters: filter_shape is the filters' shape
/// (4 entries, the first two may be -1; or 2: rows, cols).
Var conv2d_grad_wrt_weights(const Var& input, const Var& output_grad, const std::vector<int64_t>& filter_shape,
                            const Conv2dOptions& options = {});
Var conv2d_grad_wrt_weights(const Var& input, const Var& output_grad, const Var& filter_shape,
                            const Conv2dOptions& options = {});

/// The keyword arguments of Theano's separable_conv2d: border_mode, subsample and
/// filter_dilation apply to the depthwise convolution only (the pointwise one is 'valid',
/// stride 1, no dilation); filter_flip to both. The shapes are optional hints (-1 unknown).
struct SeparableConv2dOptions {
  std::optional<std::vector<int64_t>> input_shape = std::nullopt;
  std::optional<std::vector<int64_t>> depthwise_filter_shape = std::nullopt;
  std::optional<std::vector<int64_t>> pointwise_filter_shape = std::nullopt;
  BorderMode border_mode = "valid";
  std::array<int64_t, 2> subsample = {1, 1};
  bool filter_flip = true;
  std::array<int64_t, 2> filter_dilation = {1, 1};
};

/// Theano 1.0's separable_conv2d(input, depthwise_filters, pointwise_filters, num_channels,
/// ...): a depthwise convolution (conv2d with num_groups = num_channels) of the
/// (batch, num_channels, rows, cols) input with depthwise_filters (depth_multiplier *
/// num_channels, 1, rows, cols), then a pointwise conv2d with pointwise_filters
/// (out_channels, depth_multiplier * num_channels, 1, 1).
Var separable_conv2d(const Var& input, const Var& depthwise_filters, const Var& pointwise_filters,
                     int64_t num_channels, const SeparableConv2dOptions& options = {});

}  // namespace theon::tensor

namespace theon::nnet {
using tensor::conv2d;
using tensor::separable_conv2d;
using tensor::conv2d_grad_wrt_inputs;
using tensor::conv2d_grad_wrt_weights;
}  // namespace theon::nnet
