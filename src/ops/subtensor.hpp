// Indexing: Subtensor (basic indexing, a view), AdvancedSubtensor1 (take: integer-array
// indexing along one axis, a copy) and their writing forms IncSubtensor /
// AdvancedIncSubtensor1 (set_subtensor, inc_subtensor: a new tensor, x is not modified).
#pragma once
#include "graph/op.hpp"

#include <theon/index.hpp>

#include <optional>
#include <string_view>
#include <vector>

namespace theon::ops {

/// One entry of a basic index: an integer (drops the dim) or a slice. Each bound is absent,
/// a constant (folded into the op, so equal indexings merge) or a symbolic scalar input.
struct IndexEntry {
  enum class Kind : uint8_t { None, Const, Input };
  struct Part {
    Kind kind = Kind::None;
    int64_t value = 0;  // the constant; for Input, the position among the node's bound inputs
  };
  bool is_slice = false;
  Part start, stop, step;  // an integer index uses `start` only
};
using IndexSpec = std::vector<IndexEntry>;

/// Python's slice semantics resolved against a dim: the selection's first element, step
/// and length (step 0 is rejected by the caller).
struct DimSelection {
  int64_t start = 0, step = 1, len = 0;
  bool drop = false;  // an integer index
};

class Subtensor final : public graph::Op {
 public:
  explicit Subtensor(IndexSpec spec) : spec_(std::move(spec)) {}
  const IndexSpec& spec() const { return spec_; }
  static constexpr graph::OpKind kKind = graph::OpKind::Subtensor;
  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  /// "x[1:, n]".
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  void perform(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  std::map<int, int> view_map() const override { return {{0, 0}}; }
  graph::Cost cost(const graph::Apply&, const std::vector<Shape>&) const override { return {0, 0, 0}; }

 private:
  IndexSpec spec_;
};

/// x with the region that `spec` selects set to (or incremented by) y, broadcast.
/// Inputs: x, y, then the spec's symbolic bounds.
class IncSubtensor final : public graph::Op {
 public:
  IncSubtensor(IndexSpec spec, bool set) : spec_(std::move(spec)), set_(set) {}
  const IndexSpec& spec() const { return spec_; }
  bool set() const { return set_; }  // set_subtensor (else inc_subtensor)
  static constexpr graph::OpKind kKind = graph::OpKind::IncSubtensor;
  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;

 private:
  IndexSpec spec_;
  bool set_;
};

/// numpy.take(x, indices, axis): inputs x and an integer tensor of indices. `nested` marks
/// the take that x[...] builds after a Subtensor, so set_subtensor can write through both.
class AdvancedSubtensor1 final : public graph::Op {
 public:
  AdvancedSubtensor1(int axis, bool nested) : axis_(axis), nested_(nested) {}
  int axis() const { return axis_; }
  bool nested() const { return nested_; }
  static constexpr graph::OpKind kKind = graph::OpKind::AdvancedSubtensor1;
  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  /// "take(x, i, axis=0)".
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  int axis_;
  bool nested_;
};

/// Inputs x, y, indices: x with x.take(indices, axis) set to / incremented by y. Repeated
/// indices accumulate for inc (numpy.add.at); for set the last one wins.
class AdvancedIncSubtensor1 final : public graph::Op {
 public:
  AdvancedIncSubtensor1(int axis, bool set) : axis_(axis), set_(set) {}
  int axis() const { return axis_; }
  bool set() const { return set_; }  // set (else inc)
  static constexpr graph::OpKind kKind = graph::OpKind::AdvancedIncSubtensor1;
  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  int axis_;
  bool set_;
};

/// The spec that Subtensor/IncSubtensor props print ("1:$0:2, 3": entries ", "-separated,
/// slices "a:b[:c]", absent parts empty, "$k" for bound input k), read back for make_op.
/// Throws ValueError for text that is no printed spec.
IndexSpec index_spec_from_text(std::string_view text);

/// x[indices] with NumPy semantics: integers drop dims, slices keep them, one integer
/// array index selects along its dim (a take; moved first when NumPy would).
graph::VarPtr subtensor(const graph::VarPtr& x, const std::vector<Index>& indices);
graph::VarPtr take(const graph::VarPtr& x, const graph::VarPtr& indices, int axis, bool nested = false);
/// set (or increment) the region `sub` selects; `sub` must be an x[...] or take result.
graph::VarPtr inc_subtensor(const graph::VarPtr& sub, const graph::VarPtr& y, bool set);
/// A Subtensor of x with an existing spec and its symbolic bound inputs (in the spec's
/// order): what gradients build to index a tensor shaped like the one a node indexed.
graph::VarPtr subtensor_spec(const graph::VarPtr& x, const IndexSpec& spec, const std::vector<graph::VarPtr>& bounds);

// Run-time rules of the integer-array indexing ops, for their kernels.
/// The indices of `node`'s input `idx_input`, wrapped (negative from the end) and each
/// checked against x's size along `axis`: IndexError naming the node, x and the indices.
std::vector<int64_t> checked_indices(const graph::Apply& node, const Array& idx, int idx_input, int axis, const Array& x);
/// take's output shape: x's with dim `axis` replaced by the indices' dims.
Shape take_shape(const Shape& x, const Shape& idx, int axis);
/// y (node input 1) must broadcast to the region (NumPy's rule for assignment): ShapeError.
void check_assignable(const graph::Apply& node, const Shape& y, const Shape& region);

}  // namespace theon::ops
