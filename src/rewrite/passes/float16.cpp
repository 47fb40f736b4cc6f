// float16: Theano's float16 is a storage dtype (shared variables, inputs, outputs, values
// between nodes) computed in float32. This pass rewrites every node that computes on float16
// values (ops::handles_float16 says which do not: casts, views, transfers) into the same
// computation in float32: each float16 input is cast to float32, the node runs with its dtype
// parameters float32 (Elemwise and Reduce output dtypes; props naming float16, rebuilt with
// make_op: RandomDraw, OneHot, ARange, ...), and each float16 output is cast back, so every
// value the user sees keeps its float16 type. A sum of float16 therefore accumulates in
// float32 and returns float16 (Theano's acc_dtype rule), and elementwise chains, after fusion,
// load half, compute in float and store half in one loop.
//
// Runs in every mode (a required pass: no kernel computes in float16) after the local
// rewrites (canonicalize, specialize, the conv and gemm epilogues: they see the user's float16
// graph, and an epilogue node is rebuilt in float32 like any other) and before fusion
// (which then fuses the casts with their float32 neighbours).
#include "rewrite/passes/passes.hpp"

#include "graph/op.hpp"
#include "ops/elemwise.hpp"
#include "ops/float16.hpp"
#include "ops/make_op.hpp"
#include "ops/reduce.hpp"

#include <theon/error.hpp>

#include <unordered_map>

namespace theon::rewrite {

namespace {

// `op` with its float16 parameters float32.
std::shared_ptr<const graph::Op> float32_op(const graph::Apply& node) {
  const graph::Op& op = node.op();
  if (auto* e = graph::op_if<ops::Elemwise>(op))
    return std::make_shared<ops::Elemwise>(e->scalar(), e->out_dtype() == DType::Float16 ? DType::Float32 : e->out_dtype());
  if (op.kind() == graph::OpKind::Sum || op.kind() == graph::OpKind::Prod || op.kind() == graph::OpKind::Max ||
      op.kind() == graph::OpKind::Min || op.kind() == graph::OpKind::Mean || op.kind() == graph::OpKind::Any ||
      op.kind() == graph::OpKind::All || op.kind() == graph::OpKind::Count) {
    const auto& r = static_cast<const ops::Reduce&>(op);
    return std::make_shared<ops::Reduce>(r.reduce_kind(), r.axes(),
                                         r.out_dtype() == DType::Float16 ? DType::Float32 : r.out_dtype());
  }
  graph::OpProps props = op.props();
  bool named = false;
  for (auto& [key, value] : props)
    if (value == "float16") value = "float32", named = true;
  if (!named) return node.op_ptr();  // its dtypes follow its inputs'
  try {
    return ops::make_op(op.kind(), props);
  } catch (const Error& e) {
    throw NotImplementedError(node.describe() + ": float16 is computed in float32, but this op cannot be rebuilt " +
                              "for float32 (" + e.what() + ")");
  }
}

}  // namespace

bool float16_pass(graph::FunctionGraph& fgraph) {
  std::unordered_map<const graph::Variable*, graph::VarPtr> replaced;  // old float16 value -> its new one
  std::vector<std::pair<graph::VarPtr, graph::VarPtr>> pairs;
  auto current = [&](const graph::VarPtr& v) {
    auto it = replaced.find(v.get());
    return it == replaced.end() ? v : it->second;
  };
  for (const graph::ApplyPtr& node : fgraph.nodes()) {
    if (!ops::touches_float16(*node) || ops::handles_float16(*node)) continue;
    std::vector<graph::VarPtr> inputs;
    for (const graph::VarPtr& in : node->inputs()) {
      graph::VarPtr v = current(in);
      inputs.push_back(v->type.dtype == DType::Float16 ? ops::cast(v, DType::Float32) : v);
    }
    std::vector<graph::TensorType> types;
    for (int i = 0; i < node->num_outputs(); ++i) {
      graph::TensorType t = node->output_raw(i)->type;
      if (t.dtype == DType::Float16) t.dtype = DType::Float32;
      types.push_back(t);
    }
    graph::ApplyPtr computed = graph::Apply::make(float32_op(*node), inputs, types);
    for (int i = 0; i < node->num_outputs(); ++i) {
      graph::VarPtr out = computed->output(i);
      if (node->output_raw(i)->type.dtype == DType::Float16) out = ops::cast(out, DType::Float16);
      out->type = node->output_raw(i)->type;  // the exact static type (dims) the user's graph has
      replaced[node->output_raw(i)] = out;
      pairs.push_back({node->output(i), out});
    }
  }
  if (pairs.empty()) return false;
  fgraph.replace_all(pairs, "float16");
  return true;
}

}  // namespace theon::rewrite
