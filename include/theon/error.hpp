// Theon's exception hierarchy. Every user-facing error names the op, the user's variable
// names and the shapes or values at fault; the executor appends where it happened.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

namespace theon {

class Error : public std::exception {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const { return message_; }
  /// Appends "\n  <context>" (the executor adds the node and function it happened in).
  void add_context(const std::string& context) { message_ += "\n  " + context; }

 private:
  std::string message_;
};

/// Wrong dtype, wrong number of inputs, unsupported dtype or operation (Python: TypeError).
class TypeError : public Error { using Error::Error; };
/// Shapes or ranks that do not agree, bad axis (Python: ValueError).
class ShapeError : public Error { using Error::Error; };
/// Other bad values (Python: ValueError).
class ValueError : public Error { using Error::Error; };
/// Out-of-range indices (Python: IndexError).
class IndexError : public Error { using Error::Error; };
/// Unknown or malformed configuration keys and values (Python: ValueError).
class ConfigError : public Error { using Error::Error; };
/// A device that is not available, or a failure reported by a device (Python: RuntimeError).
class DeviceError : public Error { using Error::Error; };
/// Something asked of an op that it does not define (Python: NotImplementedError).
class NotImplementedError : public Error { using Error::Error; };
/// A broken invariant inside Theon: a bug (Python: RuntimeError).
class InternalError : public Error { using Error::Error; };
/// An allocation that failed: host or device memory is exhausted (Python: MemoryError). The
/// message names the bytes asked for and the device; a function call that raises it has
/// committed nothing (its updates are not applied).
class MemoryError : public Error {
 public:
  MemoryError(std::string message, size_t bytes, std::string device)
      : Error(std::move(message)), bytes_(bytes), device_(std::move(device)) {}
  /// The bytes that could not be allocated (0 when unknown: std::bad_alloc from a kernel).
  size_t bytes() const { return bytes_; }
  /// "cpu", "cuda0", ...
  const std::string& device() const { return device_; }

 private:
  size_t bytes_;
  std::string device_;
};

}  // namespace theon
