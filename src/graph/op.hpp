// The op contract. Each op is defined in ONE place (a file under src/ops/): its builder
// validates inputs and infers types (make_node), and the class below gives its run-time
// shape rule, gradient, aliasing and cost: its semantics. Backends implement them, with
// kernels registered by kind (the CPU's loops live in backends/cpu); an op never includes a
// backend. Only views build their outputs themselves (perform).
#pragma once
#include "graph/node.hpp"
#include "graph/op_kind.hpp"

#include <theon/array.hpp>
#include <theon/error.hpp>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace theon::graph {

/// An op's parameters as key/value text: equality and hashing (merge), printing, serialization.
using OpProps = std::vector<std::pair<std::string, std::string>>;

/// What placement and the profiler need to know about a node's work at given shapes.
struct Cost {
  double flops = 0;
  double bytes = 0;  // minimal bytes read and written
  int launches = 1;
};

class Op {
 public:
  virtual ~Op() = default;

  /// Which op this is (a row of theon/ops.def). Passes and kernels test it; a class serving
  /// several kinds (Reduce: Sum, Max, ...) answers the one it was built as.
  virtual OpKind kind() const = 0;
  /// The kind's name ("Elemwise", "Dot", "Sum"), for printing and errors.
  std::string name() const { return std::string(kind_name(kind())); }
  /// Parameters that distinguish two ops of the family (empty for parameterless ops).
  virtual OpProps props() const { return {}; }
  /// "Elemwise{add}" / "Sum{axes=(0,), keepdims=False}": what printing and errors show.
  virtual std::string display() const;
  bool equals(const Op& other) const { return kind() == other.kind() && props() == other.props(); }
  size_t hash() const;

  /// Output shapes for given input values. Most ops look only at input shapes; ops whose
  /// output shape depends on an input's value (reshape, slicing bounds, alloc) read it here.
  /// Throws ShapeError naming the op, the inputs' labels and the shapes at fault.
  virtual std::vector<Shape> infer_shape(const Apply& node, const std::vector<Array>& inputs) const = 0;

  /// The view construction of ops whose semantics is metadata: views (DimShuffle, Reshape,
  /// BroadcastTo, Subtensor, zero_grad/disconnected_grad) set `outputs` to views of their
  /// inputs, Shape writes the input's shape; valid for arrays on any device, so every
  /// backend uses it. Ops that compute declare semantics only: their loops are kernels of
  /// the backends (backends/cpu/*_cpu.cpp, backends/cuda/), and this default throws.
  virtual void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const;

  /// Gradient (Theano's L_op): the gradients of the cost with respect to each input, given
  /// those with respect to each output (null where an output is unused). Null entries mean
  /// "disconnected". Ops without one throw NotImplementedError naming themselves.
  virtual std::vector<VarPtr> L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const;
  /// Forward-mode slot (R_op), filled by ops as it is needed.
  virtual std::vector<VarPtr> R_op(const Apply& node, const std::vector<VarPtr>& eval_points) const;

  /// Output index -> the input index it is a view of.
  virtual std::map<int, int> view_map() const { return {}; }
  /// Output index -> the input index it overwrites (inplace variants).
  virtual std::map<int, int> destroy_map() const { return {}; }
  /// Output index -> the input index the output IS whenever the two have the same run-time
  /// shape (the op is the identity there: SumTo of a gradient that broadcast nothing). The
  /// executor then hands that input's array over and runs no kernel (when every output of the
  /// node can be handed over so; otherwise each output is a new array and the kernel runs as
  /// usual). Alias analysis (inplace) treats such an output as a view.
  virtual std::map<int, int> pass_through_map() const { return {}; }
  /// The variant of this op whose output `output` overwrites input `input` (destroy_map
  /// {output: input}), or null when the op has none (or already destroys an input). The
  /// caller (the inplace pass) has checked that the input has the output's exact type and
  /// that nothing reads the input's memory afterwards.
  virtual std::shared_ptr<const Op> inplace_variant(int /*output*/, int /*input*/) const { return nullptr; }
  /// False for ops never merged or folded (random, transfer, print, collectives).
  virtual bool pure() const { return true; }
  virtual Cost cost(const Apply& node, const std::vector<Shape>& input_shapes) const;

  // ---- what the user wrote (graph/user_names.hpp: error messages name the user's values) ----
  /// True when a node of this op only presents its input 0 in a form the user did not ask
  /// for: the casts of type promotion, DimShuffles that add or drop broadcastable dims (rank
  /// alignment), transfers. Messages then name the value behind it, with its own shape.
  virtual bool presents_input() const { return false; }
  /// For such ops: the shape input 0 has when the output has `shape`.
  virtual Shape presented_shape(const Shape& shape) const { return shape; }
  /// Output `output` of a node as an expression of its inputs' texts, for messages naming an
  /// unnamed value ("mul(y, 2.0)", "x[1:]", "flatten(x)"); by default "<display()>(a, b)"
  /// (with "[output k]" after it for k > 0).
  virtual std::string render(const std::vector<std::string>& inputs, int output = 0) const;
};

/// `op` as its class T (one with a single kind, T::kKind), for typed accessors; an
/// InternalError when the op is of another kind.
template <class T>
const T& op_as(const Op& op) {
  if (op.kind() != T::kKind)
    throw InternalError(op.display() + " used as " + std::string(kind_name(T::kKind)));
  return static_cast<const T&>(op);
}

/// `op` as its class T when it is of T's kind, else nullptr: a kind test, not a dynamic_cast.
template <class T>
const T* op_if(const Op& op) {
  return op.kind() == T::kKind ? static_cast<const T*>(&op) : nullptr;
}

}  // namespace theon::graph
