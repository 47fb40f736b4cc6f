#include "runtime/contexts.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <optional>

namespace theon::runtime {
namespace {

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

// "cpu" or "cuda<N>" written as Device::str() writes it (not "cuda", "gpu" or "cuda01").
std::optional<Device> device_named(const std::string& text) {
  try {
    const Device device = Device::parse(text);
    if (device.str() == text) return device;
  } catch (const ConfigError&) {
  }
  return std::nullopt;
}

[[noreturn]] void reject(const std::string& spec, const std::string& entry, const std::string& why) {
  throw ConfigError("contexts: '" + entry + "' " + why + " (in contexts='" + spec +
                    "': name->device entries separated by ';', devices cpu, cuda0, cuda1, ...)");
}

}  // namespace

ContextMap ContextMap::parse(const std::string& spec) {
  ContextMap map;
  if (spec.empty()) return map;
  size_t begin = 0;
  while (true) {
    const size_t end = std::min(spec.find(';', begin), spec.size());
    const std::string entry = spec.substr(begin, end - begin);
    const size_t arrow = entry.find("->");
    if (trimmed(entry).empty()) reject(spec, entry, "is an empty entry (a ';' too many)");
    if (arrow == std::string::npos) reject(spec, entry, "is not of the form name->device");
    if (entry.find("->", arrow + 2) != std::string::npos)
      reject(spec, entry, "has more than one '->' (a name may not contain '->')");
    const std::string name = trimmed(entry.substr(0, arrow));
    const std::string device_text = trimmed(entry.substr(arrow + 2));
    if (name.empty()) reject(spec, entry, "has no name before '->'");
    if (name.rfind("cuda", 0) == 0 || name.rfind("opencl", 0) == 0)
      reject(spec, entry, "uses the name '" + name + "': names may not begin with 'cuda' or 'opencl'");
    if (name == "cpu") reject(spec, entry, "uses the name 'cpu', the CPU's own context");
    const std::optional<Device> device = device_named(device_text);
    if (!device) reject(spec, entry, "maps to '" + device_text + "', which is not a device");
    for (const Context& earlier : map.mappings_)
      if (earlier.name == name) reject(spec, entry, "defines '" + name + "' again (it maps to " + earlier.device.str() + ")");
    map.mappings_.push_back({name, *device});
    if (end == spec.size()) break;
    begin = end + 1;
  }
  return map;
}

Context ContextMap::resolve(const std::string& name) const {
  for (const Context& c : mappings_)
    if (c.name == name) return c;
  if (const std::optional<Device> device = device_named(name)) return {name, *device};
  std::string known;
  for (const Context& c : mappings_) known += c.name + " (" + c.device.str() + "), ";
  throw ValueError("context '" + name + "' is not defined; the contexts are " + known +
                   "and each device by its name: cpu, cuda0, cuda1, ...");
}

}  // namespace theon::runtime
