#include "ops/gemm.hpp"
#include "ops/make_op.hpp"

#include "ops/blas.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/sum_to.hpp"
#include "util/dispatch.hpp"

#include <theon/error.hpp>

#include <cstdio>
#include <type_traits>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

graph::OpProps Gemm::props() const { return {{"alpha", number(alpha_)}, {"beta", number(beta_)}}; }

VarPtr gemm(const VarPtr& c, const VarPtr& a, const VarPtr& b, double alpha, double beta) {
  const std::string what = "gemm(" + c->label() + ", " + a->label() + ", " + b->label() + ")";
  if (a->type.ndim() != 2 || b->type.ndim() != 2 || c->type.ndim() != 2)
    throw TypeError(what + ": a, b and c must be matrices (" + c->type.str() + ", " + a->type.str() + ", " +
                    b->type.str() + ")");
  const DType t = c->type.dtype;
  if (a->type.dtype != t || b->type.dtype != t || t == DType::Bool)
    throw TypeError(what + ": operands must share one non-bool dtype (" + c->type.str() + ", " + a->type.str() +
                    ", " + b->type.str() + ")");
  const int64_t ka = a->type.dims[1], kb = b->type.dims[0];
  if (ka >= 0 && kb >= 0 && ka != kb)
    throw ShapeError(what + ": inner dimensions differ (" + a->type.str() + " . " + b->type.str() + ")");
  graph::TensorType prod;
  prod.dtype = t;
  prod.dims = {a->type.dims[0], b->type.dims[1]};
  graph::TensorType out = c->type;
  out.dims = graph::broadcast_static_dims({&prod, &c->type}, what);
  return graph::make_output(std::make_shared<Gemm>(alpha, beta), {c, a, b}, out);
}

Shape gemm_output_shape(const Apply& node, const Shape& c, const Shape& a, const Shape& b) {
  if (a[1] != b[0])
    throw ShapeError(node.describe() + ": inner dimensions differ: " + node.input(1)->label() + " has shape " +
                     shape_str(a) + ", " + node.input(2)->label() + " has shape " + shape_str(b));
  const Shape p = {a[0], b[1]};
  Shape out(2);
  for (int d = 0; d < 2; ++d) {
    if (p[d] == c[d] || c[d] == 1) out[d] = p[d];
    else if (p[d] == 1) out[d] = c[d];
    else
      throw ShapeError(node.describe() + ": the product of shape " + shape_str(p) + " and " + node.input(0)->label() +
                       " of shape " + shape_str(c) + " cannot be broadcast together");
  }
  return out;
}

std::vector<Shape> Gemm::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  return {gemm_output_shape(node, inputs[0].shape(), inputs[1].shape(), inputs[2].shape())};
}

graph::Cost Gemm::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost cst = Op::cost(node, input_shapes);
  const Shape &a = input_shapes[1], &b = input_shapes[2];
  const double mn = static_cast<double>(a[0] * b[1]);
  cst.flops = 2.0 * mn * static_cast<double>(a[1]) + 2.0 * mn;
  cst.bytes += mn * static_cast<double>(itemsize(node.input(0)->type.dtype));
  return cst;
}

std::vector<VarPtr> Gemm::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr &c = node.input(0), &a = node.input(1), &b = node.input(2), &gz = output_grads[0];
  if (!gz || !is_float(c->type.dtype)) return {nullptr, nullptr, nullptr};
  auto scaled = [&](const VarPtr& g, double s) { return s == 1 ? g : elemwise(ScalarOpId::Mul, {g, literal(s, false)}); };
  // The product may have been broadcast against c: sum its gradient back to (m, n).
  VarPtr gp = sum_to(scaled(gz, alpha_), dot(a, b));
  return {sum_to(scaled(gz, beta_), c), dot(gp, transpose(b)), dot(transpose(a), gp)};
}

}  // namespace theon::ops

namespace theon::ops {

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Gemm>(PropReader& p) {
  const double alpha = p.number("alpha");
  return std::make_shared<const Gemm>(alpha, p.number("beta"));
}

}  // namespace theon::ops
