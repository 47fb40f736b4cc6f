// gemm_epilogue: folds the elementwise tail of a Gemm (made by specialize) into its epilogue
// (ops/gemm.hpp), so a dense layer relu(dot(x, W) + b) is one node and one pass over the output:
// - gemm(dimshuffle{x,0}(v), a, b) -> gemm with a row bias v (no broadcast matrix node);
//   dimshuffle{0,x}(v) -> a col bias;
// - relu(gemm(...)) -> gemm with act=relu, when the Gemm's output feeds nothing else
//   (maximum(g, 0) is relu after canonicalize) but clients reading only its shape, which are
//   rebuilt on the new Gemm (relu keeps the shape);
// - relu(dot(a, b)) of two matrices, the product feeding nothing else -> a Gemm with no
//   addend (bias=none, inputs (a, b)) and act=relu: specialize only forms Gemms from an add;
// - in a training graph relu's gradient reads the pre-activation (switch(g > 0, gz, 0)),
//   which would keep g alive: g > 0 where relu(g) exists becomes relu(g) > 0 (the same truth
//   value everywhere, NaN included: both false), so the Gemm's output has relu as its only
//   client and the fold above fires; the same for a matrix Dot's output g (no add).
//
// A table of named rules run by LocalRewriter until nothing changes (a few sweeps: the mask
// rule frees the Gemm's output for the relu rule of the next sweep). Runs after specialize
// (which makes the Gemm) and before fusion (which would hide relu inside a Composite).
#include "graph/op.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/gemm.hpp"
#include "rewrite/local_rewrite.hpp"
#include "rewrite/passes/match.hpp"
#include "rewrite/passes/passes.hpp"
#include "util/dispatch.hpp"

#include <algorithm>
#include <optional>

namespace theon::rewrite {
namespace {

using graph::Apply;
using graph::VarPtr;
using ops::ScalarOpId;

/// The Gemm computing `v` when it has an addend (inputs (c, a, b), as the rules rebuild it),
/// else null. A Gemm without one (bias=none) is made with act=relu by relu_of_dot below; one
/// with act=none (only from make_op) keeps a following relu apart.
const ops::Gemm* gemm_of(const VarPtr& v) {
  if (!v->owner || v->owner->op().kind() != graph::OpKind::Gemm) return nullptr;
  const auto* op = &static_cast<const ops::Gemm&>(v->owner->op());
  return op->epilogue().addend == ops::GemmAddend::None ? nullptr : op;
}

/// gemm(dimshuffle{x,0}(v), a, b) -> gemm(v, a, b) with a row bias (col for {0,x}).
VarPtr bias_vector(graph::FunctionGraph&, Apply& node) {
  const auto& op = static_cast<const ops::Gemm&>(node.op());
  if (op.epilogue().addend != ops::GemmAddend::Matrix) return nullptr;
  const VarPtr& c = node.input(0);
  if (!c->owner || c->owner->op().kind() != graph::OpKind::DimShuffle) return nullptr;
  const auto& ds = static_cast<const ops::DimShuffle&>(c->owner->op());
  const VarPtr& v = c->owner->input(0);
  if (v->type.ndim() != 1) return nullptr;
  ops::GemmEpilogue epi = op.epilogue();
  if (ds.pattern() == std::vector<int>{-1, 0}) epi.addend = ops::GemmAddend::Row;
  else if (ds.pattern() == std::vector<int>{0, -1}) epi.addend = ops::GemmAddend::Col;
  else return nullptr;
  VarPtr g = ops::gemm(v, node.input(1), node.input(2), op.alpha(), op.beta(), epi);
  return g->type == node.output_raw(0)->type ? g : nullptr;
}

/// relu(gemm(...)) -> gemm(...) with act=relu, the Gemm's output used only by the relu, apart
/// from clients reading only its shape (a training graph's sum_to(g, like=gemm)): relu keeps
/// the shape, so those are rebuilt on the new Gemm.
Replacements relu_into_gemm(graph::FunctionGraph& fg, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Relu)) return {};
  const VarPtr& g = node.input(0);
  const ops::Gemm* op = gemm_of(g);
  std::vector<Apply*> shape_clients;
  if (!op || op->epilogue().act != ops::GemmAct::None || !single_use(fg, g, node, &shape_clients)) return {};
  ops::GemmEpilogue epi = op->epilogue();
  epi.act = ops::GemmAct::Relu;
  const Apply& gn = *g->owner;
  VarPtr r = ops::gemm(gn.input(0), gn.input(1), gn.input(2), op->alpha(), op->beta(), epi);
  return with_shape_clients(node, g, r, shape_clients);
}

/// The matrix product `v` = dot(a, b) of two matrices, else null.
const Apply* matrix_dot(const VarPtr& v) {
  if (!v->owner || v->owner->op().kind() != graph::OpKind::Dot) return nullptr;
  const Apply& d = *v->owner;
  return d.input(0)->type.ndim() == 2 && d.input(1)->type.ndim() == 2 ? &d : nullptr;
}

/// relu(dot(a, b)) -> gemm(a, b) with no addend and act=relu, the product used only by the relu.
VarPtr relu_of_dot(graph::FunctionGraph& fg, Apply& node) {
  if (!elemwise_is(node, ScalarOpId::Relu)) return nullptr;
  const VarPtr& p = node.input(0);
  const Apply* d = matrix_dot(p);
  if (!d || p->type.dtype == DType::Bool || !single_use(fg, p)) return nullptr;
  VarPtr r = ops::gemm(d->input(0), d->input(1), 1.0, ops::GemmAct::Relu);
  return r->type == node.output_raw(0)->type ? r : nullptr;
}

/// dot(a, b) > 0 -> relu(dot(a, b)) > 0 for a matrix product that also feeds the relu.
VarPtr dot_relu_mask(graph::FunctionGraph& fg, Apply& node) {
  return relu_mask_from_output(fg, node, [](const VarPtr& p) { return matrix_dot(p) != nullptr; });
}

/// g > 0 -> relu(g) > 0 for a Gemm output g that also feeds relu(g) (relu's gradient).
VarPtr gemm_relu_mask(graph::FunctionGraph& fg, Apply& node) {
  return relu_mask_from_output(fg, node, [](const VarPtr& g) {
    const ops::Gemm* op = gemm_of(g);
    return op && op->epilogue().act == ops::GemmAct::None;
  });
}

const LocalRewriter& rewriter() {
  using K = graph::OpKind;
  static const LocalRewriter r(
      "gemm_epilogue",
      {
          // {name, the kinds it triggers on, the rewrite}: one row per rewrite
          {"gemm_bias_vector", {K::Gemm}, on_output0(bias_vector)},
          {"gemm_relu_mask_from_output", {K::Elemwise}, on_output0(gemm_relu_mask)},
          {"gemm_relu_epilogue", {K::Elemwise}, relu_into_gemm},
          {"dot_relu_mask_from_output", {K::Elemwise}, on_output0(dot_relu_mask)},
          {"gemm_relu_of_dot", {K::Elemwise}, on_output0(relu_of_dot)},
      },
      /*max_sweeps=*/4);
  return r;
}

}  // namespace

bool gemm_epilogue_pass(graph::FunctionGraph& fgraph) { return rewriter().run(fgraph).changed; }

}  // namespace theon::rewrite
