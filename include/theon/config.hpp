// Theon's configuration: a mutable, typed object read when a function is compiled.
//
//   config().floatX = DType::Float64;      // or = "float64", or config().set("floatX", "float64")
//   config().mode = "FAST_COMPILE";        // mode names are case-insensitive
//
// At first use it reads ~/.theonrc (key=value lines), then THEANO_FLAGS, then THEON_FLAGS
// ("key=value,key=value", Theano's format). Theano keys that Theon does not support warn
// once; unknown keys and malformed values raise ConfigError, and a rejected flag string applies
// nothing. Options not implemented yet (profile) warn once when
// set to another value than their default; Theano's warn.* keys are accepted and ignored with
// one warning. Each option's row in options.def names the test that proves its effect.
#pragma once
#include <theon/dtype.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace theon {

/// The type of `config().floatX`: a DType that is float32 or float64, assignable from a DType
/// or a dtype name (`config().floatX = "float64"`); anything else throws ConfigError.
class FloatX {
 public:
  FloatX(DType dtype);  // NOLINT: implicit, as the option used to be a plain DType
  FloatX(const char* name);
  FloatX(const std::string& name);
  operator DType() const { return dtype_; }
  DType dtype() const { return dtype_; }
  friend bool operator==(FloatX a, FloatX b) { return a.dtype_ == b.dtype_; }
  friend bool operator==(FloatX a, DType b) { return a.dtype_ == b; }

 private:
  DType dtype_;
};

struct Config {
#define THEON_OPTION(name, type, def, doc, test) type name = def;
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
  /// Theano options that Theon accepts and ignores (warn.*, lib.cnmem, ...), as last set:
  /// reading one back gives what was set.
  std::vector<std::pair<std::string, std::string>> ignored_theano_options;
};

/// The process-wide configuration (created, and flags read, on first call).
Config& config();

/// Normalised mode name ("fast_run", "fast_compile", "none"); throws ConfigError otherwise.
std::string canonical_mode(const std::string& mode);

}  // namespace theon
