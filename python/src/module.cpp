// theon._core: the compiled half of the `theon` Python package.
#include "bindings.hpp"

NB_MODULE(_core, m) {
  m.doc() = "Theon's C++ core (nanobind); use the `theon` package, not this module directly.";
  theon::py::init_numpy_capi();
  theon::py::init_errors(m);
  theon::py::init_array(m);
  theon::py::init_device(m);
  theon::py::init_var(m);
  theon::py::init_tensor(m);
  theon::py::init_conv(m);
  theon::py::init_function(m);
  theon::py::init_grad(m);
  theon::py::init_config(m);
  theon::py::init_printing(m);
  theon::py::init_random(m);
  theon::py::init_graph(m);
  theon::py::init_pool(m);
  theon::py::init_contexts(m);
  theon::py::init_serialize(m);
}
