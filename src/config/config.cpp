#include <theon/config.hpp>
#include <theon/error.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>

namespace theon {
namespace {

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Theano options that Theon accepts and ignores, with one warning per key and process.
const std::set<std::string>& theano_only_keys() {
  static const std::set<std::string> keys = {
      "force_device", "init_gpu_device", "warn_float64", "exception_verbosity", "lib.cnmem",
      "gpuarray.preallocate", "gpuarray.sched", "nvcc.fastmath", "nvcc.flags", "openmp", "openmp_elemwise_minsize",
      "dnn.enabled", "dnn.conv.algo_fwd", "dnn.conv.algo_bwd_data", "dnn.conv.algo_bwd_filter", "blas.ldflags",
      "traceback.limit", "scan.allow_gc", "allow_gc", "linker", "optimizer", "cycle_detection", "on_opt_error",
      "compute_test_value", "gcc.cxxflags", "base_compiledir", "unittests.rseed", "assert_no_cpu_op",
      "reoptimize_unpickled_function", "mode.check_py_code", "on_unused_input", "warn.round", "nocleanup",
      "optdb.max_use_ratio", "metaopt.verbose", "pycuda.init", "experimental.local_alloc_elemwise"};
  return keys;
}

void warn_theano_key_once(const std::string& key, const std::string& source) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(key).second)
    std::cerr << "theon: warning: " << source << " key '" << key
              << "' is a Theano option that Theon does not support; it is ignored\n";
}

bool parse_bool(const std::string& key, const std::string& v) {
  std::string l = lower(v);
  if (l == "true" || l == "1" || l == "yes" || l == "on") return true;
  if (l == "false" || l == "0" || l == "no" || l == "off") return false;
  throw ConfigError("config option '" + key + "': expected a boolean (True/False), got '" + v + "'");
}

void assign(const std::string& key, DType& field, const std::string& v) {
  DType t;
  try {
    t = parse_dtype(trim(v));
  } catch (const TypeError&) {
    throw ConfigError("config option '" + key + "': unknown dtype '" + v + "'");
  }
  if (key == "floatX" && t != DType::Float32 && t != DType::Float64)
    throw ConfigError("config option 'floatX' must be float32 or float64, got '" + v + "'");
  field = t;
}
void assign(const std::string&, std::string& field, const std::string& v) { field = v; }
void assign(const std::string& key, bool& field, const std::string& v) { field = parse_bool(key, v); }
[[maybe_unused]] void assign(const std::string& key, int64_t& field, const std::string& v) {
  try {
    size_t used = 0;
    field = std::stoll(v, &used);
    if (used == v.size()) return;
  } catch (const std::exception&) {
  }
  throw ConfigError("config option '" + key + "': expected an integer, got '" + v + "'");
}
[[maybe_unused]] void assign(const std::string& key, double& field, const std::string& v) {
  try {
    size_t used = 0;
    field = std::stod(v, &used);
    if (used == v.size()) return;
  } catch (const std::exception&) {
  }
  throw ConfigError("config option '" + key + "': expected a number, got '" + v + "'");
}

std::string show(DType t) { return std::string(dtype_name(t)); }
std::string show(const std::string& s) { return s; }
std::string show(bool b) { return b ? "True" : "False"; }
[[maybe_unused]] std::string show(int64_t i) { return std::to_string(i); }
[[maybe_unused]] std::string show(double d) { return std::to_string(d); }

void validate(const std::string& key, const Config& c) {
  if (key == "mode") canonical_mode(c.mode);
  if (key == "on_fallback" && c.on_fallback != "warn" && c.on_fallback != "raise" && c.on_fallback != "ignore")
    throw ConfigError("config option 'on_fallback' must be warn, raise or ignore, got '" + c.on_fallback + "'");
  if (key == "device") {
    const std::string& d = c.device;
    bool ok = d == "cpu" || d == "cuda" || d == "auto";
    if (!ok && d.rfind("cuda", 0) == 0 && d.size() > 4)
      ok = std::all_of(d.begin() + 4, d.end(), [](unsigned char ch) { return std::isdigit(ch); });
    if (!ok) throw ConfigError("config option 'device' must be cpu, cuda or cudaN, got '" + d + "'");
  }
}

}  // namespace

std::string canonical_mode(const std::string& mode) {
  std::string m = lower(trim(mode));
  if (m == "fast_run" || m == "fast_compile" || m == "none") return m;
  if (m == "debugmode" || m == "debug_mode") return "fast_run";  // Theano's DebugMode runs the same graph here
  throw ConfigError("unknown mode '" + mode + "' (expected FAST_RUN, FAST_COMPILE or NONE, any case)");
}

std::vector<std::string> Config::keys() {
  return {
#define THEON_OPTION(name, type, def, doc) #name,
#include <theon/options.def>
#undef THEON_OPTION
  };
}

void Config::set(const std::string& raw_key, const std::string& value) {
  std::string key = trim(raw_key);
  Config next = *this;  // validate on a copy: a bad value leaves the config unchanged
#define THEON_OPTION(name, type, def, doc) \
  if (key == #name) {                      \
    assign(key, next.name, trim(value));   \
    validate(key, next);                   \
    *this = next;                          \
    return;                                \
  }
#include <theon/options.def>
#undef THEON_OPTION
  throw ConfigError("unknown config option '" + key + "' (known: " + [] {
    std::string all;
    for (auto& k : keys()) all += (all.empty() ? "" : ", ") + k;
    return all;
  }() + ")");
}

std::string Config::get(const std::string& key) const {
#define THEON_OPTION(name, type, def, doc) \
  if (key == #name) return show(name);
#include <theon/options.def>
#undef THEON_OPTION
  throw ConfigError("unknown config option '" + key + "'");
}

std::string Config::describe() const {
  std::ostringstream os;
#define THEON_OPTION(name, type, def, doc) os << #name << " = " << show(name) << "    # " << doc << "\n";
#include <theon/options.def>
#undef THEON_OPTION
  return os.str();
}

void Config::apply_flags(const std::string& flags, const std::string& source) {
  std::stringstream ss(flags);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (trim(item).empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos)
      throw ConfigError(source + ": malformed entry '" + item + "' (expected key=value)");
    std::string key = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    if (key.empty()) throw ConfigError(source + ": malformed entry '" + item + "' (empty key)");
    if (key == "floatx") key = "floatX";
    auto all = keys();
    if (std::find(all.begin(), all.end(), key) == all.end() && theano_only_keys().count(key)) {
      warn_theano_key_once(key, source);
      continue;
    }
    try {
      set(key, value);
    } catch (ConfigError& e) {
      e.add_context("(from " + source + ")");
      throw;
    }
  }
}

Config& config() {
  static Config* instance = [] {
    auto* c = new Config();
    if (const char* home = std::getenv("HOME")) {
      std::ifstream rc(std::string(home) + "/.theonrc");
      std::string line, flags;
      while (std::getline(rc, line)) {
        line = trim(line);
        if (line.empty() || line[0] == '#' || line[0] == '[') continue;
        flags += line + ",";
      }
      if (!flags.empty()) c->apply_flags(flags, "~/.theonrc");
    }
    if (const char* f = std::getenv("THEANO_FLAGS")) c->apply_flags(f, "THEANO_FLAGS");
    if (const char* f = std::getenv("THEON_FLAGS")) c->apply_flags(f, "THEON_FLAGS");
    return c;
  }();
  return *instance;
}

}  // namespace theon
