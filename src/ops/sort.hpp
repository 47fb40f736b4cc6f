// Sort and ArgSort: numpy.sort / numpy.argsort along one axis (Theano's theano.tensor.sort).
// Both order stably with NaN last (NumPy's order): sort gives the values, argsort the int64
// positions of the sorted values along the axis. The backends share the comparison below
// (sort_less), so the CPU and the GPU give the same result, ties included.
#pragma once
#include "graph/op.hpp"

#include <optional>

#ifdef __CUDACC__
#define THEON_SORT_HD __host__ __device__ inline
#else
#define THEON_SORT_HD inline
#endif

namespace theon::ops {

/// a before b: ascending, NaN after every number (NumPy's order). Ties keep their input order
/// in the stable sorts that use it.
template <class T> THEON_SORT_HD bool sort_less(T a, T b) { return a < b || (b != b && a == a); }

class Sort final : public graph::Op {
 public:
  /// `kind` Sort or ArgSort; `axis` non-negative (the builders normalise it).
  Sort(graph::OpKind kind, int axis) : kind_(kind), axis_(axis) {}
  static const Sort* of(const graph::Op& op);
  int axis() const { return axis_; }
  bool indices() const { return kind_ == graph::OpKind::ArgSort; }

  graph::OpKind kind() const override { return kind_; }
  graph::OpProps props() const override { return {{"axis", std::to_string(axis_)}}; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// sort: Theano's rule, the output gradient gathered at each element's rank
  /// (argsort(argsort(x))) along the axis. argsort: none (an index is piecewise constant).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;

 private:
  graph::OpKind kind_;
  int axis_;
};

/// sort(x, axis) / argsort(x, axis): along `axis` (negative counts from the end), or over the
/// flattened tensor when std::nullopt (Theano's axis=None). ShapeError naming x for a bad axis.
graph::VarPtr sort(const graph::VarPtr& x, std::optional<int> axis);
graph::VarPtr argsort(const graph::VarPtr& x, std::optional<int> axis);

}  // namespace theon::ops
