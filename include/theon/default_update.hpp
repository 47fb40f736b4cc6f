// Theano's `shared_var.default_update = expr`: the update function() applies to a shared
// variable its graph reads when the caller names none (FunctionOptions::no_default_updates and
// no_default_updates_of skip it). Random streams set their states' next states this way.
#pragma once
#include <theon/var.hpp>

#include <optional>

namespace theon {

/// Sets the default update of `s` (nullopt removes it). The update must have s's dtype and rank
/// (TypeError otherwise). It is held weakly, as a random state's next state is (the update's
/// graph reads `s`): the caller keeps `update` alive for as long as it is to apply.
void set_default_update(const SharedVar& s, const std::optional<Var>& update);
/// The default update of `s`, or nullopt (none set, or no longer alive).
std::optional<Var> default_update(const SharedVar& s);

}  // namespace theon
