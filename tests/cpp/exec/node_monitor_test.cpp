// FunctionOptions::monitor (Theano's MonitorMode): called around each node of the compiled
// program, in the order it runs, with the node in the user's terms and its values; a
// callback that throws fails the call and no update is committed.
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace theon {
namespace {

TEST(NodeMonitor, CallsAroundEachNodeInProgramOrderWithValues) {
  Var x = tensor::vector("x", DType::Float64);
  Var y = tensor::exp(x) * 2.0 + 1.0;
  std::vector<std::string> events;
  std::vector<std::pair<std::string, std::vector<double>>> outputs;  // (op, first output)
  FunctionOptions o;
  o.mode = "fast_compile";  // no fusion: one node per op
  o.monitor.before = [&](size_t i, const ApplyInfo& node, const std::vector<Array>& ins) {
    events.push_back("before " + std::to_string(i) + " " + node.op_kind + " " + std::to_string(ins.size()));
  };
  o.monitor.after = [&](size_t i, const ApplyInfo& node, const std::vector<Array>&, const std::vector<Array>& outs) {
    events.push_back("after " + std::to_string(i) + " " + node.op);
    ASSERT_EQ(node.outputs.size(), outs.size());
    outputs.emplace_back(node.op, outs[0].to_vector<double>());
  };
  Function f = function({x}, {y}, o);
  const auto result = f({Array::from_vector<double>({0.0, 1.0})})[0].to_vector<double>();
  const auto nodes = f.nodes();
  ASSERT_EQ(events.size(), 2 * nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(events[2 * i].rfind("before " + std::to_string(i) + " ", 0), 0u) << events[2 * i];
    EXPECT_EQ(events[2 * i + 1], "after " + std::to_string(i) + " " + nodes[i].op);
  }
  // the last node computes the output (or copies it from a device); exp's output is e^x
  EXPECT_EQ(outputs.back().second, result);
  auto exp_node = std::find_if(outputs.begin(), outputs.end(), [](auto& e) { return e.first == "Elemwise{exp}"; });
  ASSERT_NE(exp_node, outputs.end());
  EXPECT_NEAR(exp_node->second[1], std::exp(1.0), 1e-12);
}

TEST(NodeMonitor, NodeIsTheOptimizedGraphsNode) {
  Var x = tensor::vector("x", DType::Float64);
  FunctionOptions o;
  std::vector<ApplyInfo> seen;
  o.monitor.after = [&](size_t, const ApplyInfo& node, const std::vector<Array>&, const std::vector<Array>&) {
    seen.push_back(node);
  };
  Function f = function({x}, {tensor::exp(x) * x + 1.0}, o);  // fast_run fuses this into one node
  f({Array::from_vector<double>({1.0, 2.0})});
  const auto nodes = f.nodes();  // on a GPU, transfers too
  ASSERT_EQ(seen.size(), nodes.size());
  int fused = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(seen[i].op, nodes[i].op);
    if (seen[i].op.find("Composite") == std::string::npos) continue;
    ++fused;
    ASSERT_FALSE(seen[i].inputs.empty());
    if (nodes.size() == 1) {
      EXPECT_EQ(seen[i].inputs[0].name(), "x");  // the optimized graph keeps the user's input
    }
  }
  EXPECT_EQ(fused, 1);
}

TEST(NodeMonitor, AThrowingCallbackFailsTheCallAndCommitsNoUpdate) {
  Var x = tensor::vector("x", DType::Float64);
  SharedVar s = shared(Array::from_vector<double>({1.0, 2.0}), "s");
  FunctionOptions o;
  o.updates = {{s, s + x}};
  bool fail = true;
  o.monitor.after = [&](size_t, const ApplyInfo&, const std::vector<Array>&, const std::vector<Array>&) {
    if (fail) throw std::runtime_error("monitor says no");
  };
  Function f = function({x}, {x * 2.0}, o);
  EXPECT_THROW(f({Array::from_vector<double>({1.0, 1.0})}), std::runtime_error);
  EXPECT_EQ(s.get_value().to_vector<double>(), (std::vector<double>{1.0, 2.0}));
  fail = false;
  f({Array::from_vector<double>({1.0, 1.0})});
  EXPECT_EQ(s.get_value().to_vector<double>(), (std::vector<double>{2.0, 3.0}));
}

TEST(NodeMonitor, NoneByDefault) {
  FunctionOptions o;
  EXPECT_FALSE(o.monitor.active());
  o.monitor.before = [](size_t, const ApplyInfo&, const std::vector<Array>&) {};
  EXPECT_TRUE(o.monitor.active());
}

}  // namespace
}  // namespace theon
