// Theon's C++ exceptions as Python exceptions. Each is a subclass of TheonError and of the
// builtin Python users expect (TypeError, ValueError, ...); the message is the C++ one.
#include "bindings.hpp"

namespace theon::py {
namespace {

PyObject* g_error = nullptr;
PyObject* g_type = nullptr;
PyObject* g_shape = nullptr;
PyObject* g_value = nullptr;
PyObject* g_index = nullptr;
PyObject* g_config = nullptr;
PyObject* g_device = nullptr;
PyObject* g_notimpl = nullptr;
PyObject* g_internal = nullptr;
PyObject* g_gradient = nullptr;
PyObject* g_runtime = nullptr;
PyObject* g_memory = nullptr;

PyObject* make(nb::module_& m, const char* name, PyObject* builtin, const char* doc) {
  std::string qual = std::string("theon.errors.") + name;
  PyObject* bases = builtin ? PyTuple_Pack(2, g_error, builtin) : PyTuple_Pack(1, PyExc_Exception);
  PyObject* t = PyErr_NewExceptionWithDoc(qual.c_str(), doc, bases, nullptr);
  Py_DECREF(bases);
  if (!t) throw nb::python_error();
  m.attr(name) = nb::handle(t);
  return t;
}

}  // namespace

void init_errors(nb::module_& m) {
  g_error = make(m, "TheonError", nullptr, "Base class of every error raised by Theon's core.");
  g_type = make(m, "TheonTypeError", PyExc_TypeError, "Wrong dtype, wrong number of inputs, unsupported dtype.");
  g_shape = make(m, "ShapeError", PyExc_ValueError, "Shapes or ranks that do not agree, bad axis.");
  g_value = make(m, "TheonValueError", PyExc_ValueError, "A bad value.");
  g_index = make(m, "TheonIndexError", PyExc_IndexError, "An out-of-range index.");
  g_config = make(m, "ConfigError", PyExc_ValueError, "An unknown or malformed configuration key or value.");
  g_device = make(m, "DeviceError", PyExc_RuntimeError, "A device that is not available or reported a failure.");
  g_notimpl = make(m, "TheonNotImplementedError", PyExc_NotImplementedError, "Not available (yet).");
  g_internal = make(m, "InternalError", PyExc_RuntimeError, "A broken invariant inside Theon (a bug).");
  g_memory = make(m, "TheonMemoryError", PyExc_MemoryError,
                  "An allocation that failed (host or device memory exhausted); names the bytes and the device.");
  g_runtime = make(m, "TheonRuntimeError", PyExc_RuntimeError, "Any other error raised by Theon's core.");
  g_gradient = make(m, "GradientError", PyExc_RuntimeError,
                    "verify_grad: the symbolic gradient disagreed with finite differences.");
  // The most derived classes first; anything else derived from theon::Error is a
  // TheonRuntimeError (a RuntimeError).
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const GradientError& e) {
      PyErr_SetString(g_gradient, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(g_type, e.what());
    } catch (const ShapeError& e) {
      PyErr_SetString(g_shape, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(g_value, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(g_index, e.what());
    } catch (const ConfigError& e) {
      PyErr_SetString(g_config, e.what());
    } catch (const DeviceError& e) {
      PyErr_SetString(g_device, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(g_notimpl, e.what());
    } catch (const InternalError& e) {
      PyErr_SetString(g_internal, e.what());
    } catch (const MemoryError& e) {
      PyErr_SetString(g_memory, e.what());
    } catch (const Error& e) {
      PyErr_SetString(g_runtime, e.what());
    }
  });
}

}  // namespace theon::py
