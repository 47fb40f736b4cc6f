// debugprint.
#include "bindings.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace theon::py {

void init_printing(nb::module_& m) {
  m.def("debugprint_vars", [](const std::vector<Var>& vs) { return debugprint(vs); }, nb::arg("vars"));
  m.def("debugprint_function", [](const Function& f) { return debugprint(f); }, nb::arg("f"));
}

}  // namespace theon::py
