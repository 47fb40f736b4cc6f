// Sizes computed from shapes, with overflow checks. Every element count and byte count that
// Theon derives from a shape goes through here (Array, the ops' shape rules, the executor's
// allocations), so an impossible size is a ShapeError naming the op and the shape instead of
// a wrapped product (a too-small buffer, then garbage or a crash). The rule is NumPy's: an
// array's elements and its bytes (elements × itemsize) must each fit in int64.
//
//   const int64_t n = detail::checked_size(shape, [&] { return node.describe(); });
//   const size_t bytes = detail::checked_nbytes(shape, dtype, "Array");
//
// The message callable runs only on failure, so the passing path builds no strings.
// Failed allocations are another matter: MemoryError (throw_out_of_memory below).
#pragma once
#include <theon/array.hpp>
#include <theon/device.hpp>
#include <theon/dtype.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace theon::detail {

/// a × b for non-negative a and b; false when the product exceeds int64.
inline bool checked_mul(int64_t a, int64_t b, int64_t& out) noexcept { return !__builtin_mul_overflow(a, b, &out); }
/// a + b for non-negative a and b; false when the sum exceeds int64.
inline bool checked_add(int64_t a, int64_t b, int64_t& out) noexcept { return !__builtin_add_overflow(a, b, &out); }

/// The product of the dims (negative dims, "unknown" in static types, are multiplied as they
/// are); false when it exceeds int64. As in NumPy, the product of the non-zero dims must fit
/// even when a dim is 0 (so an array's contiguous strides always fit in int64).
bool try_shape_size(const Shape& shape, int64_t& size) noexcept;
/// Elements × itemsize of a contiguous array of `shape` and `dtype`; false when either the
/// element count or the byte count exceeds int64.
bool try_nbytes(const Shape& shape, DType dtype, int64_t& bytes) noexcept;

/// ShapeError "<what>: shape (2**62, 4) is too big: 1.8e+19 elements of float32 (7.4e+19
/// bytes) exceed the largest possible array (2**63 - 1 bytes)" (without a dtype: elements;
/// with an empty `what`, the message starts at "shape").
[[noreturn]] void throw_too_big(const std::string& what, const Shape& shape, std::optional<DType> dtype);

template <class What>
  requires std::invocable<What&>
int64_t checked_size(const Shape& shape, What&& what) {
  int64_t n;
  if (!try_shape_size(shape, n)) throw_too_big(what(), shape, std::nullopt);
  return n;
}
inline int64_t checked_size(const Shape& shape, std::string_view what) {
  return checked_size(shape, [what] { return std::string(what); });
}

template <class What>
  requires std::invocable<What&>
size_t checked_nbytes(const Shape& shape, DType dtype, What&& what) {
  int64_t n;
  if (!try_nbytes(shape, dtype, n)) throw_too_big(what(), shape, dtype);
  return static_cast<size_t>(n);
}
inline size_t checked_nbytes(const Shape& shape, DType dtype, std::string_view what) {
  return checked_nbytes(shape, dtype, [what] { return std::string(what); });
}

/// MemoryError "out of memory on <device>: cannot allocate <bytes> bytes (<human>)<detail>".
[[noreturn]] void throw_out_of_memory(size_t bytes, Device device, std::string_view detail = {});
/// "1.5 GiB", "512 TiB": a byte count for messages.
std::string human_bytes(double bytes);

}  // namespace theon::detail
