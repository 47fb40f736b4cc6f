// theon::tensor convolution builders (theon/conv.hpp) for theon.tensor.nnet.conv2d and
// theon.tensor.nnet.abstract_conv; the Python side maps Theano's keyword arguments.
#include "bindings.hpp"

#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace theon::py {
namespace {

// border: "valid"/"full"/"half", or "" with explicit pads.
tensor::Conv2dOptions options(const std::string& border, std::array<int64_t, 2> pads,
                              std::array<int64_t, 2> subsample, bool filter_flip,
                              std::array<int64_t, 2> filter_dilation, int64_t num_groups,
                              std::optional<std::vector<int64_t>> input_shape,
                              std::optional<std::vector<int64_t>> filter_shape) {
  tensor::Conv2dOptions o;
  o.border_mode = border.empty() ? tensor::BorderMode(pads[0], pads[1]) : tensor::BorderMode(border);
  o.subsample = subsample;
  o.filter_flip = filter_flip;
  o.filter_dilation = filter_dilation;
  o.num_groups = num_groups;
  o.input_shape = std::move(input_shape);
  o.filter_shape = std::move(filter_shape);
  return o;
}

}  // namespace

void init_conv(nb::module_& m) {
  nb::module_ t = nb::borrow<nb::module_>(m.attr("tensor"));
  t.def("conv2d",
        [](const Var& x, const Var& w, const std::string& border, std::array<int64_t, 2> pads,
           std::array<int64_t, 2> subsample, bool flip, std::array<int64_t, 2> dilation, int64_t groups,
           std::optional<std::vector<int64_t>> input_shape, std::optional<std::vector<int64_t>> filter_shape) {
          return tensor::conv2d(x, w, options(border, pads, subsample, flip, dilation, groups, input_shape, filter_shape));
        },
        nb::arg("input"), nb::arg("filters"), nb::arg("border"), nb::arg("pads"), nb::arg("subsample"),
        nb::arg("filter_flip"), nb::arg("filter_dilation"), nb::arg("num_groups"), nb::arg("input_shape").none(),
        nb::arg("filter_shape").none());
  t.def("conv2d_grad_wrt_inputs",
        [](const Var& gz, const Var& w, const Var& input_shape, const std::string& border, std::array<int64_t, 2> pads,
           std::array<int64_t, 2> subsample, bool flip, std::array<int64_t, 2> dilation, int64_t groups,
           std::optional<std::vector<int64_t>> filter_shape) {
          return tensor::conv2d_grad_wrt_inputs(
              gz, w, input_shape, options(border, pads, subsample, flip, dilation, groups, std::nullopt, filter_shape));
        },
        nb::arg("output_grad"), nb::arg("filters"), nb::arg("input_shape"), nb::arg("border"), nb::arg("pads"),
        nb::arg("subsample"), nb::arg("filter_flip"), nb::arg("filter_dilation"), nb::arg("num_groups"),
        nb::arg("filter_shape").none());
  t.def("conv2d_grad_wrt_weights",
        [](const Var& x, const Var& gz, const Var& filter_shape, const std::string& border, std::array<int64_t, 2> pads,
           std::array<int64_t, 2> subsample, bool flip, std::array<int64_t, 2> dilation, int64_t groups,
           std::optional<std::vector<int64_t>> input_shape) {
          return tensor::conv2d_grad_wrt_weights(
              x, gz, filter_shape, options(border, pads, subsample, flip, dilation, groups, input_shape, std::nullopt));
        },
        nb::arg("input"), nb::arg("output_grad"), nb::arg("filter_shape"), nb::arg("border"), nb::arg("pads"),
        nb::arg("subsample"), nb::arg("filter_flip"), nb::arg("filter_dilation"), nb::arg("num_groups"),
        nb::arg("input_shape").none());
}

}  // namespace theon::py
