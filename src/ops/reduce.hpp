// Reduce: sum, prod, max, min, any, all and mean over a set of axes (Theano's CAReduce).
// keepdims is a DimShuffle after the reduction, so kernels see one form.
#pragma once
#include "graph/op.hpp"

#include <optional>
#include <vector>

namespace theon::ops {

// Count is internal (mean's gradient): the number of elements reduced, as a float.
enum class ReduceKind { Sum, Prod, Max, Min, Any, All, Mean, Count };

class Reduce final : public graph::Op {
 public:
  Reduce(ReduceKind kind, std::vector<int> axes, DType out_dtype)
      : kind_(kind), axes_(std::move(axes)), out_dtype_(out_dtype) {}
  ReduceKind reduce_kind() const { return kind_; }
  const std::vector<int>& axes() const { return axes_; }  // sorted, non-negative
  DType out_dtype() const { return out_dtype_; }

  graph::OpKind kind() const override;
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  ReduceKind kind_;
  std::vector<int> axes_;
  DType out_dtype_;
};

std::string_view reduce_kind_name(ReduceKind kind);
/// The OpKind of a Reduce node computing `kind` (Sum -> OpKind::Sum), and back: nullopt for
/// a kind no Reduce answers.
graph::OpKind reduce_op_kind(ReduceKind kind);
std::optional<ReduceKind> reduce_kind_of(graph::OpKind kind);
/// True for the kinds the Reduce class serves.
inline bool is_reduce(graph::OpKind kind) { return reduce_kind_of(kind).has_value(); }
/// Builds a reduction. `axes` empty (std::nullopt) reduces every axis; negative axes count
/// from the end. Result dtypes follow NumPy: sum/prod of bool or integers give int64, mean
/// of integers float64, any/all bool.
graph::VarPtr reduce(ReduceKind kind, const graph::VarPtr& x, std::optional<std::vector<int>> axes, bool keepdims);

/// Internal: the number of elements `x` has along `axes`, as a 0-d array of `dtype`.
graph::VarPtr reduce_count(const graph::VarPtr& x, const std::vector<int>& axes, DType dtype);

/// Normalises axes for an op on `x`: negative -> positive, range-checked, sorted, unique.
std::vector<int> normalize_axes(const std::string& what, const graph::VarPtr& x, std::vector<int> axes);

}  // namespace theon::ops
