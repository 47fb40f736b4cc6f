// Neural-network ops: softmax and log_softmax along one axis (numerically stable: the lane's
// maximum is subtracted first, sums run in double), categorical cross-entropy with integer
// targets, and one-hot encoding. Cross-entropy against a one-hot / probability matrix is
// built from elementwise ops and a sum.
#pragma once
#include "graph/op.hpp"

#include <theon/dtype.hpp>

namespace theon::ops {

/// Softmax (family "Softmax") or, with `log`, LogSoftmax (family "LogSoftmax").
class Softmax final : public graph::Op {
 public:
  Softmax(bool log, int axis) : log_(log), axis_(axis) {}
  bool is_log() const { return log_; }
  int axis() const { return axis_; }  // non-negative

  graph::OpKind kind() const override { return log_ ? graph::OpKind::LogSoftmax : graph::OpKind::Softmax; }
  graph::OpProps props() const override { return {{"axis", std::to_string(axis_)}}; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// softmax: (gz - sum(gz * sm, axis, keepdims)) * sm, or, when gz is the gradient of a
  /// categorical_crossentropy with integer labels of this very output (axis 1 of a matrix),
  /// the cancelled form gz[i] * (sm - one_hot(labels)) as one SoftmaxCrossentropyGrad node
  /// (nnet_fused.hpp), finite even where sm underflows;
  /// log_softmax: gz - exp(out) * sum(gz, axis, keepdims).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  bool log_;
  int axis_;
};

/// softmax(x, axis) / log_softmax(x, axis) for rank >= 1; integer and bool inputs are
/// computed in upcast_to_float(dtype), as NumPy's float functions.
graph::VarPtr softmax(const graph::VarPtr& x, int axis, bool log);

/// out[i] = -log(coding[i, targets[i]]): inputs (coding matrix, integer target vector).
class CategoricalCrossentropy final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::CategoricalCrossentropy;
  graph::OpKind kind() const override { return kKind; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// coding: crossentropy_grad(gz, coding, targets); targets: none.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
};

/// Theano's categorical_crossentropy(coding_dist, true_dist): coding_dist is a matrix of
/// row probabilities; true_dist an integer vector of class indices (an IndexError at run
/// time for one outside [0, classes)) or a matrix of coding_dist's shape, giving
/// -sum(true_dist * log(coding_dist), axis=1).
graph::VarPtr categorical_crossentropy(const graph::VarPtr& coding_dist, const graph::VarPtr& true_dist);

/// out[i, j] = (indices[i] == j), of `dtype`; input an integer vector.
class OneHot final : public graph::Op {
 public:
  OneHot(int64_t n, DType dtype) : n_(n), dtype_(dtype) {}
  int64_t n() const { return n_; }

  static constexpr graph::OpKind kKind = graph::OpKind::OneHot;

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// An integer input: no gradient (nullptr).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  int64_t n_;
  DType dtype_;
};

/// one_hot(indices, n, dtype): an (len, n) matrix; IndexError at run time for an index
/// outside [0, n).
graph::VarPtr one_hot(const graph::VarPtr& indices, int64_t n, DType dtype);

// ---- internal ops of the gradients (src/ops/nnet_grad.cpp) ----
// Rows are picked by an integer label vector whose length is the matrix's row count, so no
// static class count is needed (one_hot needs one). Out-of-range labels raise IndexError.

/// LabelGather(x, labels)[i] = x[i, labels[i]]: inputs (matrix, integer vector).
class LabelGather final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::LabelGather;
  graph::OpKind kind() const override { return kKind; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
};
graph::VarPtr label_gather(const graph::VarPtr& x, const graph::VarPtr& labels);

/// LabelScatter(v, like, labels)[i, j] = v[i] if j == labels[i] else 0, of like's shape and
/// dtype: inputs (vector, matrix, integer vector). The adjoint of LabelGather.
class LabelScatter final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::LabelScatter;
  graph::OpKind kind() const override { return kKind; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
};
graph::VarPtr label_scatter(const graph::VarPtr& v, const graph::VarPtr& like, const graph::VarPtr& labels);

/// The gradient of categorical_crossentropy with integer labels with respect to coding:
/// out[i, j] = -gz[i] / coding[i, j] if j == labels[i] else 0. Inputs (gz vector, coding
/// matrix, labels). Its own L_op (built from LabelGather/LabelScatter) gives grad of grad;
/// Softmax::L_op recognises it to cancel the division (see there).
class CrossentropyGrad final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::CrossentropyGrad;
  graph::OpKind kind() const override { return kKind; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
};
graph::VarPtr crossentropy_grad(const graph::VarPtr& gz, const graph::VarPtr& coding, const graph::VarPtr& labels);

/// "categorical_crossentropy(p, y)" for a CategoricalCrossentropy node: how its errors name it.
std::string crossentropy_call(const graph::Apply& node);

}  // namespace theon::ops
