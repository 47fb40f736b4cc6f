// config(): typed get/set by key (the option table comes from include/theon/options.def).
#include "bindings.hpp"

#include <theon/kernel_cache.hpp>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace theon::py {
namespace {

nb::object to_py(bool v) { return nb::bool_(v); }
[[maybe_unused]] nb::object to_py(int64_t v) { return nb::int_(v); }
[[maybe_unused]] nb::object to_py(double v) { return nb::float_(v); }
nb::object to_py(const std::string& v) { return nb::str(v.c_str()); }
nb::object to_py(FloatX v) { return nb::str(std::string(dtype_name(v)).c_str()); }

nb::object config_get(const std::string& key) {
  Config& c = config();
#define THEON_OPTION(name, type, def, doc, test) \
  if (key == #name) return to_py(c.name);
#include <theon/options.def>
#undef THEON_OPTION
  return nb::str(c.get(key).c_str());  // throws ConfigError for an unknown key
}

std::string config_doc(const std::string& key) {
#define THEON_OPTION(name, type, def, doc, test) \
  if (key == #name) return doc;
#include <theon/options.def>
#undef THEON_OPTION
  throw ConfigError("unknown config option '" + key + "'");
}

}  // namespace

void init_config(nb::module_& m) {
  nb::module_ c = m.def_submodule("config", "theon::config()");
  c.def("get", &config_get, nb::arg("key"), "The option's value (bool, int, float or str).");
  c.def("get_text", [](const std::string& k) { return config().get(k); }, nb::arg("key"));
  c.def("set", [](const std::string& k, const std::string& v) { config().set(k, v); }, nb::arg("key"),
        nb::arg("value"), "Sets an option from its text form; ConfigError (a ValueError) for a bad key or value.");
  c.def("keys", &Config::keys);
  c.def("describe", [] { return config().describe(); });
  c.def("doc", &config_doc, nb::arg("key"));
  c.def("apply_flags", [](const std::string& f, const std::string& s) { config().apply_flags(f, s); },
        nb::arg("flags"), nb::arg("source") = "THEON_FLAGS");
  c.def("canonical_mode", &canonical_mode, nb::arg("mode"));

  nb::module_ k = m.def_submodule("kernel_cache", "theon::kernel_cache_info / clear_kernel_cache");
  k.def("info", [] {
    const KernelCacheInfo i = kernel_cache_info();
    nb::dict d;
    d["root"] = i.root;
    d["refused"] = i.refused;
    d["entries"] = i.entries;
    d["bytes"] = i.bytes;
    d["limit_bytes"] = i.limit_bytes;
    return d;
  });
  k.def("clear", &clear_kernel_cache, "Removes every cached kernel; returns the bytes removed.");
}

}  // namespace theon::py
