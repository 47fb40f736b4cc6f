// NumPy <-> theon::Array without copies.
//
// In: a theon Buffer is made over the NumPy array's memory. Buffer's deleter is a plain
// function of the data pointer, so the Python object that owns the memory is kept in a
// registry keyed by that pointer (a multimap: several views may share a pointer; any one
// of them keeps the memory alive). The deleter may run on any thread, with or without the
// GIL (a buffer can die inside a call that released it): it takes the GIL to drop the
// reference, and does nothing once the interpreter is finalizing.
// Out: an nb::ndarray whose owner capsule holds a shared_ptr to the theon Buffer.
#include "bindings.hpp"

#include <mutex>
#include <unordered_map>

namespace theon::py {
namespace {

std::mutex g_mutex;
std::unordered_multimap<void*, PyObject*>* g_owners = new std::unordered_multimap<void*, PyObject*>();  // never freed

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
  nb::ndarray<nb::ro, nb::device::cpu> a;
  if (!nb::try_cast(obj, a, /*convert=*/false))
    throw TypeError(std::string("expected a NumPy array (or a CPU array with DLPack), got ") +
                    nb::type_name(obj.type()).c_str());
  DType dtype = dtype_from_dlpack(a.dtype());
  const size_t nd = a.ndim();
  Shape shape(nd);
  Strides strides(nd);
  int64_t lo = 0, hi = 0;  // extent in elements, relative to a.data()
  bool empty = false;
  for (size_t d = 0; d < nd; ++d) {
    shape[d] = static_cast<int64_t>(a.shape(d));
    strides[d] = a.stride(d);
    if (shape[d] == 0) empty = true;
    else if (strides[d] < 0) lo += strides[d] * (shape[d] - 1);
    else hi += strides[d] * (shape[d] - 1);
  }
  const size_t isz = itemsize(dtype);
  char* first = static_cast<char*>(const_cast<void*>(a.data()));
  char* base = empty ? first : first + lo * static_cast<int64_t>(isz);
  size_t bytes = empty ? 0 : static_cast<size_t>(hi - lo + 1) * isz;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_owners->emplace(base, obj.inc_ref().ptr());
  }
  std::shared_ptr<Buffer> buffer;
  try {
    buffer = std::make_shared<Buffer>(base, bytes, &release_owner);
  } catch (...) {
    release_owner(base);
    throw;
  }
  return Array(std::move(buffer), dtype, std::move(shape), std::move(strides), empty ? 0 : -lo);
}

nb::object to_numpy(const Array& a) {
  if (!a.defined()) return nb::none();
  auto* keep = new std::shared_ptr<Buffer>(a.buffer());
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<Buffer>*>(p); });
  const size_t nd = static_cast<size_t>(a.ndim());
  std::vector<size_t> shape(nd);
  for (size_t d = 0; d < nd; ++d) shape[d] = static_cast<size_t>(a.shape()[d]);
  void* data = a.size() == 0 ? (a.buffer()->data() ? a.buffer()->data() : nullptr) : a.data();
  nb::ndarray<nb::numpy> out(data, nd, shape.data(), owner, a.strides().data(), dtype_to_dlpack(a.dtype()));
  return nb::cast(out, nb::rv_policy::automatic);
}

}  // namespace theon::py

namespace theon::py {
size_t live_owner_count() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_owners->size();
}
}  // namespace theon::py
