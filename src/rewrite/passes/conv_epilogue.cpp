// conv_epilogue: folds a per-channel bias add and a relu into the Conv2d forward node that
// produces their operand (ops::ConvEpilogue; the kernels run them inside the convolution:
// oneDNN bias + eltwise post-op, the im2col loop, cuDNN's ConvolutionBiasActivationForward).
//   conv2d(x, w) + b4, b4 + conv2d(x, w)   -> Conv2d{epilogue=bias}(x, w, b)
//   relu(conv2d(x, w)), relu(Conv2d{epilogue=bias}) -> epilogue relu / bias+relu
// where b4 is the bias broadcast over (batch, rows, cols) as users write it:
// b.dimshuffle('x', 0, 'x', 'x') of a vector b (b is the bias), or any 4-d value with static
// dims (1, C, 1, 1) (b.reshape((1, C, 1, 1)), a 4-d shared bias declared broadcastable) or a
// 3-d one (C, 1, 1); those are dimshuffled down to the vector. A fold happens only when the
// folded value (the conv output, the sum) has no other client and is not a graph output,
// when the replacement's type is exactly the old one, and when the add cannot be a
// broadcast of the channel axis itself (a bias channel dim statically 1 folds only into a
// convolution with statically 1 output channel, and then only a vector of 1).
//
// Training graphs: relu's gradient is switch(z > 0, gz, 0) on relu's INPUT z, so z (the conv
// + bias) has a second client and the relu could never fold. The rule `conv_relu_mask` (match.hpp's relu_mask_from_output)
// rewrites gt(z, 0) into gt(relu(z), 0) when relu(z) exists and z comes from a convolution
// (exactly equal: relu(z) > 0 iff z > 0, NaN false in both), after which z's only client is
// the relu and conv + bias + relu fold into one node in the training step as well. The
// convolution's own gradients read x, w and the output gradient, never the conv output.
//
// Position: after canonicalize (maximum(x, 0) -> relu, x + 0 removed) and specialize, before
// fusion (which would hide the add and the relu inside a Composite) and inplace. Tags
// fast_run, conv_epilogue (exclude it by name to compare).
#include "graph/op.hpp"
#include "ops/conv.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "rewrite/local_rewrite.hpp"
#include "rewrite/passes/match.hpp"
#include "rewrite/passes/passes.hpp"
#include "util/dispatch.hpp"

#include <algorithm>
#include <functional>
#include <map>

namespace theon::rewrite {
namespace {

using graph::Apply;
using graph::FunctionGraph;
using graph::VarPtr;
using ops::ScalarOpId;

/// The Conv2d forward op behind `v`, else null.
const ops::Conv2d* conv_of(const VarPtr& v) {
  if (!v->owner || v->owner->op().kind() != graph::OpKind::Conv2d) return nullptr;
  return static_cast<const ops::Conv2d*>(&v->owner->op());
}

/// `b4` as a per-channel bias vector for a convolution output with `co` channels (static, or
/// kUnknownDim), or null when it is not one.
VarPtr bias_vector(const VarPtr& b4, int64_t co) {
  const auto& d = b4->type.dims;
  int64_t cb = graph::kUnknownDim;
  VarPtr vec;
  if (b4->owner && b4->owner->op().kind() == graph::OpKind::DimShuffle && b4->owner->input(0)->type.ndim() == 1 &&
      static_cast<const ops::DimShuffle&>(b4->owner->op()).pattern() == std::vector<int>{-1, 0, -1, -1}) {
    vec = b4->owner->input(0);  // b.dimshuffle('x', 0, 'x', 'x')
    cb = vec->type.dims[0];
  } else if (b4->type.ndim() == 4 && d[0] == 1 && d[2] == 1 && d[3] == 1) {
    cb = d[1];
    vec = ops::dimshuffle(b4, {1});
  } else if (b4->type.ndim() == 3 && d[1] == 1 && d[2] == 1) {
    cb = d[0];
    vec = ops::dimshuffle(b4, {0});
  } else {
    return nullptr;
  }
  // A channel dim statically 1 on either side is a broadcast of that axis, not a bias.
  if ((cb == 1) != (co == 1)) return nullptr;
  if (cb >= 0 && co >= 0 && cb != co) return nullptr;
  return vec;
}

/// conv2d(x, w) + b4 (either order) -> Conv2d{epilogue=bias}(x, w, b).
Replacements fold_bias(FunctionGraph& fg, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Add) || node.inputs().size() != 2) return {};
  for (int i : {0, 1}) {
    const VarPtr y = node.input(i);
    const ops::Conv2d* conv = conv_of(y);
    std::vector<Apply*> shape_clients;
    if (!conv || conv->epilogue().any() || !single_use(fg, y, node, &shape_clients)) continue;
    const VarPtr b = bias_vector(node.input(1 - i), y->type.dims[1]);
    if (!b) continue;
    VarPtr fused = ops::conv2d(y->owner->input(0), y->owner->input(1), conv->params(), b, ops::ConvActivation::None);
    Replacements r = with_shape_clients(node, y, fused, shape_clients);
    if (!r.empty()) return r;
  }
  return {};
}

/// relu(conv2d(...)) -> the same Conv2d with relu in its epilogue.
Replacements fold_relu(FunctionGraph& fg, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Relu) || node.num_outputs() != 1) return {};
  const VarPtr y = node.input(0);
  const ops::Conv2d* conv = conv_of(y);
  std::vector<Apply*> shape_clients;
  if (!conv || conv->epilogue().act != ops::ConvActivation::None || !single_use(fg, y, node, &shape_clients)) return {};
  const Apply& c = *y->owner;
  VarPtr fused = ops::conv2d(c.input(0), c.input(1), conv->params(), conv->epilogue().bias ? c.input(2) : nullptr,
                             ops::ConvActivation::Relu);
  return with_shape_clients(node, y, fused, shape_clients);
}

/// gt(z, 0) -> gt(relu(z), 0) when relu(z) is in the graph and z is a convolution (+ bias):
/// relu's gradient mask then reads relu's output, and z can fold (see the top of the file).
VarPtr conv_relu_mask(FunctionGraph& fg, Apply& node) {
  return relu_mask_from_output(fg, node, [](const VarPtr& z) {
    if (conv_of(z)) return conv_of(z)->epilogue().act == ops::ConvActivation::None;
    bool conv_sum = false;
    if (z->owner && elemwise_is(*z->owner, ScalarOpId::Add))
      for (const VarPtr& in : z->owner->inputs()) conv_sum = conv_sum || (conv_of(in) && !conv_of(in)->epilogue().any());
    return conv_sum;
  });
}

const LocalRewriter& conv_epilogue_rewriter() {
  using K = graph::OpKind;
  // Sweeps: the mask rewrite frees z, the bias fold makes a node the relu fold sees next.
  static const LocalRewriter rewriter("conv_epilogue",
                                      {
                                          {"conv_relu_mask", {K::Elemwise}, on_output0(conv_relu_mask)},
                                          {"conv_bias", {K::Elemwise}, fold_bias},
                                          {"conv_relu", {K::Elemwise}, fold_relu},
                                      },
                                      /*max_sweeps=*/4);
  return rewriter;
}

}  // namespace

bool conv_epilogue_pass(graph::FunctionGraph& fgraph) { return conv_epilogue_rewriter().run(fgraph).changed; }

}  // namespace theon::rewrite
