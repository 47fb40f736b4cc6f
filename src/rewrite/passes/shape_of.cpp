// shape_of: the shape (or size) of an expression read from an input of the expression when
// its op's shape rule says they agree, so `f(x).shape` does not compute f(x) (Theano's
// ShapeFeature and local_shape_to_shape_i; shape_info.txt's `(x ** 2).shape`). Applied to a
// fixed point, so a chain tanh(exp(x * 2)).shape becomes x.shape; the expression then has no
// client left and is not computed. Theon has no Shape_i/MakeVector ops: the result is the
// input's own Shape node (shape of x), which the executor answers from x's metadata.
//
//   shape(elemwise(x, c1, c2...)) -> shape(x)   every other input has static size 1 on every
//                                               dim (literals, broadcast constants), so the
//                                               NumPy broadcast is x's shape
//   shape(op(x)) -> shape(x)                    op keeps its input's shape: softmax,
//                                               log_softmax, the gradient blocks and transforms
//   and the same for size(...)
//
// Runs after merge and constant_fold (constants folded: they show their static sizes) and
// before canonicalize and the passes that fuse nodes (a fused region hides its Elemwise).
#include "graph/op.hpp"
#include "ops/elemwise.hpp"
#include "ops/shape.hpp"
#include "rewrite/local_rewrite.hpp"
#include "rewrite/passes/match.hpp"
#include "rewrite/passes/passes.hpp"

namespace theon::rewrite {
namespace {

using graph::Apply;
using graph::FunctionGraph;
using graph::VarPtr;

constexpr int kMaxSweeps = 16;

bool all_ones(const graph::TensorType& t) {
  for (const int64_t d : t.dims)
    if (d != 1) return false;
  return true;
}

// The Shape/size node `node` over `source` instead of its input: same op, same type.
VarPtr shape_over(const Apply& node, const VarPtr& source) {
  const VarPtr& of = node.input(0);
  if (!source || source->type.ndim() != of->type.ndim()) return nullptr;
  return same_type(graph::make_output(node.op_ptr(), {source}, node.output_raw(0)->type), *node.output_raw(0));
}

/// shape(elemwise(x, constants broadcast on every dim)) -> shape(x)
VarPtr shape_of_elemwise(FunctionGraph&, Apply& node) {
  const VarPtr& of = node.input(0);
  const graph::Apply* producer = of->owner;
  if (producer == nullptr || producer->op().kind() != graph::OpKind::Elemwise) return nullptr;
  VarPtr source;  // the one input whose sizes may differ from 1
  for (const VarPtr& in : producer->inputs()) {
    if (all_ones(in->type)) continue;
    if (source) return nullptr;  // two inputs of sizes not known to be 1: the shape is their broadcast
    source = in;
  }
  if (!source) source = producer->input(0);  // every input has size 1 on every dim
  return shape_over(node, source);
}

/// shape(op(x)) -> shape(x) for ops whose output has their input 0's shape
VarPtr shape_of_same_shape(FunctionGraph&, Apply& node) {
  const graph::Apply* producer = node.input(0)->owner;
  if (producer == nullptr || producer->num_outputs() != 1) return nullptr;
  using K = graph::OpKind;
  switch (producer->op().kind()) {
    case K::Softmax: case K::LogSoftmax: case K::ZeroGrad: case K::DisconnectedGrad: case K::GradClip:
    case K::GradScale:
      return shape_over(node, producer->input(0));
    default:
      return nullptr;
  }
}

const LocalRewriter& shape_rewriter() {
  using K = graph::OpKind;
  static const LocalRewriter rewriter(
      "shape_of",
      {
          // {name, the kinds it triggers on, the rewrite}: one row per rewrite
          {"shape_of_elemwise", {K::Shape}, on_output0(shape_of_elemwise)},
          {"shape_of_same_shape", {K::Shape}, on_output0(shape_of_same_shape)},
      },
      kMaxSweeps);
  return rewriter;
}

}  // namespace

bool shape_of_pass(FunctionGraph& fgraph) { return shape_rewriter().run(fgraph).changed; }

}  // namespace theon::rewrite
