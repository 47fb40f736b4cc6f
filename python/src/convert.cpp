// NumPy <-> theon::Array without copies, and CUDA arrays of other frameworks (DLPack) in.
//
// In: a theon Buffer is made over the NumPy array's memory. Buffer's deleter is a plain
// function of the data pointer, so the Python object that owns the memory is kept in a
// registry keyed by that pointer (a multimap: several views may share a pointer; any one
// of them keeps the memory alive). The deleter may run on any thread, with or without the
// GIL (a buffer can die inside a call that released it): it takes the GIL to drop the
// reference, and does nothing once the interpreter is finalizing.
// CUDA arrays (torch, CuPy, JAX: any __dlpack__ whose __dlpack_device__ is kDLCUDA) are
// wrapped the same way in a Buffer on that CUDA device, in a second registry whose entries
// also name the device: their deleter first waits for the work Theon issued to it, so the
// producer cannot reuse the memory while a Theon kernel still reads it.
// Out: an nb::ndarray whose owner capsule holds a shared_ptr to the theon Buffer; device
// arrays go out as theon.DeviceArray (device.cpp), to NumPy only through a copy.
#include "bindings.hpp"

#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace theon::py {
namespace {

std::mutex g_mutex;
std::unordered_multimap<void*, PyObject*>* g_owners = new std::unordered_multimap<void*, PyObject*>();  // never freed

// A CUDA array imported through DLPack: the nanobind ndarray holds the producer's
// DLManagedTensor (and so the producer's memory) until it is deleted.
struct DeviceOwner {
  Device device;
  nb::ndarray<nb::ro, nb::device::cuda>* array;
};
std::unordered_multimap<void*, DeviceOwner>* g_device_owners =
    new std::unordered_multimap<void*, DeviceOwner>();  // never freed, guarded by g_mutex

bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

void release_owner(void* data) {
  PyObject* owner = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_owners->find(data);
    if (it == g_owners->end()) return;
    owner = it->second;
    g_owners->erase(it);
  }
  if (!Py_IsInitialized() || finalizing()) return;  // the interpreter frees everything anyway
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(owner);
  PyGILState_Release(state);
}

bool is_numpy_array(nb::handle obj) {
  static PyTypeObject* ndarray_type = [] {
    nb::object t = nb::module_::import_("numpy").attr("ndarray");
    return reinterpret_cast<PyTypeObject*>(t.release().ptr());  // kept for the process
  }();
  return PyObject_TypeCheck(obj.ptr(), ndarray_type);
}

void release_device_owner(void* data) {
  DeviceOwner owner{};
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_device_owners->find(data);
    if (it == g_device_owners->end()) return;
    owner = it->second;
    g_device_owners->erase(it);
  }
  if (!Py_IsInitialized() || finalizing()) return;  // the interpreter frees everything anyway
  // Theon's kernels run on its own stream: let them finish before the producer may reuse
  // the memory. A failing device cannot be reported from a deleter; the release goes on.
  try {
    wait_for_device(owner.device);
  } catch (...) {
  }
  PyGILState_STATE state = PyGILState_Ensure();
  delete owner.array;
  PyGILState_Release(state);
}

// The buffer span a strided view covers: (offset of element 0 from the lowest address in
// elements, bytes from the lowest to one past the highest element), for Buffer's bounds.
struct Span {
  int64_t lo = 0;
  size_t bytes = 0;
  bool empty = false;
};

template <class ND>
Span span_of(const ND& a, size_t isz, Shape& shape, Strides& strides) {
  const size_t nd = a.ndim();
  shape.resize(nd);
  strides.resize(nd);
  Span s;
  int64_t hi = 0;
  for (size_t d = 0; d < nd; ++d) {
    shape[d] = static_cast<int64_t>(a.shape(d));
    strides[d] = a.stride(d);
    if (shape[d] == 0) s.empty = true;
    else if (strides[d] < 0) s.lo += strides[d] * (shape[d] - 1);
    else hi += strides[d] * (shape[d] - 1);
  }
  s.bytes = s.empty ? 0 : static_cast<size_t>(hi - s.lo + 1) * isz;
  if (s.empty) s.lo = 0;
  return s;
}

}  // namespace

DType dtype_from_dlpack(nb::dlpack::dtype dt) {
  using C = nb::dlpack::dtype_code;
  if (dt.lanes == 1) {
    switch (static_cast<C>(dt.code)) {
      case C::Bool:
        if (dt.bits == 8) return DType::Bool;
        break;
      case C::Int:
        if (dt.bits == 8) return DType::Int8;
        if (dt.bits == 16) return DType::Int16;
        if (dt.bits == 32) return DType::Int32;
        if (dt.bits == 64) return DType::Int64;
        break;
      case C::UInt:
        if (dt.bits == 8) return DType::UInt8;
        break;
      case C::Float:
        if (dt.bits == 16) return DType::Float16;
        if (dt.bits == 32) return DType::Float32;
        if (dt.bits == 64) return DType::Float64;
        break;
      case C::Bfloat:
        if (dt.bits == 16) return DType::BFloat16;
        break;
      default:
        break;
    }
  }
  static const char* kinds[] = {"int", "uint", "float", "?", "bfloat", "complex", "bool"};
  std::string kind = dt.code < 7 ? kinds[dt.code] : "code " + std::to_string(dt.code);
  throw TypeError("theon has no dtype for " + kind + std::to_string(dt.bits) +
                  " arrays (supported: bool, int8, int16, int32, int64, uint8, float16, bfloat16, float32, float64)");
}

nb::dlpack::dtype dtype_to_dlpack(DType t) {
  using C = nb::dlpack::dtype_code;
  auto make = [](C c, int bits) { return nb::dlpack::dtype{static_cast<uint8_t>(c), static_cast<uint8_t>(bits), 1}; };
  switch (t) {
    case DType::Bool: return make(C::Bool, 8);
    case DType::Int8: return make(C::Int, 8);
    case DType::Int16: return make(C::Int, 16);
    case DType::Int32: return make(C::Int, 32);
    case DType::Int64: return make(C::Int, 64);
    case DType::UInt8: return make(C::UInt, 8);
    case DType::Float16: return make(C::Float, 16);
    case DType::BFloat16: return make(C::Bfloat, 16);
    case DType::Float32: return make(C::Float, 32);
    case DType::Float64: return make(C::Float, 64);
  }
  throw InternalError("dtype_to_dlpack: unknown dtype");
}

Array to_array(nb::handle obj) {
  Array fast;
  if (plain_numpy_to_array(obj.ptr(), fast)) return fast;
  nb::ndarray<nb::ro, nb::device::cpu> a;
  if (!nb::try_cast(obj, a, /*convert=*/false))
    throw TypeError(std::string("expected a NumPy array (or a CPU array with DLPack), got ") +
                    nb::type_name(obj.type()).c_str());
  DType dtype = dtype_from_dlpack(a.dtype());
  Shape shape;
  Strides strides;
  const size_t isz = itemsize(dtype);
  const Span span = span_of(a, isz, shape, strides);
  char* base = static_cast<char*>(const_cast<void*>(a.data())) + span.lo * static_cast<int64_t>(isz);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_owners->emplace(base, obj.inc_ref().ptr());
  }
  std::shared_ptr<Buffer> buffer;
  try {
    buffer = std::make_shared<Buffer>(base, span.bytes, &release_owner);
  } catch (...) {
    release_owner(base);
    throw;
  }
  return Array(std::move(buffer), dtype, std::move(shape), std::move(strides), -span.lo);
}

std::optional<std::pair<int, int>> dlpack_device_of(nb::handle obj) {
  if (!nb::hasattr(obj, "__dlpack_device__")) return std::nullopt;
  nb::object dev = obj.attr("__dlpack_device__")();
  int type = 0, id = 0;
  bool ok = PyTuple_Check(dev.ptr()) && nb::len(dev) == 2 && nb::try_cast(dev[0], type) && nb::try_cast(dev[1], id);
  if (!ok)
    throw TypeError(std::string(nb::type_name(obj.type()).c_str()) +
                    ".__dlpack_device__() must return (device_type, device_id), got " + nb::repr(dev).c_str());
  return std::make_pair(type, id);
}

Array cuda_array_from_dlpack(nb::handle obj, const std::string& what) {
  const std::string type = nb::type_name(obj.type()).c_str();
  auto dev = dlpack_device_of(obj);
  if (!dev || dev->first != kDLCUDA)
    throw TypeError(what + ": expected a CUDA array (__dlpack_device__() == (2, index)), got " + type);
  const Device device = Device::cuda(dev->second);
  const CudaStatus status = cuda_status();
  if (!status.ok)
    throw DeviceError(what + ": a CUDA array (" + type + " on " + device.str() + ") was given but no CUDA device " +
                      "available: " + status.reason);
  if (dev->second < 0 || dev->second >= status.device_count)
    throw DeviceError(what + ": a " + type + " on " + device.str() + " was given but only " +
                      std::to_string(status.device_count) + " CUDA device(s) are usable");
  // DLPack's stream argument names the consumer's stream; the producer orders its pending
  // writes before it. This asks for the legacy default stream (1): Theon's streams are
  // blocking streams (cuda_runtime.cpp), so they are ordered after it. A versioned capsule (DLPack 1.0) is asked for first
  // (it may be read-only); producers predating max_version, or the stream argument, raise
  // TypeError and are asked again with less.
  nb::object capsule;
  nb::object dunder = obj.attr("__dlpack__");
  try {
    capsule = dunder(nb::arg("stream") = kLegacyDefaultStream, nb::arg("max_version") = nb::make_tuple(1, 0));
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    try {
      capsule = dunder(nb::arg("stream") = kLegacyDefaultStream);
    } catch (nb::python_error& e2) {
      if (!e2.matches(PyExc_TypeError)) throw;
      capsule = dunder();
    }
  }
  nb::ndarray<nb::ro, nb::device::cuda> a;
  if (!nb::try_cast(capsule, a, /*convert=*/false))
    throw TypeError(what + ": " + type + ".__dlpack__() did not return a CUDA DLPack capsule");
  if (a.device_id() != dev->second)
    throw DeviceError(what + ": " + type + " says it is on " + device.str() + " but its DLPack tensor is on cuda" +
                      std::to_string(a.device_id()));
  DType dtype = dtype_from_dlpack(a.dtype());
  Shape shape;
  Strides strides;
  const size_t isz = itemsize(dtype);
  const Span span = span_of(a, isz, shape, strides);
  char* base = static_cast<char*>(const_cast<void*>(a.data())) + span.lo * static_cast<int64_t>(isz);
  auto* keep = new nb::ndarray<nb::ro, nb::device::cuda>(std::move(a));
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_device_owners->emplace(base, DeviceOwner{device, keep});
  }
  std::shared_ptr<Buffer> buffer;
  try {
    buffer = std::make_shared<Buffer>(base, span.bytes, &release_device_owner, device);
  } catch (...) {
    release_device_owner(base);
    throw;
  }
  return Array(std::move(buffer), dtype, std::move(shape), std::move(strides), -span.lo);
}

Array to_any_array(nb::handle obj) {
  if (nb::isinstance<Array>(obj)) return nb::cast<const Array&>(obj);  // a theon.DeviceArray: no copy
  // The common case first: a NumPy array has __dlpack_device__ too, but is a CPU array.
  if (!is_numpy_array(obj)) {
    auto dev = dlpack_device_of(obj);
    if (dev && dev->first == kDLCUDA) return cuda_array_from_dlpack(obj, "theon");
  }
  return to_array(obj);
}

nb::object to_numpy(const Array& a) {
  if (!a.defined()) return nb::none();
  if (!a.on_host()) {
    Array host;
    {
      nb::gil_scoped_release release;  // waits for the device
      host = a.to_host();
    }
    return to_numpy(host);
  }
  if (PyObject* fast = host_array_to_numpy(a)) return nb::steal(fast);
  auto* keep = new std::shared_ptr<Buffer>(a.buffer());
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<Buffer>*>(p); });
  const size_t nd = static_cast<size_t>(a.ndim());
  std::vector<size_t> shape(nd);
  for (size_t d = 0; d < nd; ++d) shape[d] = static_cast<size_t>(a.shape()[d]);
  void* data = a.size() == 0 ? (a.buffer()->data() ? a.buffer()->data() : nullptr) : a.data();
  nb::ndarray<nb::numpy> out(data, nd, shape.data(), owner, a.strides().data(), dtype_to_dlpack(a.dtype()));
  nb::object result = nb::cast(out, nb::rv_policy::automatic);
  if (a.dtype() == DType::Int64) {
    // nanobind describes int64 with the buffer format 'q', which NumPy reads as numpy.longlong;
    // users (and reprs: "dtype=int64") expect numpy.int64, the platform's 'l'. A view, no copy.
    static PyObject* int64 = nb::module_::import_("numpy").attr("dtype")("int64").release().ptr();  // kept
    result = result.attr("view")(nb::handle(int64));
  }
  return result;
}

nb::object to_python(const Array& a) {
  if (a.defined() && !a.on_host()) return nb::cast(a);  // a theon.DeviceArray
  return to_numpy(a);
}

}  // namespace theon::py

namespace theon::py {
size_t live_owner_count() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_owners->size() + live_fast_owner_count();
}
size_t live_device_owner_count() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_device_owners->size();
}
}  // namespace theon::py
