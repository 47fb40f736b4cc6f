// Pooling (theon/pool.hpp) and batch normalization (theon/bn.hpp) for
// theon.tensor.signal.pool and theon.tensor.nnet.bn, which give Theano's signatures
// (deprecated aliases, defaults, warnings) and convert arguments to Vars.
#include "bindings.hpp"

#include <theon/bn.hpp>
#include <theon/pool.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace theon::py {
namespace {

nnet::BnAxes bn_axes(const std::string& name, const std::vector<int>& axes) {
  if (name.empty()) return nnet::BnAxes(axes);
  return nnet::BnAxes(name);
}

}  // namespace

void init_pool(nb::module_& m) {
  nb::module_ p = m.def_submodule("pool", "theon::tensor pooling (theano.tensor.signal.pool)");
  using V = std::vector<int64_t>;
  p.def("pool_2d", &tensor::pool_2d, nb::arg("x"), nb::arg("ws"), nb::arg("ignore_border"), nb::arg("stride"),
        nb::arg("pad"), nb::arg("mode"));
  p.def("pool_3d", &tensor::pool_3d, nb::arg("x"), nb::arg("ws"), nb::arg("ignore_border"), nb::arg("stride"),
        nb::arg("pad"), nb::arg("mode"));
  p.def("max_pool_2d_same_size", &tensor::max_pool_2d_same_size, nb::arg("x"), nb::arg("patch_size"));
  p.def("max_pool_grad", [](const Var& x, const Var& z, const Var& gz, const V& ws, bool ib, const V& st, const V& pad) {
    return tensor::max_pool_grad(x, z, gz, ws, ib, st, pad);
  });
  p.def("average_pool_grad", [](const Var& x, const Var& gz, const V& ws, bool ib, const V& st, const V& pad,
                                const std::string& mode) {
    return tensor::average_pool_grad(x, gz, ws, ib, st, pad, mode);
  });

  nb::module_ b = m.def_submodule("bn", "theon::nnet batch normalization (theano.tensor.nnet.bn)");
  b.def("batch_normalization", &nnet::batch_normalization, nb::arg("inputs"), nb::arg("gamma"), nb::arg("beta"),
        nb::arg("mean"), nb::arg("std"), nb::arg("mode"));
  b.def("batch_normalization_train",
        [](const Var& x, const Var& gamma, const Var& beta, const std::string& axes_name, const std::vector<int>& axes,
           double epsilon, double factor, std::optional<Var> running_mean, std::optional<Var> running_var) {
          const nnet::BnTrainResult r =
              nnet::batch_normalization_train(x, gamma, beta, bn_axes(axes_name, axes), epsilon, factor,
                                              running_mean.value_or(Var()), running_var.value_or(Var()));
          std::vector<Var> out = {r.out, r.mean, r.invstd};
          if (r.running_mean.defined()) {
            out.push_back(r.running_mean);
            out.push_back(r.running_var);
          }
          return out;
        });
  b.def("batch_normalization_test",
        [](const Var& x, const Var& gamma, const Var& beta, const Var& mean, const Var& var,
           const std::string& axes_name, const std::vector<int>& axes, double epsilon) {
          return nnet::batch_normalization_test(x, gamma, beta, mean, var, bn_axes(axes_name, axes), epsilon);
        });
}

}  // namespace theon::py
