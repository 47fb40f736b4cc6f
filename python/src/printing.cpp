// debugprint, and Print's op (theon.printing.Print hands values to Python as the graph runs).
#include "bindings.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace theon::py {

void init_printing(nb::module_& m) {
  // The printer a Print op calls holds no Python object (it may outlive the interpreter): it
  // looks up theon.printing._dispatch at each call and hands it the key and the value.
  m.def("print_", [](const Var& x, const std::string& message, int64_t key) {
    return print(x, message, [key](const std::string& msg, const Array& value) {
      if (!Py_IsInitialized()) return;
      nb::gil_scoped_acquire gil;
      try {
        nb::module_::import_("theon.printing").attr("_dispatch")(key, to_numpy(value));
      } catch (nb::python_error& e) {
        // Raised inside the compiled call: a TheonRuntimeError naming the Print (the call fails and
        // leaves shared variables unchanged).
        const std::string kind = nb::cast<std::string>(e.type().attr("__name__"));
        const std::string text = nb::cast<std::string>(nb::str(e.value()));
        throw Error("Print '" + msg + "': its global_fn raised " + kind + ": " + text);
      }
    });
  }, nb::arg("x"), nb::arg("message"), nb::arg("key"),
  "x, printed as the graph runs: theon.printing._dispatch(key, value) is called with its value.");
  m.def("debugprint_vars", [](const std::vector<Var>& vs) { return debugprint(vs); }, nb::arg("vars"));
  m.def("debugprint_function", [](const Function& f) { return debugprint(f); }, nb::arg("f"));
}

}  // namespace theon::py
