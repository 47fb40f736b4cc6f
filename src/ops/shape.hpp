// Shape ops: Reshape (and flatten), BroadcastTo, Shape (shape and size) and Alloc
// (alloc, zeros_like, ones_like), plus the strided copy helpers the indexing and join
// families share. Reshape and BroadcastTo are views of their input.
#pragma once
#include "graph/op.hpp"

#include <optional>
#include <string>
#include <vector>

namespace theon::ops {

/// Reshape to an int64 shape vector (input 1; one entry may be -1), or, for flatten, keep
/// the first `flatten_ndim - 1` dims and merge the rest (no shape input).
class Reshape final : public graph::Op {
 public:
  Reshape(int ndim, bool flatten) : ndim_(ndim), flatten_(flatten) {}
  int ndim() const { return ndim_; }
  bool flatten() const { return flatten_; }

  static constexpr graph::OpKind kKind = graph::OpKind::Reshape;

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  // A view when the input is contiguous, else a copy: perform always sets the output.
  void perform(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  std::map<int, int> view_map() const override { return {{0, 0}}; }
  graph::Cost cost(const graph::Apply&, const std::vector<Shape>&) const override { return {0, 0, 0}; }
  /// "flatten(x)", "reshape(x, [3, 3])".
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;

 private:
  int ndim_;
  bool flatten_;
};

/// numpy.broadcast_to with a static target shape: a stride-0 view.
class BroadcastTo final : public graph::Op {
 public:
  explicit BroadcastTo(Shape shape) : shape_(std::move(shape)) {}
  const Shape& shape() const { return shape_; }
  static constexpr graph::OpKind kKind = graph::OpKind::BroadcastTo;
  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  void perform(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  std::map<int, int> view_map() const override { return {{0, 0}}; }
  graph::Cost cost(const graph::Apply&, const std::vector<Shape>&) const override { return {0, 0, 0}; }

 private:
  Shape shape_;
};

/// x.shape (int64 vector) or x.size (int64 scalar).
class ShapeOf final : public graph::Op {
 public:
  explicit ShapeOf(bool size) : size_(size) {}
  bool size() const { return size_; }  // x.size (else x.shape)
  static constexpr graph::OpKind kKind = graph::OpKind::Shape;
  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override { return {{"", size_ ? "size" : "shape"}}; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  void perform(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  graph::Cost cost(const graph::Apply&, const std::vector<Shape>&) const override { return {0, 0, 0}; }

 private:
  bool size_;
};

/// Theano's Alloc: input 0 (a value broadcast NumPy-style) filled into a tensor whose
/// sizes are inputs 1..n (int64 scalars).
class Alloc final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::Alloc;
  graph::OpKind kind() const override { return kKind; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
};

graph::VarPtr reshape(const graph::VarPtr& x, const std::vector<int64_t>& shape);
/// `shape` is an integer vector of static length (its values are read at run time).
graph::VarPtr reshape(const graph::VarPtr& x, const graph::VarPtr& shape);
graph::VarPtr flatten(const graph::VarPtr& x, int ndim);
graph::VarPtr broadcast_to(const graph::VarPtr& x, const std::vector<int64_t>& shape);
graph::VarPtr shape_of(const graph::VarPtr& x);
graph::VarPtr size_of(const graph::VarPtr& x);
/// `value` broadcasts to the shape; each size is an integer scalar.
graph::VarPtr alloc(const graph::VarPtr& value, const std::vector<graph::VarPtr>& shape);
/// A tensor shaped like x filled with `fill` (zeros_like/ones_like).
graph::VarPtr fill_like(const graph::VarPtr& x, double fill, std::optional<DType> dtype, const std::string& what);

// ---- helpers shared by the shape, join and indexing families ----

/// "x (float32 (?, 3))": the label and type of a variable, for messages.
std::string label_type(const graph::VarPtr& v);
/// Static dims as "(?, 3)".
std::string dims_str(const std::vector<int64_t>& dims);
/// The value of a 0-d integer array.
int64_t scalar_int(const Array& a);
/// Checks that `v` is an integer scalar (a slice bound, an alloc size); TypeError naming `what`.
void require_int_scalar(const graph::VarPtr& v, const std::string& what);
/// dst = src broadcast to dst's shape (same dtype; any strides on both sides).
void copy_strided(const Array& src, const Array& dst);
/// dst += src broadcast to dst's shape (integers wrap, bools or).
void add_strided(const Array& src, const Array& dst);

}  // namespace theon::ops
