// The api's context helpers shared by contexts.cpp, var.cpp and function.cpp.
#pragma once
#include "graph/node.hpp"
#include "runtime/contexts.hpp"

#include <string>

namespace theon::detail {

/// The context `context_name` of the process's map (resolved on first use); its errors
/// (ValueError for an unknown name, ConfigError for a malformed map) say `what` was asked.
runtime::Context context_named(const std::string& context_name, const std::string& what);

/// A Transfer of `x` to `to`; its output's context is `to.name`.
graph::VarPtr transfer_node(const graph::VarPtr& x, const runtime::Context& to);

/// Suspends the thread's context scope while it lives: a function's compile builds nodes
/// (rewrites, transfers) that must not be pinned to the scope it was called in.
class NoContextScope {
 public:
  NoContextScope() : outer_(graph::context_scope()) { graph::set_context_scope(""); }
  ~NoContextScope() { graph::set_context_scope(std::move(outer_)); }
  NoContextScope(const NoContextScope&) = delete;
  NoContextScope& operator=(const NoContextScope&) = delete;

 private:
  std::string outer_;
};

}  // namespace theon::detail
