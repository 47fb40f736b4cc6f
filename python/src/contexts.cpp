// Contexts: Var.context, transfer(x, name), the scope behind `with theon.context(name):`,
// get_context/list_contexts.
#include "bindings.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>

namespace theon::py {
namespace {

// `with theon.context(name):` — the C++ RAII scope, entered and left by the context manager.
class PyContextScope {
 public:
  explicit PyContextScope(std::string name) : name_(std::move(name)) {}
  void enter() {
    if (scope_) throw ValueError("context('" + name_ + "') is already entered");
    scope_ = std::make_unique<ContextScope>(name_);
  }
  void exit() { scope_.reset(); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::unique_ptr<ContextScope> scope_;
};

}  // namespace

void init_contexts(nb::module_& m) {
  m.def("transfer", &transfer, nb::arg("x"), nb::arg("context_name"),
        "x moved to a context (a name of the contexts map, 'cpu' or 'cudaN').");
  m.def("var_context", [](const Var& v) { return v.context(); }, nb::arg("v"),
        "The context the variable is pinned to ('' when unpinned).");
  nb::class_<PyContextScope>(m, "ContextScope", "Pins the nodes made while entered to a context.")
      .def(nb::init<std::string>(), nb::arg("context_name"))
      .def("enter", &PyContextScope::enter)
      .def("exit", &PyContextScope::exit)
      .def_prop_ro("name", &PyContextScope::name);
  m.def("get_context", [](const std::string& name) {
    const ContextInfo c = get_context(name);
    return nb::make_tuple(c.name, c.device, c.description);
  }, nb::arg("name"), "(name, device, description) of a context.");
  m.def("list_contexts", &list_contexts, "The names the contexts map defines, in its order.");
}

}  // namespace theon::py
