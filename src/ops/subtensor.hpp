// Indexing: Subtensor (basic indexing, a view), AdvancedSubtensor1 (take: integer-array
// indexing along one axis, or along k consecutive axes by k broadcast index arrays: a copy)
// and their writing forms IncSubtensor /
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

/// numpy.take(x, indices, axis): inputs x and an integer tensor of indices. With k > 1 index
/// inputs (broadcast together, NumPy's rule), dims axis..axis+k-1 of x are indexed together:
/// x[:, i, j] for adjacent arrays. How x[...] built it, so set_subtensor can write back
/// through the same steps: `nested` marks a take after a Subtensor of the basic indices;
/// `moved` a take after a DimShuffle that brought separated array dims to the front
/// (NumPy puts their result dims first).
class AdvancedSubtensor1 final : public graph::Op {
 public:
  AdvancedSubtensor1(int axis, bool nested, bool moved = false) : axis_(axis), nested_(nested), moved_(moved) {}
  int axis() const { return axis_; }
  bool nested() const { return nested_; }
  bool moved() const { return moved_; }
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
  bool moved_;
};

/// Inputs x, y, indices (k index arrays: as AdvancedSubtensor1): x with the region the take
/// selects set to / incremented by y. Repeated indices accumulate for inc (numpy.add.at);
/// for set the last one wins.
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
/// x indexed along dims axis..axis+k-1 by k integer arrays broadcast together (k >= 1).
graph::VarPtr take(const graph::VarPtr& x, const std::vector<graph::VarPtr>& indices, int axis, bool nested = false,
                   bool moved = false);
/// set (or increment) the region `sub` selects; `sub` must be an x[...] or take result.
graph::VarPtr inc_subtensor(const graph::VarPtr& sub, const graph::VarPtr& y, bool set);
/// A Subtensor of x with an existing spec and its symbolic bound inputs (in the spec's
/// order): what gradients build to index a tensor shaped like the one a node indexed.
graph::VarPtr subtensor_spec(const graph::VarPtr& x, const IndexSpec& spec, const std::vector<graph::VarPtr>& bounds);

// Run-time rules of the integer-array indexing ops, for their kernels.
/// take's output shape: x's with dims axis..axis+k-1 replaced by the indices' dims.
Shape take_shape(const Shape& x, const Shape& idx, int axis, int k = 1);

/// The k index arrays of a take or advanced set/inc (node inputs first..first+k-1), broadcast
/// together, wrapped and checked against x's dims axis..axis+k-1, as flat positions into
/// those dims seen as one (row-major): IndexError / ShapeError naming the node, x and the
/// index at fault. `shape` is the broadcast index shape.
struct FlatIndices {
  std::vector<int64_t> flat;
  Shape shape;
};
FlatIndices checked_flat_indices(const graph::Apply& node, const std::vector<Array>& inputs, int first, int k, int axis,
                                 const Shape& x);
/// The indices' broadcast shape (NumPy's rule, ranks aligned at the end): ShapeError naming
/// the node and the index inputs.
Shape index_broadcast_shape(const graph::Apply& node, const std::vector<Array>& inputs, int first, int k);
/// y (node input 1) must broadcast to the region (NumPy's rule for assignment): ShapeError.
void check_assignable(const graph::Apply& node, const Shape& y, const Shape& region);

}  // namespace theon::ops
