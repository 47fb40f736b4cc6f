// Default updates the user gives (Theano's shared_var.default_update), held for as long as
// their shared variable lives without keeping it alive. The update's graph reads the variable
// (mean.default_update = 0.9 * mean + ...), so holding it from the variable would be a cycle
// of shared_ptrs that nothing frees: each is kept as a template instead, its graph with the
// variable replaced by a placeholder input, and function() puts the variable back (a given).
// Variable::default_update (weak) still points to the update the user made while it lives.
#pragma once
#include "graph/node.hpp"

#include <optional>

namespace theon::graph {

struct DefaultUpdateTemplate {
  VarPtr update;       // the update's graph over `placeholder` instead of the shared variable
  VarPtr placeholder;  // an input of the shared variable's type
};

/// Keeps `t` as the default update template of `shared` (nullopt removes it) while `shared`
/// lives. Templates of variables that died are dropped here too.
void set_default_update_template(const VarPtr& shared, std::optional<DefaultUpdateTemplate> t);
/// The template of `shared`, or nullopt.
std::optional<DefaultUpdateTemplate> default_update_template(const Variable& shared);

}  // namespace theon::graph
