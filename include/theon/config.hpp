// Theon's configuration: a mutable, typed object read when a function is compiled.
//
//   config().floatX = DType::Float64;      // or config().set("floatX", "float64")
//   config().mode = "FAST_COMPILE";        // mode names are case-insensitive
//
// At first use it reads ~/.theonrc (key=value lines), then THEANO_FLAGS, then THEON_FLAGS
// ("key=value,key=value", Theano's format). Theano keys that Theon does not support warn
// once; unknown keys and malformed values raise ConfigError.
#pragma once
#include <theon/dtype.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace theon {

struct Config {
#define THEON_OPTION(name, type, def, doc) type name = def;
#include <theon/options.def>
#undef THEON_OPTION

  /// Sets an option from its text form; throws ConfigError naming the key and value.
  void set(const std::string& key, const std::string& value);
  /// The text form of an option's value; throws ConfigError for an unknown key.
  std::string get(const std::string& key) const;
  /// Every option's name, value and doc, one per line.
  std::string describe() const;
  /// Parses "key=value,key=value" (Theano's flag format); `source` names it in errors.
  void apply_flags(const std::string& flags, const std::string& source = "THEON_FLAGS");
  /// Names of all options.
  static std::vector<std::string> keys();
};

/// The process-wide configuration (created, and flags read, on first call).
Config& config();

/// Normalised mode name ("fast_run", "fast_compile", "none"); throws ConfigError otherwise.
std::string canonical_mode(const std::string& mode);

}  // namespace theon
