// Assert(x, c0, c1, ...) -> x: Theano's Assert. Its output is a view of x, made only after
// every condition (a bool scalar) was found true; a false one raises ValueError with the op's
// message (which names the user's call and what must hold). Builders check parameters whose
// values are known only at run time with it (random streams: p in [0, 1], probability rows
// summing to 1). The conditions are read on the host: on a GPU, a call waits for them.
// Impure, so it is never folded, merged or rewritten away.
#pragma once
#include "graph/op.hpp"

#include <string>
#include <vector>

namespace theon::ops {

class Assert final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::Assert;
  explicit Assert(std::string message) : message_(std::move(message)) {}
  const std::string& message() const { return message_; }

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override { return {{"message", message_}}; }
  bool pure() const override { return false; }
  std::map<int, int> view_map() const override { return {{0, 0}}; }
  bool presents_input() const override { return true; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  /// Throws ValueError(message) when a condition is false; else output 0 = x.
  void perform(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  /// x's gradient passes through; the conditions get none.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  std::string message_;
};

/// x, checked: `conditions` are bool scalars (TypeError naming `message` otherwise).
graph::VarPtr assert_op(const graph::VarPtr& x, const std::vector<graph::VarPtr>& conditions, const std::string& message);

}  // namespace theon::ops
