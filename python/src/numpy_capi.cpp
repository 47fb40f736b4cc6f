// The per-call fast path of NumPy arrays, through NumPy's C API (the only file that uses it):
// an exact numpy.ndarray becomes a theon::Array by reading its fields, and a host Array
// becomes a numpy.ndarray with PyArray_NewFromDescr, each a few hundred instructions where
// nanobind's generic ndarray casts (a __dlpack__ capsule in, an nb_ndarray object out) cost
// thousands. Inputs keep their NumPy array alive through the shared_ptr's own deleter (no
// registry, no lock): the deleter takes the GIL to drop the reference, on whatever thread the
// last view dies, and does nothing once the interpreter is finalizing. An atomic counts them
// for live_numpy_owners (the leak tests).
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "bindings.hpp"

#include <numpy/arrayobject.h>

#include <atomic>
#include <cstring>

namespace theon::py {
namespace {

std::atomic<size_t> g_fast_owners{0};

bool finalizing_now() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// NumPy's type number of a theon dtype, or -1 where NumPy has none (bfloat16).
int numpy_type_of(DType t) {
  switch (t) {
    case DType::Bool: return NPY_BOOL;
    case DType::Int8: return NPY_INT8;
    case DType::Int16: return NPY_INT16;
    case DType::Int32: return NPY_INT32;
    case DType::Int64: return NPY_INT64;
    case DType::UInt8: return NPY_UINT8;
    case DType::Float16: return NPY_FLOAT16;
    case DType::Float32: return NPY_FLOAT32;
    case DType::Float64: return NPY_FLOAT64;
    case DType::BFloat16: return -1;
  }
  return -1;
}

// The theon dtype of a NumPy type number, false where Theon has none. NPY_LONGLONG is int64
// too (the same 8-byte integer as NPY_LONG on LP64 platforms).
bool dtype_of_numpy(int type_num, DType& out) {
  switch (type_num) {
    case NPY_BOOL: out = DType::Bool; return true;
    case NPY_BYTE: out = DType::Int8; return true;
    case NPY_SHORT: out = DType::Int16; return true;
    case NPY_INT: out = DType::Int32; return true;
    case NPY_LONG:
    case NPY_LONGLONG:
      if (sizeof(long) != 8 && type_num == NPY_LONG) return false;
      out = DType::Int64;
      return true;
    case NPY_UBYTE: out = DType::UInt8; return true;
    case NPY_HALF: out = DType::Float16; return true;
    case NPY_FLOAT: out = DType::Float32; return true;
    case NPY_DOUBLE: out = DType::Float64; return true;
    default: return false;
  }
}

}  // namespace

void init_numpy_capi() {
  if (_import_array() < 0) throw nb::python_error();
}

size_t live_fast_owner_count() { return g_fast_owners.load(std::memory_order_relaxed); }

bool plain_numpy_to_array(PyObject* obj, Array& out) {
  if (Py_TYPE(obj) != &PyArray_Type) return false;  // subclasses (matrix, masked) take the general path
  auto* a = reinterpret_cast<PyArrayObject*>(obj);
  PyArray_Descr* descr = PyArray_DESCR(a);
  DType dtype;
  if (!PyArray_ISNBO(descr->byteorder) || !dtype_of_numpy(descr->type_num, dtype)) return false;
  const int nd = PyArray_NDIM(a);
  const npy_intp* dims = PyArray_DIMS(a);
  const npy_intp* st = PyArray_STRIDES(a);
  const int64_t isz = static_cast<int64_t>(itemsize(dtype));
  Shape shape(static_cast<size_t>(nd));
  Strides strides(static_cast<size_t>(nd));
  int64_t lo = 0, hi = 0;
  bool empty = false;
  for (int d = 0; d < nd; ++d) {
    // NumPy strides are in bytes, theon's in elements: one that is not a multiple of the item
    // size (a field of a structured array) takes the general path, which explains the refusal.
    if (st[d] % isz != 0) return false;
    shape[d] = dims[d];
    strides[d] = st[d] / isz;
    if (dims[d] == 0) empty = true;
    else if (strides[d] < 0) lo += strides[d] * (dims[d] - 1);
    else hi += strides[d] * (dims[d] - 1);
  }
  if (empty) lo = hi = 0;
  const size_t bytes = empty ? 0 : static_cast<size_t>(hi - lo + 1) * static_cast<size_t>(isz);
  char* base = static_cast<char*>(PyArray_DATA(a)) + lo * isz;
  Py_INCREF(obj);
  g_fast_owners.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<Buffer> buffer;
  try {
    buffer = std::shared_ptr<Buffer>(new Buffer(base, bytes, nullptr), [obj](Buffer* b) {
      delete b;
      g_fast_owners.fetch_sub(1, std::memory_order_relaxed);
      if (!Py_IsInitialized() || finalizing_now()) return;  // the interpreter frees everything anyway
      PyGILState_STATE state = PyGILState_Ensure();
      Py_DECREF(obj);
      PyGILState_Release(state);
    });
  } catch (...) {
    g_fast_owners.fetch_sub(1, std::memory_order_relaxed);
    Py_DECREF(obj);
    throw;
  }
  out = Array(std::move(buffer), dtype, std::move(shape), std::move(strides), -lo);
  return true;
}

PyObject* host_array_to_numpy(const Array& a) {
  const int type_num = numpy_type_of(a.dtype());
  if (type_num < 0) return nullptr;  // no NumPy dtype: the caller takes the general path
  const int nd = static_cast<int>(a.ndim());
  if (nd > NPY_MAXDIMS) return nullptr;
  npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
  const int64_t isz = static_cast<int64_t>(itemsize(a.dtype()));
  for (int d = 0; d < nd; ++d) {
    dims[d] = a.shape()[d];
    strides[d] = a.strides()[d] * isz;
  }
  void* data = a.size() == 0 ? a.buffer()->data() : a.data();
  if (!data) return nullptr;  // NumPy would allocate memory of its own for a null pointer
  // The capsule holding a reference to the Buffer is the array's base: NumPy drops it with the
  // last view of the array.
  auto* keep = new std::shared_ptr<Buffer>(a.buffer());
  PyObject* owner = PyCapsule_New(keep, nullptr, [](PyObject* cap) {
    delete static_cast<std::shared_ptr<Buffer>*>(PyCapsule_GetPointer(cap, nullptr));
  });
  if (!owner) {
    delete keep;
    throw nb::python_error();
  }
  PyArray_Descr* descr = PyArray_DescrFromType(type_num);  // a new reference, stolen below
  PyObject* out = PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, strides, data, NPY_ARRAY_WRITEABLE, nullptr);
  if (!out) {
    Py_DECREF(owner);
    throw nb::python_error();
  }
  PyArray_UpdateFlags(reinterpret_cast<PyArrayObject*>(out), NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS |
                                                                 NPY_ARRAY_ALIGNED);
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(out), owner) < 0) {  // steals owner, even on failure
    Py_DECREF(out);
    throw nb::python_error();
  }
  return out;
}

}  // namespace theon::py
