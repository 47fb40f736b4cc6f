#include "util/checked_size.hpp"

#include <theon/error.hpp>

#include <cstdio>

namespace theon::detail {

namespace {

// The product of the non-zero dims (NumPy's rule: a shape whose non-zero dims overflow is
// refused even when another dim is 0, so contiguous strides always fit); `zero` when a dim is 0.
bool nonzero_product(const Shape& shape, int64_t& n, bool& zero) noexcept {
  n = 1;
  zero = false;
  for (int64_t d : shape) {
    if (d == 0) zero = true;
    else if (!checked_mul(n, d, n)) return false;
  }
  return true;
}

}  // namespace

bool try_shape_size(const Shape& shape, int64_t& size) noexcept {
  int64_t n;
  bool zero;
  if (!nonzero_product(shape, n, zero)) return false;
  size = zero ? 0 : n;
  return true;
}

bool try_nbytes(const Shape& shape, DType dtype, int64_t& bytes) noexcept {
  int64_t n;
  bool zero;
  if (!nonzero_product(shape, n, zero) || !checked_mul(n, static_cast<int64_t>(itemsize(dtype)), n)) return false;
  bytes = zero ? 0 : n;
  return true;
}

namespace {

std::string approx(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", x);
  return buf;
}

}  // namespace

void throw_too_big(const std::string& what, const Shape& shape, std::optional<DType> dtype) {
  double elements = 1;  // of the non-zero dims, as the check counts them (-1, "inferred", as 1)
  for (int64_t d : shape) elements *= d <= 0 ? 1.0 : static_cast<double>(d);
  std::string msg =
      (what.empty() ? "" : what + ": ") + "shape " + shape_str(shape) + " is too big: " + approx(elements) + " elements";
  if (dtype) {
    msg += " of " + std::string(dtype_name(*dtype)) + " (" + approx(elements * static_cast<double>(itemsize(*dtype))) +
           " bytes) exceed the largest possible array (2**63 - 1 bytes)";
  } else {
    msg += " exceed the largest possible array (2**63 - 1 elements)";
  }
  throw ShapeError(msg);
}

std::string human_bytes(double bytes) {
  static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%.0f bytes", bytes);
  else std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

void throw_out_of_memory(size_t bytes, Device device, std::string_view detail) {
  throw MemoryError("out of memory on " + device.str() + ": cannot allocate " + std::to_string(bytes) + " bytes (" +
                        human_bytes(static_cast<double>(bytes)) + ")" + std::string(detail),
                    bytes, device.str());
}

}  // namespace theon::detail
