// Helpers for walking strided n-d arrays: dimension collapsing and an odometer.
#pragma once
#include <theon/array.hpp>

#include <cstdint>
#include <vector>

namespace theon::detail {

/// Iterates the outer dims (all but the last) of a shape, keeping one offset per operand.
/// The innermost loop is left to the caller so it stays a plain, vectorisable loop.
class OuterLoop {
 public:
  /// `strides[k]` are operand k's strides (elements, 0 for broadcast dims), `offsets` its start.
  OuterLoop(const Shape& shape, std::vector<const Strides*> strides, std::vector<int64_t> offsets);
  /// Number of inner-loop runs (product of all but the last dim; 1 for 0-d).
  int64_t count() const { return count_; }
  const std::vector<int64_t>& offsets() const { return offsets_; }
  void next();

 private:
  Shape shape_;
  std::vector<const Strides*> strides_;
  std::vector<int64_t> offsets_;
  std::vector<int64_t> index_;
  int64_t count_;
};

/// Merges adjacent dims that are contiguous with each other in every operand, dropping
/// size-1 dims, so a contiguous n-d loop becomes one flat loop. The result has at least one
/// dim (0-d becomes {1}), so callers can always take shape.back(). Updates both in place.
void collapse_dims(Shape& shape, std::vector<Strides>& strides);

/// Strides of `a` broadcast to `out_shape` (0 where `a` has size 1 or is missing a leading dim).
Strides broadcast_strides(const Array& a, const Shape& out_shape);

}  // namespace theon::detail
