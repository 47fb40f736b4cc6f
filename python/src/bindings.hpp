// Shared declarations of the theon._core binding files: one init_* per API area and the
// NumPy <-> theon::Array conversions.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <theon/theon.hpp>

#include <string>

namespace nb = nanobind;

namespace theon::py {

void init_errors(nb::module_& m);
void init_array(nb::module_& m);
void init_var(nb::module_& m);
void init_tensor(nb::module_& m);
void init_function(nb::module_& m);
void init_grad(nb::module_& m);
void init_config(nb::module_& m);
void init_printing(nb::module_& m);

/// A theon::Array viewing a NumPy array (or any DLPack/buffer-protocol CPU array) without a
/// copy; the array's buffer keeps a reference to the Python object until the last view of it
/// is gone. Throws TypeError for an object that is not such an array or has no theon dtype.
Array to_array(nb::handle obj);
/// A NumPy array viewing `a`'s buffer (zero-copy; the ndarray owns a reference to it).
nb::object to_numpy(const Array& a);

DType dtype_from_dlpack(nb::dlpack::dtype dt);
nb::dlpack::dtype dtype_to_dlpack(DType t);

}  // namespace theon::py
