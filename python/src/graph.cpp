// theon/graph.hpp for theon.gof.graph, theon.clone and theon.printing: node inspection and clone.
#include "bindings.hpp"

#include <theon/graph.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace theon::py {

void init_graph(nb::module_& m) {
  nb::class_<ApplyInfo>(m, "ApplyInfo", "The node computing an op result (theon::ApplyInfo).")
      .def_ro("op", &ApplyInfo::op)
      .def_ro("op_kind", &ApplyInfo::op_kind)
      .def_ro("op_props", &ApplyInfo::op_props)
      .def_ro("op_pure", &ApplyInfo::op_pure)
      .def_ro("inputs", &ApplyInfo::inputs)
      .def_ro("outputs", &ApplyInfo::outputs)
      .def_ro("index", &ApplyInfo::index)
      .def_ro("id", &ApplyInfo::id);
  m.def("var_role", [](const Var& v) {
    switch (role(v)) {
      case VarRole::Input: return "input";
      case VarRole::Output: return "output";
      case VarRole::Constant: return "constant";
      case VarRole::Shared: return "shared";
    }
    return "";
  }, nb::arg("v"), "'input', 'output', 'constant' or 'shared'.");
  m.def("var_owner", &owner, nb::arg("v"), "The ApplyInfo of the node computing v, or None for a leaf.");
  m.def("constant_value", [](const Var& v) { return to_numpy(constant_value(v)); }, nb::arg("v"));
  m.def("clone", &clone, nb::arg("outputs"), nb::arg("replace"), nb::arg("strict") = true,
        nb::arg("share_inputs") = true);
}

}  // namespace theon::py
