// grad, jacobian, hessian, disconnected_grad, zero_grad, verify_grad.
#include "bindings.hpp"

#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace theon::py {

void init_grad(nb::module_& m) {
  m.def("grad", [](const Var& cost, const std::vector<Var>& wrt, const std::string& disconnected_inputs,
                   const std::vector<Var>& consider_constant, const std::vector<std::pair<Var, Var>>& known_grads) {
    GradOptions o;
    o.disconnected_inputs = disconnected_inputs;
    o.consider_constant = consider_constant;
    o.known_grads = known_grads;
    return grad(cost, wrt, o);
  }, nb::arg("cost"), nb::arg("wrt"), nb::arg("disconnected_inputs") = "raise",
     nb::arg("consider_constant") = std::vector<Var>{}, nb::arg("known_grads") = std::vector<std::pair<Var, Var>>{});
  m.def("undefined_var", [] { return Var(); });
  m.def("disconnected_grad", &disconnected_grad, nb::arg("x"));
  m.def("zero_grad", &zero_grad, nb::arg("x"));
  m.def("grad_clip", &grad_clip, nb::arg("x"), nb::arg("lower"), nb::arg("upper"));
  m.def("grad_scale", &grad_scale, nb::arg("x"), nb::arg("multiplier"));
  m.def("jacobian", &jacobian, nb::arg("y"), nb::arg("x"));
  m.def("hessian", &hessian, nb::arg("cost"), nb::arg("x"));
  // The callback builds a graph from Python: the GIL stays held throughout.
  m.def("verify_grad", [](const std::function<Var(const std::vector<Var>&)>& fn, const std::vector<nb::object>& points,
                          double eps, double rtol, double atol, uint64_t seed) {
    std::vector<Array> pts;
    for (const nb::object& p : points) pts.push_back(to_array(p));
    VerifyGradOptions o;
    o.eps = eps;
    o.rtol = rtol;
    o.atol = atol;
    o.seed = seed;
    verify_grad(fn, pts, o);
  }, nb::arg("fn"), nb::arg("points"), nb::arg("eps") = 1e-6, nb::arg("rtol") = 1e-4, nb::arg("atol") = 1e-6,
     nb::arg("seed") = 42);
}

}  // namespace theon::py
