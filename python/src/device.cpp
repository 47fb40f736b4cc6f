// Devices from Python: cuda_status(), memory_stats(), empty_cache(), to_device(), and
// theon.DeviceArray, the bound theon::Array that function outputs on a GPU become.
//
// A DeviceArray never converts implicitly without saying so: to_host(), numpy.asarray()
// (__array__) and get_value() copy to the host; __dlpack__() hands the device memory itself
// to torch/CuPy/JAX (the consumer's capsule keeps the theon Buffer alive).
#include "bindings.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace theon::py {

size_t live_device_owner_count();

void wait_for_device(Device device) {
  theon::synchronize(device);
}

namespace {

constexpr int kDLCPU = 1;

[[noreturn]] void buffer_error(const std::string& msg) {
  PyErr_SetString(PyExc_BufferError, msg.c_str());
  throw nb::python_error();
}

Device parse_device(const std::string& text) { return Device::parse(text); }

nb::tuple shape_tuple(const Array& a) {
  nb::list l;
  for (int64_t d : a.shape()) l.append(d);
  return nb::tuple(l);
}

nb::object numpy_dtype(DType t) {
  return nb::module_::import_("numpy").attr("dtype")(nb::str(std::string(dtype_name(t)).c_str()));
}

std::string describe(const Array& a) {
  return "DeviceArray(shape=" + shape_str(a.shape()) + ", dtype=" + std::string(dtype_name(a.dtype())) +
         ", device=" + a.device().str() + ")";
}

// The array on the host as a new NumPy array (a copy: device memory cannot be viewed).
nb::object host_copy(const Array& a) {
  if (a.on_host()) return to_numpy(a.copy());
  return to_numpy(a);  // to_numpy copies device arrays (GIL released while it waits)
}

// __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) of the DLPack
// protocol (array API 2023.12). The capsule views the device memory and holds the Buffer.
nb::object array_dlpack(const Array& a, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                        nb::handle copy) {
  const bool copy_true = !copy.is_none() && nb::cast<bool>(copy);
  const bool copy_false = !copy.is_none() && !nb::cast<bool>(copy);
  auto export_capsule = [&](nb::object array) {
    if (max_version.is_none()) return array.attr("__dlpack__")();
    return array.attr("__dlpack__")(nb::arg("max_version") = max_version);
  };
  if (!dl_device.is_none()) {
    auto req = nb::cast<std::pair<int, int>>(dl_device);
    if (req.first == kDLCPU) {  // a host copy for consumers that ask for one (numpy.from_dlpack(x, device="cpu"))
      if (copy_false)
        buffer_error("DeviceArray.__dlpack__: dl_device=(1, 0) (the CPU) needs a copy of an array on " +
                     a.device().str() + ", and copy=False forbids it");
      return export_capsule(host_copy(a));
    }
    if (req.first != kDLCUDA || req.second != a.device().index)
      buffer_error("DeviceArray.__dlpack__: cannot export an array on " + a.device().str() + " to DLPack device (" +
                   std::to_string(req.first) + ", " + std::to_string(req.second) + ")");
  }
  // DLPack 1.1 (CUDA): None means the legacy default stream, 1 the legacy default stream, 2
  // the per-thread default stream, another positive value the consumer's cudaStream_t, -1
  // "no synchronisation" (the consumer orders its use itself); 0 is not allowed.
  int64_t consumer_stream = kLegacyDefaultStream;
  if (!stream.is_none()) {
    if (!PyLong_Check(stream.ptr()) || PyBool_Check(stream.ptr()))
      throw TypeError(std::string("DeviceArray.__dlpack__: stream must be None or an integer, got ") +
                      nb::type_name(stream.type()).c_str());
    if (!nb::try_cast(stream, consumer_stream))
      throw ValueError("DeviceArray.__dlpack__: stream " + std::string(nb::str(stream).c_str()) +
                       " is not a CUDA stream handle");
    if (consumer_stream == 0 || consumer_stream < -1)
      throw ValueError("DeviceArray.__dlpack__: stream=" + std::to_string(consumer_stream) +
                       " is not allowed for CUDA (use 1 for the legacy default stream, 2 for the per-thread "
                       "default stream, a stream handle, or -1)");
  }
  Array out = a;
  {
    nb::gil_scoped_release release;
    if (copy_true) out = a.copy();
    // The array may still be being written on Theon's stream: the consumer's stream waits for
    // it there (an event, no host wait). -1: the consumer orders its use itself.
    if (consumer_stream != -1)
      theon::external_stream_wait(out.device(), consumer_stream);
  }
  // The capsule owns the Buffer. When the consumer releases it, its block may go back to
  // Theon's cache and be reused on Theon's stream while the consumer's kernels (on its stream)
  // still read it: Theon's stream first waits for the consumer's work issued until then.
  struct Exported {
    std::shared_ptr<Buffer> buffer;
    int64_t stream;
  };
  auto* keep = new Exported{out.buffer(), consumer_stream};
  nb::capsule owner(keep, [](void* p) noexcept {
    auto* e = static_cast<Exported*>(p);
    if (e->buffer && e->buffer->device().is_cuda()) {  // (also when Theon still holds it: it frees it later)
      try {
        nb::gil_scoped_release release;
        theon::wait_for_external_stream(e->buffer->device(), e->stream);
      } catch (...) {
        // A failed wait (a broken device) must not throw out of a deleter: the whole device
        // is waited for instead, or, failing that too, the block is dropped as it is.
        try {
          nb::gil_scoped_release release;
          wait_for_device(e->buffer->device());
        } catch (...) {
        }
      }
    }
    delete e;
  });
  const size_t nd = static_cast<size_t>(out.ndim());
  std::vector<size_t> shape(nd);
  for (size_t d = 0; d < nd; ++d) shape[d] = static_cast<size_t>(out.shape()[d]);
  void* data = out.size() == 0 ? out.buffer()->data() : out.data();
  nb::ndarray<nb::array_api> view(data, nd, shape.data(), owner, out.strides().data(), dtype_to_dlpack(out.dtype()), kDLCUDA,
                     out.device().index);
  return export_capsule(nb::cast(view));
}

}  // namespace

void init_device(nb::module_& m) {
  nb::class_<Array>(m, "DeviceArray", nb::is_weak_referenceable(),
                    "An array in GPU memory (a theon::Array on a CUDA device): what functions compiled with "
                    "outputs_on_device=True return on a GPU, and what theon.to_device and theon.from_dlpack "
                    "make. Functions take it as an input without a copy. to_host() and numpy.asarray() copy it "
                    "to the host; __dlpack__ gives torch/CuPy/JAX the device memory itself (no copy).")
      .def("__init__", [](Array*) {
        throw TypeError("theon.DeviceArray cannot be made directly: use theon.to_device(array, 'cuda0'), "
                        "theon.from_dlpack(cuda_tensor) or a function compiled with outputs_on_device=True");
      })
      .def_prop_ro("shape", &shape_tuple)
      .def_prop_ro("dtype", [](const Array& a) { return numpy_dtype(a.dtype()); })
      .def_prop_ro("device", [](const Array& a) { return a.device().str(); }, "'cuda0', 'cuda1', ...")
      .def_prop_ro("ndim", &Array::ndim)
      .def_prop_ro("size", &Array::size)
      .def_prop_ro("nbytes", &Array::nbytes)
      .def("__len__", [](const Array& a) {
        if (a.ndim() == 0) throw TypeError("len() of a 0-d DeviceArray");
        return a.shape()[0];
      })
      .def("to_host", &host_copy, "A NumPy copy of the array (waits for the device work that produces it).")
      .def("item", [](const Array& a) { return host_copy(a).attr("item")(); },
           "The value of a one-element array as a Python scalar (copied from the device).")
      .def("__float__", [](const Array& a) { return nb::float_(host_copy(a)); })
      .def("__int__", [](const Array& a) { return nb::int_(host_copy(a)); })
      .def("astype", [](const Array& a, const std::string& dtype) {
        const DType t = parse_dtype(dtype);
        nb::gil_scoped_release release;
        return a.astype(t);
      }, nb::arg("dtype"), "A converted copy on the same device.")
      .def("copy", [](const Array& a) {
        nb::gil_scoped_release release;
        return a.copy();
      }, "An independent copy on the same device.")
      .def("__array__", [](const Array& a, nb::handle dtype, nb::handle copy) {
        if (!copy.is_none() && !nb::cast<bool>(copy))
          throw ValueError("a DeviceArray on " + a.device().str() +
                           " cannot be viewed as a NumPy array: converting it copies it to the host (copy=False "
                           "was given)");
        nb::object h = host_copy(a);
        if (!dtype.is_none()) h = h.attr("astype")(dtype, nb::arg("copy") = false);
        return h;
      }, nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def("__dlpack__", &array_dlpack, nb::kw_only(), nb::arg("stream") = nb::none(),
           nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none(),
           "DLPack export of the device memory (no copy). stream (DLPack 1.1, CUDA): the consumer's stream, which "
           "is made to wait for Theon's work on the array (None or 1: the legacy default stream, 2: the per-thread "
           "default stream, else a cudaStream_t; -1: no ordering). When the consumer releases the array, Theon's "
           "stream waits for the consumer's stream before the memory is reused.")
      .def("__dlpack_device__", [](const Array& a) {
        const Device d = a.device();
        return std::make_tuple(d.is_cuda() ? kDLCUDA : kDLCPU, d.is_cuda() ? d.index : 0);
      })
      .def("__repr__", &describe);

  m.def("cuda_status", [] {
    CudaStatus s = cuda_status();
    return std::make_tuple(s.ok, s.reason, s.device_count);
  }, "(ok, reason, device_count): whether a CUDA device is usable, and why not.");
  m.def("memory_stats", [](const std::string& device) {
    DeviceMemoryStats s = memory_stats(parse_device(device));
    nb::dict d;
    d["in_use"] = s.in_use;
    d["cached"] = s.cached;
    d["peak"] = s.peak;
    d["allocations"] = s.allocations;
    d["reuses"] = s.reuses;
    d["to_host_copies"] = s.to_host_copies;
    d["to_host_bytes"] = s.to_host_bytes;
    d["host_waits"] = s.host_waits;
    return d;
  }, nb::arg("device") = "cuda0");
  m.def("empty_cache", [](const std::string& device) {
    const Device d = parse_device(device);
    nb::gil_scoped_release release;
    empty_cache(d);
  }, nb::arg("device") = "cuda0");
  m.def("to_device", [](nb::handle value, const std::string& device) {
    const Device d = parse_device(device);
    Array a = to_any_array(value);
    Array out;
    {
      nb::gil_scoped_release release;
      out = to_device(a, d);
      a = Array();  // a NumPy view's deleter takes the GIL
    }
    return to_python(out);
  }, nb::arg("value"), nb::arg("device") = "cuda0",
     "A copy of `value` on `device` (a DeviceArray; a NumPy array for 'cpu'); the value itself when it is there.");
  m.def("from_dlpack_cuda", [](nb::handle obj) { return cuda_array_from_dlpack(obj, "theon.from_dlpack"); },
        nb::arg("obj"), "A DeviceArray viewing a CUDA array of another framework (no copy).");
  m.def("dlpack_device", [](nb::handle obj) { return dlpack_device_of(obj); }, nb::arg("obj"),
        "obj.__dlpack_device__() as (device_type, device_id), or None.");
  m.def("live_device_owners", &live_device_owner_count,
        "How many CUDA arrays of other frameworks theon Buffers currently keep alive (for leak tests).");
}

}  // namespace theon::py
