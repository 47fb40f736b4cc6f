#include "runtime/contexts.hpp"

#include "runtime/cuda_library.hpp"
#include "runtime/devices.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <mutex>
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
  throw ValueError("context '" + name + "' is not defined; the contexts are " + known_names());
}

std::string ContextMap::known_names() const {
  if (mappings_.empty()) return "the devices by their names (cpu, cuda0, cuda1, ...): the contexts flag names no other";
  std::string known;
  for (const Context& c : mappings_) known += c.name + " (" + c.device.str() + "), ";
  return known + "and each device by its name: cpu, cuda0, cuda1, ...";
}

namespace {

struct BudgetEntry {
  std::string entry;  // as written, for messages
  std::string name;
  int threads;
};

[[noreturn]] void reject_budget(const std::string& spec, const std::string& entry, const std::string& why) {
  throw ConfigError("context_threads: '" + entry + "' " + why + " (in context_threads='" + spec +
                    "': name=threads entries separated by ';', e.g. dev0=1;dev1=1)");
}

std::vector<BudgetEntry> parse_budgets(const std::string& spec) {
  std::vector<BudgetEntry> entries;
  if (trimmed(spec).empty()) return entries;
  size_t begin = 0;
  while (true) {
    const size_t end = std::min(spec.find(';', begin), spec.size());
    const std::string entry = spec.substr(begin, end - begin);
    const size_t eq = entry.find('=');
    if (trimmed(entry).empty()) reject_budget(spec, entry, "is an empty entry (a ';' too many)");
    if (eq == std::string::npos) reject_budget(spec, entry, "is not of the form name=threads");
    const std::string name = trimmed(entry.substr(0, eq));
    const std::string count = trimmed(entry.substr(eq + 1));
    if (name.empty()) reject_budget(spec, entry, "has no context name before '='");
    const bool digits = !count.empty() && count.size() <= 6 &&
                        std::all_of(count.begin(), count.end(), [](unsigned char c) { return std::isdigit(c); });
    if (!digits || std::stoi(count) < 1)
      reject_budget(spec, entry, "gives '" + count + "' threads: a whole number from 1 is expected");
    for (const BudgetEntry& earlier : entries)
      if (earlier.name == name) reject_budget(spec, entry, "gives '" + name + "' a budget again");
    entries.push_back({entry, name, std::stoi(count)});
    if (end == spec.size()) break;
    begin = end + 1;
  }
  return entries;
}

int online_cores() { return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))); }

}  // namespace

void ContextMap::set_thread_budgets(const std::string& spec) {
  std::map<std::string, int> budgets;
  for (const BudgetEntry& e : parse_budgets(spec)) {
    try {
      resolve(e.name);
    } catch (const ValueError&) {
      reject_budget(spec, e.entry, "names no context; the contexts are " + known_names());
    }
    budgets[e.name] = e.threads;
  }
  thread_budgets_ = std::move(budgets);
}

int ContextMap::threads(const std::string& name, int cpu_contexts) const {
  if (const auto it = thread_budgets_.find(name); it != thread_budgets_.end()) return it->second;
  return std::max(1, online_cores() / std::max(1, cpu_contexts));
}

namespace {

// A cudaN the map names must exist: asked of the device registry (which opens the CUDA
// library: resolution happens at first use, never at import). Where no CUDA device can be
// used at all, a GPU context is what device=cuda0 is there: compiling a function applies
// on_fallback (warn: its nodes run on the CPU; raise: a DeviceError naming the context).
void check_devices_exist(const ContextMap& map, const std::string& spec) {
  bool any_gpu = false;
  for (const Context& c : map.mappings()) any_gpu = any_gpu || c.device.is_cuda();
  if (!any_gpu || devices().size() == 1) return;
  for (const Context& c : map.mappings()) {
    if (c.device.is_cpu()) continue;
    try {
      device_info(c.device);
    } catch (const DeviceError& e) {
      const size_t cuda_devices = devices().size() - 1;
      throw ConfigError("contexts: '" + c.name + "->" + c.device.str() + "' maps to " + c.device.str() +
                        ", but there " + (cuda_devices == 1 ? "is 1 CUDA device" : "are " + std::to_string(cuda_devices) +
                        " CUDA devices") + " (in contexts='" + spec + "'): " + e.what());
    }
  }
}

void print_mappings(const ContextMap& map) {
  for (const Context& c : map.mappings()) {
    std::string device;
    try {
      device = device_info(c.device).describe();
    } catch (const DeviceError&) {  // no CUDA device at all: the function's on_fallback decides
      device = c.device.str() + ": not available (" + cuda_library().reason + ")";
    }
    std::cerr << "Mapped name " << c.name << " to device " << device << "\n";
  }
  std::cerr.flush();
}

struct ActiveMap {
  std::mutex mutex;
  bool resolved = false;
  std::string contexts_text, threads_text;
  std::shared_ptr<const ContextMap> map = std::make_shared<const ContextMap>();
};

ActiveMap& active_map() {
  static ActiveMap* instance = new ActiveMap();  // never destroyed: used from any thread at exit
  return *instance;
}

}  // namespace

std::shared_ptr<const ContextMap> active_contexts() {
  const Config& c = config();
  const std::string contexts_text = c.contexts, threads_text = c.context_threads;
  const bool print = c.print_active_device;
  ActiveMap& active = active_map();
  std::lock_guard<std::mutex> lock(active.mutex);
  if (active.resolved && active.contexts_text == contexts_text && active.threads_text == threads_text)
    return active.map;
  const bool new_mappings = !active.resolved || active.contexts_text != contexts_text;
  auto map = std::make_shared<ContextMap>(ContextMap::parse(contexts_text));
  map->set_thread_budgets(threads_text);
  check_devices_exist(*map, contexts_text);
  if (print && new_mappings) print_mappings(*map);
  active.contexts_text = contexts_text;
  active.threads_text = threads_text;
  active.map = std::move(map);
  active.resolved = true;
  return active.map;
}

Context resolve_context(const std::string& name) { return active_contexts()->resolve(name); }

}  // namespace theon::runtime
