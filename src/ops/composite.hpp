// Composite: one node computing a fused elementwise region (made by the fusion pass, never by
// users: it is internal, like SumTo, and not in ops.def). Its inputs all have one rank (they
// were Elemwise inputs, already rank-aligned and cast); its inner program is a list of
// scalar instructions over ScalarOpId, each reading inputs or earlier results, and its
// outputs are instruction results. The CPU backend compiles the program to C++
// (backends/cpu/fused_cpu.cpp) when a compiler is available, else runs its block interpreter
// (backends/cpu/elemwise_cpu.cpp) over the scalar functors of scalar_ops.hpp.
#pragma once
#include "graph/op.hpp"
#include "ops/scalar/scalar_op_id.hpp"

#include <theon/dtype.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace theon::ops {

/// One scalar instruction. Operands are value ids: [0, n_inputs) are the Composite's inputs,
/// n_inputs + k is the result of instruction k (k earlier than this one).
struct CompositeInstr {
  ScalarOpId op;
  DType dtype;  // the result dtype (a Cast's target)
  std::vector<int> args;
};

class Composite final : public graph::Op {
 public:
  /// `outputs` are value ids of instruction results. Throws InternalError on a malformed program.
  Composite(std::vector<DType> input_dtypes, std::vector<CompositeInstr> program, std::vector<int> outputs);
  /// The inplace variant (made only by the inplace pass): output 0 overwrites input `k`
  /// (destroy_map {0: k}); printed "Composite{..., inplace(k)}".
  std::shared_ptr<Composite> with_inplace(int k) const;
  /// The destroyed input, or -1.
  int inplace() const { return inplace_; }
  std::map<int, int> destroy_map() const override {
    return inplace_ >= 0 ? std::map<int, int>{{0, inplace_}} : std::map<int, int>{};
  }
  /// with_inplace(input) for output 0 of a Composite not yet inplace, when the dtypes allow.
  std::shared_ptr<const graph::Op> inplace_variant(int output, int input) const override {
    if (output != 0 || inplace_ >= 0 || input < 0 || input >= num_inputs()) return nullptr;
    return input_dtypes_[input] == value_dtype(outputs_[0]) ? with_inplace(input) : nullptr;
  }

  const std::vector<DType>& input_dtypes() const { return input_dtypes_; }
  const std::vector<CompositeInstr>& program() const { return program_; }
  const std::vector<int>& outputs() const { return outputs_; }
  int num_inputs() const { return static_cast<int>(input_dtypes_.size()); }
  /// The dtype of value id `v`.
  DType value_dtype(int v) const;
  /// For each output, which inputs it depends on (its run-time shape is their broadcast).
  const std::vector<std::vector<bool>>& output_deps() const { return output_deps_; }
  /// "tanh(add(mul(i0,i1),i2))": value `v` as an expression over the inputs (named
  /// i0, i1, ... or by `names`, then with ", " between arguments).
  std::string expression(int v, const std::vector<std::string>* names = nullptr) const;
  /// Output `output`'s expression over the given input texts: "add(mul(exp(x), y), 1.0)".
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;

  static constexpr graph::OpKind kKind = graph::OpKind::Composite;

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::string display() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// Fusion runs after gradients are built (in function()), so a Composite is never differentiated.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  std::vector<DType> input_dtypes_;
  std::vector<CompositeInstr> program_;
  std::vector<int> outputs_;
  std::vector<std::vector<bool>> output_deps_;
  int inplace_ = -1;
};

}  // namespace theon::ops
