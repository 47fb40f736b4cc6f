// TensorType: what a Variable is, statically. Dims are known sizes or -1 (unknown); a
// known 1 is Theano's "broadcastable". `context` pins a variable to a named context.
#pragma once
#include <theon/array.hpp>
#include <theon/dtype.hpp>

#include <string>
#include <vector>

namespace theon::graph {

inline constexpr int64_t kUnknownDim = -1;

struct TensorType {
  DType dtype = DType::Float32;
  std::vector<int64_t> dims;  // static sizes, kUnknownDim where unknown
  std::string context;        // empty: unpinned

  int ndim() const { return static_cast<int>(dims.size()); }
  bool broadcastable(int d) const { return dims[d] == 1; }
  /// "float32 (?, 5)" — dtype and static dims; the printer uses it.
  std::string str() const;
  /// Theano's kind name for the rank: scalar, vector, matrix, tensor3, tensor4, tensor<N>.
  std::string kind() const;
  /// Does a run-time shape fit the static dims?
  bool accepts(const Shape& shape) const;
  bool operator==(const TensorType&) const = default;
};

/// Static dims of the NumPy broadcast of `inputs`' dims (all of one rank); -1 where
/// unknown. Throws ShapeError via `describe` when two known sizes disagree.
std::vector<int64_t> broadcast_static_dims(const std::vector<const TensorType*>& inputs, const std::string& what);

}  // namespace theon::graph
