// Contexts: the names work is placed under. Every device is a context named as the device
// ("cpu", "cuda0", "cuda1", ...); the `contexts` flag adds user names (Theano's rules, DESIGN.md):
//
//   runtime::ContextMap map = runtime::ContextMap::parse("dev0->cuda0;dev1->cuda1;big->cuda1");
//   map.resolve("dev1");   // {"dev1", cuda1}
//   map.resolve("cuda0");  // {"cuda0", cuda0}: a device's own context
//
// The map is syntax only: whether a named device exists is asked of runtime::device_info
// when the context is used, so parsing loads no device library. The map of the process is
// active_contexts(): config().contexts resolved where it is first used (a function's
// compile, shared(target=), transfer(name), a context scope), not at import.
#pragma once
#include <theon/device.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace theon::runtime {

struct Context {
  std::string name;
  Device device;
  friend bool operator==(const Context&, const Context&) = default;
};

class ContextMap {
 public:
  /// The devices' own contexts only.
  ContextMap() = default;
  /// `name->device` entries separated by ';' (empty text: no entries). A name is not empty,
  /// contains neither "->" nor ';', does not begin with "cuda" or "opencl", is not "cpu"
  /// and is defined once; a device is "cpu" or "cuda<N>"; spaces around either are ignored.
  /// Several names may map to one device. Anything else is a ConfigError quoting the entry.
  static ContextMap parse(const std::string& spec);

  /// The context of a user name or of a device's name; a ValueError listing the known
  /// names otherwise.
  Context resolve(const std::string& name) const;
  /// The user's entries, in the order the map gave them.
  const std::vector<Context>& mappings() const { return mappings_; }
  /// "dev0 (cuda0), host (cpu), " and the devices' own names: the known contexts, for messages.
  std::string known_names() const;

  /// Sets the thread budgets from `context_threads` text: `name=N` entries separated by ';'
  /// (N >= 1; a name is one of this map's or a device's; spaces ignored). A ConfigError
  /// quoting the entry otherwise.
  void set_thread_budgets(const std::string& spec);
  /// The OpenMP threads a cpu context `name` runs with while `cpu_contexts` cpu contexts run
  /// at once: its `context_threads` entry, else max(1, online cores / cpu_contexts).
  int threads(const std::string& name, int cpu_contexts) const;
  /// The `context_threads` entries: context name -> OpenMP threads.
  const std::map<std::string, int>& thread_budgets() const { return thread_budgets_; }

 private:
  std::vector<Context> mappings_;
  std::map<std::string, int> thread_budgets_;
};

/// The process's context map: config().contexts and config().context_threads, parsed, with
/// every cudaN it names checked to exist (a ConfigError quoting the mapping and the number of
/// CUDA devices otherwise) and, with config().print_active_device, each mapping printed to
/// stderr ("Mapped name dev0 to device cuda0: <name> (<PCI bus id>)"). Resolved on first use
/// and again whenever either option's text changes (a map already resolved is not printed
/// again); a rejected text is rejected again at each use. Thread-safe; the map returned stays
/// valid while held.
std::shared_ptr<const ContextMap> active_contexts();
/// active_contexts()->resolve(name).
Context resolve_context(const std::string& name);

}  // namespace theon::runtime
