// The CPU backend has a kernel for every op kind of the registry (ops/ops.def): ops declare
// semantics, the backend implements them, and no kind is left to a reference perform().
#include <theon/theon.hpp>

#include "backends/backend.hpp"
#include "graph/op.hpp"
#include "graph/op_kind.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace theon {
namespace {

// An op that is only a kind: what supports() and kernel() look at.
class KindOnly final : public graph::Op {
 public:
  explicit KindOnly(graph::OpKind kind) : kind_(kind) {}
  graph::OpKind kind() const override { return kind_; }
  std::vector<Shape> infer_shape(const graph::Apply&, const std::vector<Array>& inputs) const override {
    return {inputs[0].shape()};
  }

 private:
  graph::OpKind kind_;
};

graph::ApplyPtr node_of(graph::OpKind kind) {
  Var x = tensor::vector("x");
  return graph::Apply::make(std::make_shared<KindOnly>(kind), {x.node()}, {x.node()->type});
}

TEST(CpuBackend, EveryOpKindHasAKernel) {
  const backends::Backend& cpu = backends::cpu_backend();
  for (const graph::OpKindInfo& info : graph::op_kinds) {
    const graph::ApplyPtr node = node_of(info.kind);
    const backends::Support s = cpu.supports(*node);
    EXPECT_TRUE(s.ok) << info.name << ": " << s.reason;
    if (s.ok) {
      EXPECT_FALSE(cpu.kernel(*node).name().empty()) << info.name;
    }
  }
}

TEST(CpuBackend, AnOpThatComputesHasNoPerform) {
  // Computing ops declare semantics only: Op::perform is for views, and says so otherwise.
  const graph::ApplyPtr node = node_of(graph::OpKind::Elemwise);
  std::vector<Array> inputs = {Array::from_vector<float>({1, 2})}, outputs = {Array::empty({2}, DType::Float32)};
  try {
    node->op().perform(*node, inputs, outputs);
    FAIL() << "perform ran";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("Elemwise has no reference implementation in ops/"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace theon
