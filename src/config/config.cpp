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

// Theano options that Theon accepts and ignores, with one warning per key and process; any
// key under Theano's warn.* section is one of them.
bool is_theano_only_key(const std::string& key) {
  static const std::set<std::string> keys = {
      "force_device", "init_gpu_device", "warn_float64", "exception_verbosity", "lib.cnmem",
      "gpuarray.preallocate", "gpuarray.sched", "nvcc.fastmath", "nvcc.flags", "openmp",
      "dnn.enabled", "dnn.conv.algo_fwd", "dnn.conv.algo_bwd_data", "dnn.conv.algo_bwd_filter", "blas.ldflags",
      "traceback.limit", "scan.allow_gc", "allow_gc", "linker", "optimizer", "cycle_detection", "on_opt_error",
      "gcc.cxxflags", "base_compiledir", "unittests.rseed", "assert_no_cpu_op",
      "reoptimize_unpickled_function", "mode.check_py_code", "on_unused_input", "nocleanup",
      "optdb.max_use_ratio", "metaopt.verbose", "pycuda.init", "experimental.local_alloc_elemwise", "cast_policy"};
  return keys.count(key) || (key.rfind("warn.", 0) == 0 && key.size() > 5);
}

// Options Theon declares but whose feature has not landed yet: setting one to another value
// than its default warns, once (the default asks for nothing, so it says nothing). The issue
// that implements one removes it from this list.
bool is_not_implemented_yet(const std::string& key) {
  return key == "profile";
}

// Warnings of a flag string wait until the whole string is accepted (a rejected string
// applies nothing and says nothing else); then each is printed once per process.
thread_local std::vector<std::string>* t_pending_warnings = nullptr;

// `once_key` (default: the message) is what is said once per process.
void warn_once(const std::string& message, const std::string& once_key = "") {
  if (t_pending_warnings) {
    t_pending_warnings->push_back(message + '\0' + once_key);
    return;
  }
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(once_key.empty() ? message : once_key).second) std::cerr << "theon: warning: " << message << "\n";
}

void warn_theano_key_once(const std::string& key, const std::string& source) {
  warn_once(source + " key '" + key + "' is a Theano option that Theon does not support; it is ignored");
}

bool parse_bool(const std::string& key, const std::string& v) {
  std::string l = lower(v);
  if (l == "true" || l == "1" || l == "yes" || l == "on") return true;
  if (l == "false" || l == "0" || l == "no" || l == "off") return false;
  throw ConfigError("config option '" + key + "': expected a boolean (True/False), got '" + v + "'");
}

void assign(const std::string&, FloatX& field, const std::string& v) { field = FloatX(trim(v)); }
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

std::string show(FloatX t) { return std::string(dtype_name(t)); }
std::string show(const std::string& s) { return s; }
std::string show(bool b) { return b ? "True" : "False"; }
[[maybe_unused]] std::string show(int64_t i) { return std::to_string(i); }
[[maybe_unused]] std::string show(double d) { return std::to_string(d); }

void validate(const std::string& key, const Config& c) {
  if (key == "mode") canonical_mode(c.mode);
  if (key == "on_fallback" && c.on_fallback != "warn" && c.on_fallback != "raise" && c.on_fallback != "ignore")
    throw ConfigError("config option 'on_fallback' must be warn, raise or ignore, got '" + c.on_fallback + "'");
  if (key == "compute_test_value") {
    const std::string& v = c.compute_test_value;
    if (v != "off" && v != "ignore" && v != "warn" && v != "raise" && v != "pdb")
      throw ConfigError("config option 'compute_test_value' must be off, ignore, warn, raise or pdb, got '" + v + "'");
  }
  if (key == "compiledir_max_mb" && c.compiledir_max_mb < 0)
    throw ConfigError("config option 'compiledir_max_mb' must be 0 (no limit) or more (MiB), got " +
                      std::to_string(c.compiledir_max_mb));
  if (key == "openmp_elemwise_minsize" && c.openmp_elemwise_minsize < 0)
    throw ConfigError("config option 'openmp_elemwise_minsize' must be 0 or more (elements), got " +
                      std::to_string(c.openmp_elemwise_minsize));
  if (key == "device") {
    const std::string& d = c.device;
    if (d == "auto")
      throw ConfigError("config option 'device': 'auto' (placement chosen by a cost model) is not implemented yet; "
                        "use cpu, cuda or cudaN");
    bool ok = d == "cpu" || d == "cuda";
    if (!ok && d.rfind("cuda", 0) == 0 && d.size() > 4)
      ok = std::all_of(d.begin() + 4, d.end(), [](unsigned char ch) { return std::isdigit(ch); });
    if (!ok) throw ConfigError("config option 'device' must be cpu, cuda or cudaN, got '" + d + "'");
  }
}

}  // namespace

FloatX::FloatX(DType dtype) : dtype_(dtype) {
  if (dtype != DType::Float16 && dtype != DType::Float32 && dtype != DType::Float64)
    throw ConfigError("config option 'floatX' must be float16, float32 or float64, got " + std::string(dtype_name(dtype)));
}

FloatX::FloatX(const std::string& name) : dtype_(DType::Float32) {
  DType t;
  try {
    t = parse_dtype(trim(name));
  } catch (const TypeError&) {
    throw ConfigError("config option 'floatX': unknown dtype '" + name + "' (expected float16, float32 or float64)");
  }
  *this = FloatX(t);
}

FloatX::FloatX(const char* name) : FloatX(std::string(name ? name : "")) {}

std::string canonical_mode(const std::string& mode) {
  std::string m = lower(trim(mode));
  if (m == "fast_run" || m == "fast_compile" || m == "none") return m;
  if (m == "debugmode" || m == "debug_mode") return "fast_run";  // Theano's DebugMode runs the same graph here
  throw ConfigError("unknown mode '" + mode + "' (expected FAST_RUN, FAST_COMPILE or NONE, any case)");
}

std::vector<std::string> Config::keys() {
  return {
#define THEON_OPTION(name, type, def, doc, test) #name,
#include <theon/options.def>
#undef THEON_OPTION
  };
}

void Config::set(const std::string& raw_key, const std::string& value) {
  std::string key = trim(raw_key);
  Config next = *this;  // validate on a copy: a bad value leaves the config unchanged
#define THEON_OPTION(name, type, def, doc, test)                                                   \
  if (key == #name) {                                                                               \
    assign(key, next.name, trim(value));                                                            \
    validate(key, next);                                                                            \
    *this = next;                                                                                   \
    if (is_not_implemented_yet(key) && show(name) != show(type(def)))                               \
      warn_once("config option '" + key + "' is not implemented yet; " + key + "=" + show(name) +  \
                " has no effect (the default, " + show(type(def)) + ", is what Theon does)",       \
                "not implemented yet: " + key);                                                     \
    return;                                                                                         \
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
#define THEON_OPTION(name, type, def, doc, test) \
  if (key == #name) return show(name);
#include <theon/options.def>
#undef THEON_OPTION
  for (auto& [k, v] : ignored_theano_options)
    if (k == key) return v;
  throw ConfigError("unknown config option '" + key + "'");
}

std::string Config::describe() const {
  std::ostringstream os;
#define THEON_OPTION(name, type, def, doc, test) os << #name << " = " << show(name) << "    # " << doc << "\n";
#include <theon/options.def>
#undef THEON_OPTION
  return os.str();
}

void Config::apply_flags(const std::string& flags, const std::string& source) {
  // All or nothing: every entry is applied to a copy, which replaces this config only when the
  // whole string was accepted; warnings are printed only then.
  Config next = *this;
  std::vector<std::string> warnings;
  struct Pending {
    std::vector<std::string>* saved = t_pending_warnings;
    explicit Pending(std::vector<std::string>* w) { t_pending_warnings = w; }
    ~Pending() { t_pending_warnings = saved; }
  };
  {
    Pending pending(&warnings);
    std::stringstream ss(flags);
    std::string item;
    const auto all = keys();
    while (std::getline(ss, item, ',')) {
      if (trim(item).empty()) continue;
      auto eq = item.find('=');
      if (eq == std::string::npos)
        throw ConfigError(source + ": malformed entry '" + item + "' (expected key=value); nothing was applied");
      std::string key = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
      if (key.empty()) throw ConfigError(source + ": malformed entry '" + item + "' (empty key); nothing was applied");
      if (key == "floatx") key = "floatX";
      if (std::find(all.begin(), all.end(), key) == all.end() && is_theano_only_key(key)) {
        warn_theano_key_once(key, source);
        auto& ignored = next.ignored_theano_options;
        auto it = std::find_if(ignored.begin(), ignored.end(), [&](auto& kv) { return kv.first == key; });
        if (it == ignored.end()) ignored.emplace_back(key, value);
        else it->second = value;
        continue;
      }
      try {
        next.set(key, value);
      } catch (ConfigError& e) {
        e.add_context("(from " + source + "; nothing of it was applied)");
        throw;
      }
    }
  }
  *this = std::move(next);
  for (auto& w : warnings) {
    const size_t split = w.find('\0');
    warn_once(w.substr(0, split), split == std::string::npos ? "" : w.substr(split + 1));
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
