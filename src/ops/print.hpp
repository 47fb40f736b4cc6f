// Print(x) -> x: Theano's theano.printing.Print. Its output is a view of x; each time a
// function computes it, the op hands x's value (on the host) to the function registered for
// the op's key, in the order the graph runs: before the nodes that read it, so a call that
// fails later has printed what it reached. Impure: never folded, merged or rewritten away.
#pragma once
#include "graph/op.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace theon::ops {

/// What a Print op calls with its message and x's value (a host array the callee may keep).
using PrintFn = std::function<void(const std::string& message, const Array& value)>;

/// Registers `fn` for the life of the process; returns the key a Print op names it by. An
/// empty fn prints "<message> __str__ = <value>" on standard output (Theano's default).
int64_t register_print_fn(PrintFn fn);

class Print final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::Print;
  Print(std::string message, int64_t key) : message_(std::move(message)), key_(key) {}
  const std::string& message() const { return message_; }
  int64_t key() const { return key_; }

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override { return {{"message", message_}, {"key", std::to_string(key_)}}; }
  bool pure() const override { return false; }
  std::map<int, int> view_map() const override { return {{0, 0}}; }
  bool presents_input() const override { return true; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  /// Calls the registered function with x (copied to the host); output 0 = x.
  void perform(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  /// The gradient passes through (and is not printed).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  std::string message_;
  int64_t key_;
};

/// x, printed with `message` by the function registered under `key` each time it is computed.
graph::VarPtr print_op(const graph::VarPtr& x, const std::string& message, int64_t key);

}  // namespace theon::ops
