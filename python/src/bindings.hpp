// Shared declarations of the theon._core binding files: one init_* per API area and the
// NumPy <-> theon::Array conversions.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <theon/theon.hpp>

#include <optional>
#include <string>
#include <utility>

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
void init_device(nb::module_& m);
void init_random(nb::module_& m);
void init_graph(nb::module_& m);
void init_pool(nb::module_& m);
void init_contexts(nb::module_& m);
void init_serialize(nb::module_& m);
/// Convolution builders (conv.cpp), added to the `tensor` submodule.
void init_conv(nb::module_& m);

/// DLPack's device type of CUDA memory, and the stream argument naming CUDA's legacy default stream.
constexpr int kDLCUDA = 2;
constexpr int kLegacyDefaultStream = 1;

/// A theon::Array viewing a NumPy array (or any DLPack/buffer-protocol CPU array) without a
/// copy; the array's buffer keeps a reference to the Python object until the last view of it
/// is gone. Throws TypeError for an object that is not such an array or has no theon dtype.
Array to_array(nb::handle obj);
/// A NumPy array viewing `a`'s buffer (zero-copy; the ndarray owns a reference to it). A
/// device array is copied to the host first (waiting for the device, GIL released).
nb::object to_numpy(const Array& a);
/// What a function output becomes in Python: a NumPy view of a host array, a
/// theon.DeviceArray (the bound theon::Array, no copy) for a device array.
nb::object to_python(const Array& a);

/// (device_type, device_id) from obj.__dlpack_device__(), or nullopt without the method.
std::optional<std::pair<int, int>> dlpack_device_of(nb::handle obj);
/// A theon::Array on cuda<N> viewing a CUDA array of another framework without a copy; the
/// producer's DLPack tensor is released when the last view of it dies (after Theon's work on
/// the device is done). DeviceError naming `what` and cuda_status().reason without a usable
/// CUDA device; TypeError for an object that is not a CUDA array.
Array cuda_array_from_dlpack(nb::handle obj, const std::string& what);
/// A function input or shared value: a theon.DeviceArray (its Array, no copy), a CUDA DLPack
/// array (cuda_array_from_dlpack) or a CPU array (to_array).
Array to_any_array(nb::handle obj);

/// Blocks until the work Theon issued to `device` is done (nothing for the CPU).
void wait_for_device(Device device);

DType dtype_from_dlpack(nb::dlpack::dtype dt);

/// NumPy's C API (numpy_capi.cpp): loaded once when the module is imported.
void init_numpy_capi();
/// The per-call fast path: an exact numpy.ndarray of a theon dtype in native byte order into
/// `out` (zero-copy, no lock); false, touching nothing, for anything else (subclasses,
/// other dtypes, foreign byte order), which then takes to_array's general path.
bool plain_numpy_to_array(PyObject* obj, Array& out);
/// A new reference to a numpy.ndarray viewing host array `a` (zero-copy), or nullptr where
/// NumPy has no such dtype (bfloat16) or `a` has no memory (size 0 without a buffer).
PyObject* host_array_to_numpy(const Array& a);
/// How many NumPy arrays plain_numpy_to_array's views keep alive.
size_t live_fast_owner_count();
nb::dlpack::dtype dtype_to_dlpack(DType t);

}  // namespace theon::py
