// Array helpers: dtype names, zero-copy round trips (used by the tests), randn/rand.
#include "bindings.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace theon::py {

size_t live_owner_count();

void init_array(nb::module_& m) {
  m.def("to_theon_and_back", [](nb::handle a) { return to_numpy(to_array(a)); }, nb::arg("a"),
        "A NumPy view of the theon Array made from `a`: both conversions are zero-copy.");
  m.def("array_data_ptr", [](nb::handle a) { return reinterpret_cast<uintptr_t>(to_array(a).data()); },
        nb::arg("a"), "The element-0 address of the theon Array made from `a` (no copy).");
  m.def("live_numpy_owners", &live_owner_count,
        "How many NumPy arrays theon Buffers currently keep alive (for leak tests).");
  m.def("dtype_name", [](const std::string& s) { return std::string(dtype_name(parse_dtype(s))); }, nb::arg("name"),
        "The canonical name of a NumPy/Theano dtype name; TypeError for a bad one.");
  m.def("can_cast_safely", [](const std::string& a, const std::string& b) {
    return can_cast_safely(parse_dtype(a), parse_dtype(b));
  });
  m.def("promote_types", [](const std::string& a, const std::string& b) {
    return std::string(dtype_name(promote_types(parse_dtype(a), parse_dtype(b))));
  });
  m.def("randn", [](const Shape& shape, uint64_t seed, std::optional<std::string> dtype) {
    return to_numpy(Array::randn(shape, seed, dtype ? std::optional<DType>(parse_dtype(*dtype)) : std::nullopt));
  }, nb::arg("shape"), nb::arg("seed"), nb::arg("dtype") = nb::none());
}

}  // namespace theon::py
