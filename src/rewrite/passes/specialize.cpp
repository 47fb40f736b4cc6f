// specialize:
// - dot(a, b) + c, c + dot(a, b), dot(a, b) - c, c - dot(a, b) and the scaled forms
//   alpha * dot(a, b) + beta * c (alpha, beta size-1 constants on either side of the product)
//   become one Gemm node (src/ops/gemm.hpp). It fires only for matrix products whose result
//   (and its scaling) feeds nothing else, apart from clients reading only the product's shape
//   (a training graph's sum_to(g, like=dot)) where the static types prove that the add keeps
//   that shape (they are then rebuilt on the Gemm's output), when the Gemm's type is exactly the add's, for float
//   and integer dtypes (integral alpha, beta there), and never with alpha or beta 0 (BLAS would
//   skip the operand, turning NaN * 0 into 0).
// - categorical_crossentropy(softmax(x, axis=1), labels), integer labels, becomes one
//   SoftmaxCrossentropy(x, labels) node (src/ops/nnet_fused.hpp): its loss replaces the
//   crossentropy and its softmax output every other use of the softmax (the gradient's
//   SoftmaxCrossentropyGrad, which Softmax::L_op emits, and e.g. an argmax of predictions),
//   so the row pass runs once. User names move to the replacements. The rule (match.cpp) is
//   also a row of stabilize, which runs first in fast_run and fast_compile; here it catches
//   graphs compiled with optimizer_excluding=stabilize.
//
// A table of named rules run once over the graph by LocalRewriter (rewrite/local_rewrite.hpp).
// Runs after canonicalize (which removes x * 1 and x + 0 around products) and before fusion
// (which would hide the add and the scalings inside a Composite) and inplace (which must see
// the final nodes).
#include "graph/op.hpp"
#include "ops/elemwise.hpp"
#include "ops/gemm.hpp"
#include "rewrite/local_rewrite.hpp"
#include "rewrite/passes/match.hpp"
#include "rewrite/passes/passes.hpp"
#include "util/dispatch.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

namespace theon::rewrite {
namespace {

using graph::Apply;
using graph::VarPtr;
using ops::ScalarOpId;

/// The value of a size-1 constant (looking through DimShuffle), as a double.
std::optional<double> scalar_constant(const VarPtr& v) {
  const graph::Variable* p = v.get();
  while (p->owner && p->owner->op().kind() == graph::OpKind::DimShuffle) p = p->owner->input(0).get();
  if (p->kind != graph::VarKind::Constant || p->constant.size() != 1) return std::nullopt;
  const Array& c = p->constant;
  return detail::visit_storage_dtype(c.dtype(), [&]<class T>() { return static_cast<double>(c.data<T>()[0]); });
}

struct Product {
  double alpha = 1;
  VarPtr a, b;
  VarPtr dot;                        // the product itself
  std::vector<Apply*> shape_clients;  // of `dot`: they read only its shape (see below)
};

/// `v` as alpha * dot(a, b) of two matrices, every intermediate used only by `user` (the
/// add) and `v` (the scaling), apart from clients reading only the dot's shape (the add's
/// gradient sum_to(g, like=dot) in a training graph), which are returned in the Product.
std::optional<Product> match_product(const graph::FunctionGraph& fg, const VarPtr& v, const Apply& user) {
  auto dot_of = [&](const VarPtr& d, const Apply& reader) -> std::optional<Product> {
    if (!d->owner || d->owner->op().kind() != graph::OpKind::Dot) return std::nullopt;
    Product p{1, d->owner->input(0), d->owner->input(1), d, {}};
    if (!single_use(fg, d, reader, &p.shape_clients)) return std::nullopt;
    if (p.a->type.ndim() != 2 || p.b->type.ndim() != 2) return std::nullopt;
    return p;
  };
  if (auto p = dot_of(v, user)) return p;
  const Apply* mul = elemwise_owner(v, ScalarOpId::Mul);
  if (!mul || !single_use(fg, v)) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    std::optional<double> s = scalar_constant(mul->input(i));
    const VarPtr& other = mul->input(1 - i);
    if (!s || other->type != v->type) continue;
    if (auto p = dot_of(other, *mul)) {
      p->alpha = *s;
      return p;
    }
  }
  return std::nullopt;
}

/// `v` as beta * c (beta a size-1 constant, the product used only here), else 1 * v.
std::pair<double, VarPtr> match_scaled(const graph::FunctionGraph& fg, const VarPtr& v) {
  if (const Apply* mul = elemwise_owner(v, ScalarOpId::Mul); mul && single_use(fg, v))
    for (int i = 0; i < 2; ++i)
      if (std::optional<double> s = scalar_constant(mul->input(i)); s && mul->input(1 - i)->type == v->type)
        return {*s, mul->input(1 - i)};
  return {1.0, v};
}

/// Do the static types prove that the add's result has the product's run-time shape, so that
/// a client reading only the product's shape may read the Gemm's output instead? The add
/// broadcasts the product only along a dim where the product has size 1 and c does not: that
/// cannot happen where c's dim is statically 1, or the product's is known and not 1, or both
/// are known and equal. A product dim that may be 1 against a c dim that may not (W6's
/// bias width against the layer's, both unknown) keeps the Dot.
bool product_shape_kept(const Product& p, const VarPtr& c) {
  const int64_t pd[2] = {p.a->type.dims[0], p.b->type.dims[1]};
  for (int d = 0; d < 2; ++d) {
    const int64_t cd = c->type.ndim() == 2 ? c->type.dims[d] : graph::kUnknownDim;
    if (cd == 1 || (pd[d] >= 0 && pd[d] != 1) || (pd[d] >= 0 && pd[d] == cd)) continue;
    return false;
  }
  return true;
}

/// Does `v` depend on an output of one of `nodes`? (Then a node reading the Gemm built on `v`
/// cannot be one of them: the graph would have a cycle.)
bool depends_on(const VarPtr& v, const std::vector<Apply*>& nodes) {
  std::vector<const Apply*> stack, seen;
  if (v->owner) stack.push_back(v->owner);
  while (!stack.empty()) {
    const Apply* n = stack.back();
    stack.pop_back();
    if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
    seen.push_back(n);
    if (std::find(nodes.begin(), nodes.end(), n) != nodes.end()) return true;
    for (const VarPtr& in : n->inputs())
      if (in->owner) stack.push_back(in->owner);
  }
  return false;
}

/// dot + c, c + dot, dot - c, c - dot and their scaled forms -> Gemm. Clients that read only
/// the product's shape are rebuilt on the Gemm's output where that has the same shape.
Replacements dot_add_to_gemm(graph::FunctionGraph& fg, Apply& node) {
  const auto& op = graph::op_as<ops::Elemwise>(node.op());
  const bool add = op.scalar() == ScalarOpId::Add, sub = op.scalar() == ScalarOpId::Sub;
  const graph::Variable& out = *node.output_raw(0);
  if ((!add && !sub) || out.type.ndim() != 2 || out.type.dtype == DType::Bool) return {};
  const bool integral = !is_float(out.type.dtype);
  for (int i = 0; i < 2; ++i) {
    std::optional<Product> p = match_product(fg, node.input(i), node);
    if (!p) continue;
    auto [beta, c] = match_scaled(fg, node.input(1 - i));
    double alpha = p->alpha;
    if (sub && i == 0) beta = -beta;  // alpha * dot - beta * c
    if (sub && i == 1) alpha = -alpha;  // beta * c - alpha * dot
    if (alpha == 0 || beta == 0 || !std::isfinite(alpha) || !std::isfinite(beta)) continue;
    if (integral && (alpha != std::trunc(alpha) || beta != std::trunc(beta))) continue;
    if (c->type.dtype != out.type.dtype || p->a->type.dtype != out.type.dtype) continue;
    if (!p->shape_clients.empty() && (!product_shape_kept(*p, c) || depends_on(c, p->shape_clients))) continue;
    VarPtr g = ops::gemm(c, p->a, p->b, alpha, beta);
    if (g->type != out.type) continue;
    if (p->shape_clients.empty()) return {{node.output(0), g}};
    return with_shape_clients(node, p->dot, g, p->shape_clients);
  }
  return {};
}

const LocalRewriter& specializer() {
  using K = graph::OpKind;
  // One sweep over the graph (no fixed point): no rule's result is another rule's pattern.
  static const LocalRewriter rewriter(
      "specialize",
      {
          // {name, the kinds it triggers on, the rewrite}: one row per rewrite
          {"dot_add_to_gemm", {K::Elemwise}, dot_add_to_gemm},
          {"softmax_crossentropy", {K::CategoricalCrossentropy}, softmax_crossentropy_fusion},
      },
      /*max_sweeps=*/1);
  return rewriter;
}

}  // namespace

bool specialize_pass(graph::FunctionGraph& fgraph) { return specializer().run(fgraph).changed; }

}  // namespace theon::rewrite
