// theon/serialize.hpp for theon/_pickle.py: graph nodes as records and back.
#include "bindings.hpp"

#include <theon/serialize.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>

namespace theon::py {

void init_serialize(nb::module_& m) {
  nb::class_<NodeRecord>(m, "NodeRecord", "A graph node as pickling records it (theon::NodeRecord).")
      .def_ro("kind", &NodeRecord::kind)
      .def_ro("props", &NodeRecord::props)
      .def_ro("inputs", &NodeRecord::inputs)
      .def_ro("outputs", &NodeRecord::outputs)
      .def_ro("index", &NodeRecord::index);
  m.def("node_record", &node_record, nb::arg("v"),
        "The node computing v as a record (None for a leaf); NotImplementedError when make_op cannot rebuild its op.");
  m.def("rebuild_node", [](const std::string& kind, const std::vector<std::pair<std::string, std::string>>& props,
                           const std::vector<Var>& inputs,
                           const std::vector<std::tuple<std::string, std::vector<int64_t>, std::string, std::string>>& outputs) {
    std::vector<OutputRecord> outs;
    for (const auto& [dtype, shape, name, context] : outputs) outs.push_back({dtype, shape, name, context});
    return rebuild_node(kind, props, inputs, outs);
  }, nb::arg("kind"), nb::arg("props"), nb::arg("inputs"), nb::arg("outputs"),
     "The outputs of a new node: make_op(kind, props) over inputs; outputs are (dtype, shape, name, context) "
     "tuples (context '' for none).");
  m.def("is_weak_constant", &is_weak_constant, nb::arg("v"));
  m.def("make_constant", [](nb::handle value, bool weak, const std::string& name) {
    return make_constant(to_array(value), weak, name);
  }, nb::arg("value"), nb::arg("weak"), nb::arg("name") = "");
}

}  // namespace theon::py
