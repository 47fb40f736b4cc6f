// Contexts: the names work is placed under. Every device is a context named as the device
// ("cpu", "cuda0", "cuda1", ...); the `contexts` flag adds user names (Theano's rules, DESIGN.md):
//
//   runtime::ContextMap map = runtime::ContextMap::parse("dev0->cuda0;dev1->cuda1;big->cuda1");
//   map.resolve("dev1");   // {"dev1", cuda1}
//   map.resolve("cuda0");  // {"cuda0", cuda0}: a device's own context
//
// The map is syntax only: whether a named device exists is asked of runtime::device_info
// when the context is used, so parsing loads no device library.
#pragma once
#include <theon/device.hpp>

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

 private:
  std::vector<Context> mappings_;
};

}  // namespace theon::runtime
