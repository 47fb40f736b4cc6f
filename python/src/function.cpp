// function() and Function calls: NumPy in (zero-copy), NumPy out (zero-copy), the GIL
// released while the compiled program runs. Device arrays (theon.DeviceArray, CUDA DLPack
// arrays) go in without a copy; device outputs (outputs_on_device on a GPU) come out as
// theon.DeviceArray.
#include "bindings.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace theon::py {
namespace {

// The fast path of Function.__call__ (compile/__init__.py): built once per function with the
// inputs' dtypes; a call whose arguments are all exact NumPy arrays of exactly those dtypes
// (what the Python-level conversion would pass through unchanged) runs with no Python code
// and no per-argument checks beyond a type and a dtype comparison. Anything else (another
// count of arguments, lists, scalars, other dtypes, subclasses, device arrays) answers
// NotImplemented before anything ran, and the caller takes the general path, whose messages
// and conversions are the reference.
struct CallPlan {
  Function f;
  std::vector<DType> dtypes;
  bool single = false;

  nb::object operator()(nb::handle args) const {
    PyObject* t = args.ptr();
    if (!PyTuple_Check(t) || static_cast<size_t>(PyTuple_GET_SIZE(t)) != dtypes.size())
      return nb::borrow(Py_NotImplemented);
    std::vector<Array> inputs(dtypes.size());
    for (size_t k = 0; k < dtypes.size(); ++k)
      if (!plain_numpy_to_array(PyTuple_GET_ITEM(t, k), inputs[k]) || inputs[k].dtype() != dtypes[k])
        return nb::borrow(Py_NotImplemented);
    std::vector<Array> outputs;
    {
      nb::gil_scoped_release release;
      outputs = f(inputs);
    }
    inputs.clear();  // with the GIL held: the views' deleters drop their references at once
    if (single && outputs.size() == 1) return to_python(outputs[0]);
    nb::list result;
    for (const Array& a : outputs) result.append(to_python(a));
    if (single) return result[0];
    return result;
  }
};

// Host copies of a node's values for a MonitorMode callback (the executor reuses the buffers).
nb::list value_copies(const std::vector<Array>& arrays) {
  nb::list values;
  for (const Array& a : arrays) values.append(to_numpy(a.defined() && a.on_host() ? a.copy() : a));
  return values;
}

// A Python callable as a NodeMonitor function: called with the GIL (the call itself runs
// without it); the callable is released with the GIL held, whichever thread drops it last.
struct PyCallable {
  nb::object fn;
  ~PyCallable() {
    nb::gil_scoped_acquire gil;
    fn.reset();
  }
};

auto monitor_callback(nb::object fn) {
  std::shared_ptr<PyCallable> held(new PyCallable{std::move(fn)});
  return [held](size_t index, const ApplyInfo& node, const std::vector<Array>& ins, const auto&... outs) {
    nb::gil_scoped_acquire gil;
    held->fn(index, node, value_copies(ins), value_copies(outs)...);
  };
}

}  // namespace

void init_function(nb::module_& m) {
  nb::class_<NodeInfo>(m, "NodeInfo", "A node of a compiled program (theon::NodeInfo).")
      .def_ro("op", &NodeInfo::op)
      .def_ro("inputs", &NodeInfo::inputs)
      .def_ro("output_type", &NodeInfo::output_type)
      .def_ro("device", &NodeInfo::device)
      .def_ro("kernel", &NodeInfo::kernel)
      .def_ro("reason", &NodeInfo::reason);

  nb::class_<CallPlan>(m, "CallPlan", "Function.__call__'s fast path for exact NumPy arguments (function.cpp).")
      .def("__init__", [](CallPlan* p, const Function& f, const std::vector<std::string>& dtypes, bool single) {
        std::vector<DType> ts;
        ts.reserve(dtypes.size());
        for (const std::string& d : dtypes) ts.push_back(parse_dtype(d));
        new (p) CallPlan{f, std::move(ts), single};
      }, nb::arg("function"), nb::arg("dtypes"), nb::arg("single"))
      .def("__call__", &CallPlan::operator(), nb::arg("args"),
           "Runs the function on a tuple of exact NumPy arrays of the inputs' dtypes; NotImplemented (nothing "
           "run) for any other arguments.");

  nb::class_<Function>(m, "Function", "A compiled function (theon::Function).")
      .def("__call__", [](const Function& f, const std::vector<nb::object>& args) {
        std::vector<Array> inputs;
        inputs.reserve(args.size());
        for (const nb::object& a : args) inputs.push_back(to_any_array(a));
        std::vector<Array> outputs;
        {
          nb::gil_scoped_release release;
          outputs = f(inputs);
          inputs.clear();  // drop the views of the NumPy inputs (their deleters take the GIL)
        }
        nb::list result;
        for (const Array& a : outputs) result.append(to_python(a));
        return result;
      }, nb::arg("inputs"),
         "Runs the function on a list of arrays (NumPy, theon.DeviceArray, CUDA DLPack arrays); returns a list "
         "of NumPy arrays, and of theon.DeviceArray for outputs left on a device (outputs_on_device).")
      .def_prop_ro("name", &Function::name)
      .def("explain", &Function::explain)
      .def("debugprint", &Function::debugprint)
      .def("nodes", &Function::nodes, "The compiled program's nodes in execution order.");

  m.def("function", [](const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                       const std::vector<std::pair<SharedVar, Var>>& updates,
                       const std::vector<std::pair<Var, Var>>& givens, const std::string& mode,
                       const std::string& name, const std::string& on_unused_input, bool allow_input_downcast,
                       bool outputs_on_device, bool no_default_updates,
                       const std::vector<SharedVar>& no_default_updates_of, nb::object monitor_before,
                       nb::object monitor_after) {
    FunctionOptions o;
    o.updates = updates;
    o.givens = givens;
    o.mode = mode;
    o.name = name;
    o.on_unused_input = on_unused_input;
    o.allow_input_downcast = allow_input_downcast;
    o.outputs_on_device = outputs_on_device;
    o.no_default_updates = no_default_updates;
    o.no_default_updates_of = no_default_updates_of;
    if (!monitor_before.is_none()) o.monitor.before = monitor_callback(std::move(monitor_before));
    if (!monitor_after.is_none()) o.monitor.after = monitor_callback(std::move(monitor_after));
    return function(inputs, outputs, o);
  }, nb::arg("inputs"), nb::arg("outputs"), nb::arg("updates"), nb::arg("givens"), nb::arg("mode") = "",
     nb::arg("name") = "", nb::arg("on_unused_input") = "raise", nb::arg("allow_input_downcast") = false,
     nb::arg("outputs_on_device") = false, nb::arg("no_default_updates") = false,
     nb::arg("no_default_updates_of") = std::vector<SharedVar>{}, nb::arg("monitor_before") = nb::none(),
     nb::arg("monitor_after") = nb::none(),
     "monitor_before(i, node, inputs) / monitor_after(i, node, inputs, outputs): called around each node of "
     "the compiled program (theon::NodeMonitor) with an ApplyInfo and lists of NumPy copies of the values.");
}

}  // namespace theon::py
