// Theano's `shared_var.default_update = expr`: the update function() applies to a shared
// variable its graph reads when the caller names none (FunctionOptions::no_default_updates and
// no_default_updates_of skip it). Random streams set their states' next states this way.
#pragma once
#include <theon/var.hpp>

#include <optional>

namespace theon {

/// Sets the default update of `s` (nullopt removes it). The update must have s's dtype and rank
/// (TypeError otherwise). It applies for as long as `s` lives, and does not keep `s` alive (the
/// update's graph reads `s`: it is kept over a placeholder that function() replaces by `s`).
void set_default_update(const SharedVar& s, const std::optional<Var>& update);
/// The default update of `s`, or nullopt: the update given while the caller's copy lives, else
/// the same graph rebuilt over `s`. A random state's next state is held by its draw's node
/// (nullopt once nothing holds the draw).
std::optional<Var> default_update(const SharedVar& s);

}  // namespace theon
