// Elemwise: a scalar op applied elementwise with NumPy broadcasting. Inputs of an Elemwise
// node always have the same rank and (but for a Switch condition) the same dtype: the
// builder inserts DimShuffle and Cast nodes, so kernels never promote or align ranks.
#pragma once
#include "graph/op.hpp"
#include "ops/scalar/scalar_op_id.hpp"

#include <theon/dtype.hpp>

#include <map>
#include <memory>
#include <vector>

namespace theon::ops {

class Elemwise final : public graph::Op {
 public:
  /// `inplace` >= 0 makes the inplace variant (made only by the inplace pass): output 0
  /// overwrites input `inplace` (destroy_map {0: inplace}), printed "Elemwise{add, inplace(0)}".
  Elemwise(ScalarOpId scalar, DType out_dtype, int inplace = -1)
      : scalar_(scalar), out_dtype_(out_dtype), inplace_(inplace) {}
  ScalarOpId scalar() const { return scalar_; }
  DType out_dtype() const { return out_dtype_; }
  /// The destroyed input, or -1.
  int inplace() const { return inplace_; }
  std::map<int, int> destroy_map() const override {
    return inplace_ >= 0 ? std::map<int, int>{{0, inplace_}} : std::map<int, int>{};
  }
  std::shared_ptr<const graph::Op> inplace_variant(int output, int input) const override {
    if (output != 0 || input < 0 || inplace_ >= 0) return nullptr;
    return std::make_shared<Elemwise>(scalar_, out_dtype_, input);
  }

  static constexpr graph::OpKind kKind = graph::OpKind::Elemwise;

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// A cast presents its input (builders insert them for type promotion).
  bool presents_input() const override { return scalar_ == ScalarOpId::Cast; }
  /// "mul(y, 2.0)".
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;
  /// Per scalar op (elemwise_grad.cpp); each input's gradient is summed to its run-time shape.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  ScalarOpId scalar_;
  DType out_dtype_;
  int inplace_ = -1;
};

/// Builds an elementwise node: NEP 50 promotion (literals are weak), the op kind's dtype
/// rule, rank alignment and static broadcast checks. Throws TypeError/ShapeError naming the
/// op and the inputs.
graph::VarPtr elemwise(ScalarOpId op, std::vector<graph::VarPtr> inputs);
/// Converts to `dtype` (a no-op when it already is).
graph::VarPtr cast(const graph::VarPtr& x, DType dtype);
/// A literal: weak in promotion (NEP 50). Integral values give int64, others float64,
/// until promotion decides.
graph::VarPtr literal(double value, bool integral);
/// A strong constant holding `value`.
graph::VarPtr constant(Array value, std::string name = "");

/// NumPy broadcast of run-time shapes (same rank); ShapeError names `node` and its inputs.
Shape broadcast_shapes(const graph::Apply& node, const std::vector<Array>& inputs);

}  // namespace theon::ops
