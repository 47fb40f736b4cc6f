// Transfer: moves its input to a context, named ("cpu", "cuda0", or a user name of the
// `contexts` map such as "dev1"). The ops layer holds the name only; compile resolves it to a
// device through runtime::ContextMap. Placement inserts one wherever a node reads a value that
// lives in another context, so every byte that crosses a bus (and every handover between two
// contexts of one device) is a node that explain(), debugprint and the profiler show.
// Internal (not in ops.def); never merged or folded (pure() is false). Its output's
// TensorType::context is the target name: the value is pinned there.
#pragma once
#include "graph/op.hpp"

#include <theon/device.hpp>

#include <string>

namespace theon::ops {

class Transfer final : public graph::Op {
 public:
  explicit Transfer(std::string context) : context_(std::move(context)) {}
  /// The target context's name.
  const std::string& context() const { return context_; }
  static constexpr graph::OpKind kKind = graph::OpKind::Transfer;
  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override { return {{"to", context_}}; }
  std::string display() const override { return "Transfer{to=" + context_ + "}"; }
  bool pure() const override { return false; }
  /// Placement inserts transfers: messages name the value moved.
  bool presents_input() const override { return true; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  /// The gradient goes back where the input lives: a Transfer to the input's pinned context,
  /// or the gradient as it is when the input is unpinned (placement then puts its readers
  /// where their inputs are, and moves it as they need).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;

 private:
  std::string context_;
};

/// `x` moved to the context named `context` (same dtype and dims; pinned there).
graph::VarPtr transfer(const graph::VarPtr& x, const std::string& context);
/// `x` moved to `device`'s own context (its name: "cpu", "cuda0").
graph::VarPtr transfer(const graph::VarPtr& x, Device device);

}  // namespace theon::ops
