// Assert(x, c0, c1, ..., v0, v1, ...) -> x: Theano's Assert. Its output is a view of x, made
// only after every condition (a bool scalar) was found true; a false one raises ValueError (or
// ShapeError, for checks of sizes) with the op's message (which names the user's call and what
// must hold), followed by the values at fault: ", got n = -1" for the shown scalars v0, v1, ...
// (each with its name). Builders check parameters whose values are known only at run time with
// it (random streams: p in [0, 1], std >= 0; eye's and repeat's sizes). The conditions and
// shown values are read on the host: on a GPU, a call waits for them. Impure, so it is never
// folded, merged or rewritten away.
#pragma once
#include "graph/op.hpp"

#include <string>
#include <utility>
#include <vector>

namespace theon::ops {

/// The error a failed Assert raises.
enum class AssertError : uint8_t { Value, Shape };

class Assert final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::Assert;
  /// `shown`: the names of the values shown on failure, the node's last inputs.
  explicit Assert(std::string message, std::vector<std::string> shown = {}, AssertError error = AssertError::Value)
      : message_(std::move(message)), shown_(std::move(shown)), error_(error) {}
  const std::string& message() const { return message_; }
  const std::vector<std::string>& shown() const { return shown_; }
  AssertError error() const { return error_; }

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  bool pure() const override { return false; }
  std::map<int, int> view_map() const override { return {{0, 0}}; }
  bool presents_input() const override { return true; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  /// Throws ValueError/ShapeError(message, got the shown values) when a condition is false;
  /// else output 0 = x.
  void perform(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  /// x's gradient passes through; the conditions and shown values get none.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  std::string message_;
  std::vector<std::string> shown_;
  AssertError error_;
};

/// A value an Assert shows when it fails: a scalar and its name ("n", "min(std)").
struct ShownValue {
  std::string name;
  graph::VarPtr value;
};

/// x, checked: `conditions` are bool scalars and the shown values scalars (TypeError naming
/// `message` otherwise).
graph::VarPtr assert_op(const graph::VarPtr& x, const std::vector<graph::VarPtr>& conditions, const std::string& message,
                        const std::vector<ShownValue>& shown = {}, AssertError error = AssertError::Value);

/// A value as Assert messages show it: integers exactly, floats in their shortest round-trip
/// form ("-1", "0.1", "1.8446744073709552e+19").
std::string scalar_text(const Array& value);

}  // namespace theon::ops
