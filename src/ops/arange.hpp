// ARange: numpy.arange / Theano's T.arange with symbolic start, stop and step (scalars). The
// output length is a value: ceil((stop - start) / step), at least 0, so infer_shape reads the
// three inputs (on the host: the CUDA kernel declares them host inputs) and a step of 0 is a
// ValueError when the function runs (when the graph is built if the step is a constant).
//
// The builder casts the three inputs to one compute dtype: int64 when the output is an integer
// and every input is (exact lengths and values, wrapping like NumPy), float64 otherwise
// (out[i] = start + i * step in double, converted to the output dtype once).
#pragma once
#include "graph/op.hpp"

#include <theon/dtype.hpp>

#include <optional>

namespace theon::ops {

class ARange final : public graph::Op {
 public:
  explicit ARange(DType dtype) : dtype_(dtype) {}
  DType dtype() const { return dtype_; }

  static constexpr graph::OpKind kKind = graph::OpKind::ARange;
  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override { return {{"dtype", std::string(dtype_name(dtype_))}}; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// Theano's: start gets sum(g), step sum(g * arange(n)); stop only sets the length
  /// (disconnected). Integer outputs pass no gradient (grad's integer rule).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  /// "arange(0, n, 2)".
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;

 private:
  DType dtype_;
};

/// The number of elements of arange(start, stop, step) computed in int64 (exact) or double.
/// Throws ValueError naming `what` for a step of 0 or a length that is not finite.
int64_t arange_length(const Array& start, const Array& stop, const Array& step, const std::string& what);

/// Theano's dtype rule: the inputs' promoted dtype (NEP 50: literals are weak, so an all-literal
/// float arange takes floatX), with every integer (and bool) widened to int64.
DType arange_dtype(const graph::VarPtr& start, const graph::VarPtr& stop, const graph::VarPtr& step);

/// arange(start, stop, step) as a vector of `dtype` (std::nullopt: arange_dtype). Each input
/// is a numeric scalar; a constant step of 0 is a ValueError here.
graph::VarPtr arange(const graph::VarPtr& start, const graph::VarPtr& stop, const graph::VarPtr& step,
                     std::optional<DType> dtype);

}  // namespace theon::ops
