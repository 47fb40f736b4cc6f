// Contexts as users name them: transfer(x, name), ContextScope, get_context/list_contexts.
// Names are checked against the process's context map (runtime::active_contexts), which is
// resolved here when no earlier use did.
#include <theon/contexts.hpp>

#include "api/contexts_internal.hpp"
#include "graph/node.hpp"
#include "ops/transfer.hpp"
#include "runtime/contexts.hpp"
#include "runtime/devices.hpp"

#include <theon/error.hpp>

namespace theon {

namespace detail {

runtime::Context context_named(const std::string& context_name, const std::string& what) {
  try {
    return runtime::resolve_context(context_name);
  } catch (Error& e) {
    e.add_context("(in " + what + ")");
    throw;
  }
}

graph::VarPtr transfer_node(const graph::VarPtr& x, const runtime::Context& to) {
  return ops::transfer(x, to.name);  // its output is pinned to the context's name
}

}  // namespace detail

Var transfer(const Var& x, const std::string& context_name) {
  if (!x.defined()) throw ValueError("transfer(x, '" + context_name + "'): use of an undefined Var");
  const runtime::Context to =
      detail::context_named(context_name, "transfer(" + x.node()->label() + ", '" + context_name + "')");
  return Var(detail::transfer_node(x.node(), to));
}

ContextScope::ContextScope(const std::string& context_name) : outer_(graph::context_scope()) {
  detail::context_named(context_name, "ContextScope('" + context_name + "')");
  graph::set_context_scope(context_name);
}

ContextScope::~ContextScope() { graph::set_context_scope(std::move(outer_)); }

ContextInfo get_context(const std::string& name) {
  const runtime::Context c = detail::context_named(name, "get_context('" + name + "')");
  return {c.name, c.device.str(), runtime::device_info(c.device).describe()};
}

std::vector<std::string> list_contexts() {
  std::vector<std::string> names;
  for (const runtime::Context& c : runtime::active_contexts()->mappings()) names.push_back(c.name);
  return names;
}

}  // namespace theon
