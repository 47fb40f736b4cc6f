// Contexts: names for devices (Theano's multi-GPU contexts). The `contexts` option maps
// names to devices ("dev0->cuda0;dev1->cuda1"); every device is also a context under its own
// name ("cpu", "cuda0"). docs/guide/contexts.md describes the rules.
//
//   config().contexts = "dev0->cuda0;dev1->cuda1";
//   SharedVar w = shared(value, "w", {.target = "dev0"});   // stored on dev0's device
//   Var y = transfer(tensor::dot(w, w), "dev1");               // computed on dev0, moved to dev1
//   {
//     ContextScope scope("dev1");                              // nodes made here run on dev1
//     Var z = y * 2.0;
//   }
#pragma once
#include <theon/var.hpp>

#include <string>
#include <vector>

namespace theon {

/// `x` moved to the context `context_name` (a name of the `contexts` map, "cpu" or "cudaN"):
/// the result's context is that name. A ValueError listing the known contexts when the name
/// is not one; the map is resolved here if no earlier use did (a ConfigError when malformed).
/// The gradient flows back through it.
Var transfer(const Var& x, const std::string& context_name);

/// Pins the outputs of every node created on this thread while it lives to a context (the
/// name is checked as transfer() checks it). Scopes nest; the destructor restores the outer one.
class ContextScope {
 public:
  explicit ContextScope(const std::string& context_name);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  std::string outer_;
};

/// A context of the map: its name, its device ("cuda1") and what print_active_device shows for
/// the device ("cuda1: <name> (<PCI bus id>)").
struct ContextInfo {
  std::string name;
  std::string device;
  std::string description;
};
/// The context `name` (Theano's gpuarray.type.get_context): a ValueError listing the known ones.
ContextInfo get_context(const std::string& name);
/// The names the `contexts` map defines, in its order (Theano's list_contexts; the devices'
/// own names are contexts too and are not listed).
std::vector<std::string> list_contexts();

}  // namespace theon
