// Var, SharedVar, shared(), constant(), literal() and indexing.
#include "bindings.hpp"

#include <theon/default_update.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace theon::py {
namespace {

Bound to_bound(nb::handle h) {
  if (h.is_none()) return Bound{};
  if (nb::isinstance<Var>(h)) return Bound(nb::cast<const Var&>(h));
  if (PyIndex_Check(h.ptr())) return Bound(nb::cast<int64_t>(h));
  throw TypeError(std::string("slice bounds must be integers, None or integer scalar variables, got ") +
                  nb::type_name(h.type()).c_str());
}

Index to_index(nb::handle h) {
  if (nb::isinstance<Var>(h)) return Index(nb::cast<const Var&>(h));
  if (PySlice_Check(h.ptr()))
    return Index(Slice{to_bound(h.attr("start")), to_bound(h.attr("stop")), to_bound(h.attr("step"))});
  if (PyIndex_Check(h.ptr())) return Index(nb::cast<int64_t>(h));
  throw TypeError(std::string("indices must be integers, slices or integer variables, got ") +
                  nb::type_name(h.type()).c_str());
}

}  // namespace

void init_var(nb::module_& m) {
  nb::class_<Var>(m, "Var", "A symbolic tensor (the graph variable behind theon.tensor.TensorVariable).")
      .def_prop_ro("name", &Var::name)
      .def("set_name", [](Var& v, const std::string& n) { v.set_name(n); })
      .def_prop_ro("dtype", [](const Var& v) { return std::string(dtype_name(v.dtype())); })
      .def_prop_ro("ndim", &Var::ndim)
      .def_prop_ro("broadcastable", &Var::broadcastable)
      .def_prop_ro("static_shape", &Var::static_shape)
      .def("type_str", &Var::type_str)
      .def_prop_ro("is_output", &Var::is_output)
      .def("id", [](const Var& v) { return reinterpret_cast<uintptr_t>(v.node().get()); },
           "An identity for the graph variable (equal for copies of one Var).")
      .def("T", &Var::T)
      .def("transpose", &Var::transpose, nb::arg("axes") = std::vector<int>{})
      .def("dimshuffle", &Var::dimshuffle, nb::arg("pattern"), "Theano's dimshuffle; -1 stands for 'x'.")
      .def("reshape", [](const Var& v, const std::vector<int64_t>& s) { return v.reshape(s); })
      .def("reshape_sym", [](const Var& v, const Var& s) { return tensor::reshape(v, s); })
      .def("flatten", &Var::flatten, nb::arg("ndim") = 1)
      .def("astype", [](const Var& v, const std::string& dt) { return v.astype(parse_dtype(dt)); })
      .def("shape", &Var::shape)
      .def("getitem", [](const Var& v, const std::vector<nb::object>& items) {
        std::vector<Index> idx;
        idx.reserve(items.size());
        for (const nb::object& o : items) idx.push_back(to_index(o));
        return v[idx];
      }, nb::arg("indices"), "x[i0, i1, ...] with ints, slices (int/None/Var bounds) and integer Vars.");

  nb::class_<SharedVar, Var>(m, "SharedVar", "A variable with a persistent value.")
      .def("get_value", [](const SharedVar& s, bool borrow) { return to_numpy(s.get_value(borrow)); },
           nb::arg("borrow") = false, "The value as NumPy (copied from the GPU when it lives there).")
      .def("set_value", [](SharedVar& s, nb::handle value, bool borrow) {
        // The Array views the NumPy memory (or the device memory of a DeviceArray or a CUDA
        // DLPack array); set_value copies it unless borrow.
        Array a = to_any_array(value);
        if (!borrow && !a.on_host()) {
          // A device value is not to be aliased: a host copy nobody else sees, stored as is
          // (or copied to the device where the variable lives).
          nb::gil_scoped_release release;  // waits for the device
          a = a.to_host();
          borrow = true;
        }
        s.set_value(a, borrow);
      }, nb::arg("value"), nb::arg("borrow") = false,
         "A NumPy array, a theon.DeviceArray or a CUDA DLPack array; copied unless borrow=True.");

  m.def("shared", [](nb::handle value, const std::string& name, bool borrow, const std::string& target,
                     const std::vector<bool>& broadcastable) {
    return shared(to_array(value), name, SharedOptions{borrow, target, broadcastable});
  }, nb::arg("value"), nb::arg("name") = "", nb::arg("borrow") = false, nb::arg("target") = "",
     nb::arg("broadcastable") = std::vector<bool>{});
  m.def("as_shared", [](const Var& v) {
    if (role(v) != VarRole::Shared) throw TypeError("as_shared: '" + v.name() + "' is not a shared variable");
    return SharedVar(v.node());
  }, nb::arg("v"), "The SharedVar of a shared graph variable met as a Var (a node's input, a clone).");
  m.def("set_default_update", &set_default_update, nb::arg("shared"), nb::arg("update").none(),
        "Theano's shared.default_update = expr (None removes it); held weakly.");
  m.def("default_update", &default_update, nb::arg("shared"));
  m.def("constant", [](nb::handle value, const std::string& name) { return constant(to_array(value), name); },
        nb::arg("value"), nb::arg("name") = "");
  m.def("symbolic_inputs", &symbolic_inputs, nb::arg("outputs"),
        "The symbolic inputs (not constants or shared variables) the outputs depend on.");
  m.def("literal", &literal, nb::arg("value"), nb::arg("integral"),
        "A weak (NEP 50) literal: a Python int or float in an expression.");
}

}  // namespace theon::py
