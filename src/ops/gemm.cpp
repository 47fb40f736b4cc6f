#include "ops/gemm.hpp"
#include "ops/make_op.hpp"

#include "ops/blas.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/reduce.hpp"
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

const char* gemm_addend_name(GemmAddend a) {
  switch (a) {
    case GemmAddend::Matrix: return "matrix";
    case GemmAddend::Row: return "row";
    case GemmAddend::Col: return "col";
    case GemmAddend::None: return "none";
  }
  return "?";
}

const char* gemm_act_name(GemmAct a) { return a == GemmAct::Relu ? "relu" : "none"; }

graph::OpProps Gemm::props() const {
  graph::OpProps p = {{"alpha", number(alpha_)}, {"beta", number(beta_)}};
  if (epilogue_.addend != GemmAddend::Matrix) p.emplace_back("bias", gemm_addend_name(epilogue_.addend));
  if (epilogue_.act != GemmAct::None) p.emplace_back("act", gemm_act_name(epilogue_.act));
  return p;
}

VarPtr gemm(const VarPtr& c, const VarPtr& a, const VarPtr& b, double alpha, double beta, GemmEpilogue epi) {
  const std::string what = "gemm(" + c->label() + ", " + a->label() + ", " + b->label() + ")";
  if (epi.addend == GemmAddend::None)
    throw TypeError(what + ": a Gemm without an addend takes no c (gemm(a, b, alpha, act))");
  const int c_rank = epi.addend == GemmAddend::Matrix ? 2 : 1;
  if (a->type.ndim() != 2 || b->type.ndim() != 2 || c->type.ndim() != c_rank)
    throw TypeError(what + ": a and b must be matrices and c " +
                    (c_rank == 2 ? std::string("a matrix") : std::string("a vector (a ") + gemm_addend_name(epi.addend) +
                                                                 " bias)") +
                    " (" + c->type.str() + ", " + a->type.str() + ", " + b->type.str() + ")");
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
  graph::TensorType addend = c->type;  // c as the matrix it is added as
  if (epi.addend == GemmAddend::Row) addend.dims = {1, c->type.dims[0]};
  if (epi.addend == GemmAddend::Col) addend.dims = {c->type.dims[0], 1};
  graph::TensorType out = c->type;
  out.dims = graph::broadcast_static_dims({&prod, &addend}, what);
  return graph::make_output(std::make_shared<Gemm>(alpha, beta, epi), {c, a, b}, out);
}

VarPtr gemm(const VarPtr& a, const VarPtr& b, double alpha, GemmAct act) {
  const std::string what = "gemm(" + a->label() + ", " + b->label() + ")";
  if (a->type.ndim() != 2 || b->type.ndim() != 2)
    throw TypeError(what + ": a and b must be matrices (" + a->type.str() + ", " + b->type.str() + ")");
  const DType t = a->type.dtype;
  if (b->type.dtype != t || t == DType::Bool)
    throw TypeError(what + ": operands must share one non-bool dtype (" + a->type.str() + ", " + b->type.str() + ")");
  const int64_t ka = a->type.dims[1], kb = b->type.dims[0];
  if (ka >= 0 && kb >= 0 && ka != kb)
    throw ShapeError(what + ": inner dimensions differ (" + a->type.str() + " . " + b->type.str() + ")");
  graph::TensorType out = a->type;
  out.dims = {a->type.dims[0], b->type.dims[1]};
  return graph::make_output(std::make_shared<Gemm>(alpha, 0.0, GemmEpilogue{GemmAddend::None, act}), {a, b}, out);
}

GemmOperands gemm_operands(GemmAddend addend, const std::vector<Array>& inputs) {
  if (addend == GemmAddend::None) return {Array(), inputs[0], inputs[1]};
  return {gemm_addend_view(addend, inputs[0]), inputs[1], inputs[2]};
}

std::array<int64_t, 2> gemm_addend_shape(GemmAddend addend, const Shape& c) {
  if (addend == GemmAddend::None) return {1, 1};
  if (addend == GemmAddend::Row) return {1, c[0]};
  if (addend == GemmAddend::Col) return {c[0], 1};
  return {c[0], c[1]};
}

Array gemm_addend_view(GemmAddend addend, const Array& c) {
  if (addend == GemmAddend::Matrix || addend == GemmAddend::None) return c;
  const int64_t s = c.strides()[0];
  if (addend == GemmAddend::Row) return Array(c.buffer(), c.dtype(), {1, c.shape()[0]}, {0, s}, c.offset());
  return Array(c.buffer(), c.dtype(), {c.shape()[0], 1}, {s, 0}, c.offset());
}

Shape gemm_output_shape(const Apply& node, const Shape& c_in, const Shape& a, const Shape& b) {
  const GemmAddend addend = graph::op_as<Gemm>(node.op()).epilogue().addend;
  const size_t c_rank = addend == GemmAddend::Matrix ? 2u : addend == GemmAddend::None ? 0u : 1u;
  if (c_in.size() != c_rank || a.size() != 2 || b.size() != 2)
    throw ShapeError(node.describe() + ": operands of ranks " + std::to_string(c_in.size()) + ", " +
                     std::to_string(a.size()) + ", " + std::to_string(b.size()) + " (a " + gemm_addend_name(addend) +
                     " addend)");
  const std::array<int64_t, 2> c = gemm_addend_shape(addend, c_in);
  const int ia = gemm_a_index(addend);
  if (a[1] != b[0])
    throw ShapeError(node.describe() + ": inner dimensions differ: " + node.input(ia)->label() + " has shape " +
                     shape_str(a) + ", " + node.input(ia + 1)->label() + " has shape " + shape_str(b));
  const int64_t p[2] = {a[0], b[1]};
  Shape out(2);
  for (int d = 0; d < 2; ++d) {
    if (p[d] == c[d] || c[d] == 1) out[d] = p[d];
    else if (p[d] == 1) out[d] = c[d];
    else
      throw ShapeError(node.describe() + ": the product of shape " + shape_str(Shape{p[0], p[1]}) + " and " +
                       node.input(0)->label() + " of shape " + shape_str(c_in) + " (a " + gemm_addend_name(addend) +
                       " addend) cannot be broadcast together");
  }
  return out;
}

std::vector<Shape> Gemm::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  if (epilogue_.addend == GemmAddend::None) return {gemm_output_shape(node, Shape{}, inputs[0].shape(), inputs[1].shape())};
  return {gemm_output_shape(node, inputs[0].shape(), inputs[1].shape(), inputs[2].shape())};
}

graph::Cost Gemm::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost cst = Op::cost(node, input_shapes);
  const int ia = gemm_a_index(epilogue_.addend);
  const Shape &a = input_shapes[ia], &b = input_shapes[ia + 1];
  const double mn = static_cast<double>(a[0] * b[1]);
  // The epilogue per element: scale and add (none: the scale only), the relu.
  const double epi = (epilogue_.addend == GemmAddend::None ? 1.0 : 2.0) + (epilogue_.act == GemmAct::None ? 0.0 : 1.0);
  cst.flops = 2.0 * mn * static_cast<double>(a[1]) + epi * mn;
  cst.bytes += mn * static_cast<double>(itemsize(node.input(0)->type.dtype));
  return cst;
}

std::vector<VarPtr> Gemm::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const bool has_c = epilogue_.addend != GemmAddend::None;
  const int ia = gemm_a_index(epilogue_.addend);
  const VarPtr &a = node.input(ia), &b = node.input(ia + 1), &gz = output_grads[0];
  if (!gz || !is_float(a->type.dtype)) return std::vector<VarPtr>(node.inputs().size(), nullptr);
  auto scaled = [&](const VarPtr& g, double s) { return s == 1 ? g : elemwise(ScalarOpId::Mul, {g, literal(s, false)}); };
  // Through the activation: relu passes the gradient where its output is positive.
  VarPtr gpre = gz;
  if (epilogue_.act == GemmAct::Relu)
    gpre = elemwise(ScalarOpId::Switch,
                    {elemwise(ScalarOpId::Gt, {const_cast<Apply&>(node).output(0), literal(0, false)}), gz, literal(0, false)});
  // Without c the output is the product's shape; with c the product may have been broadcast
  // against it: sum its gradient back to (m, n).
  if (!has_c) {
    const VarPtr gp = scaled(gpre, alpha_);
    return {dot(gp, transpose(b)), dot(transpose(a), gp)};
  }
  VarPtr gp = sum_to(scaled(gpre, alpha_), dot(a, b));
  const VarPtr& c = node.input(0);
  VarPtr gc = scaled(gpre, beta_);
  if (epilogue_.addend == GemmAddend::Row) gc = sum_to(reduce(ReduceKind::Sum, gc, std::vector<int>{0}, false), c);
  else if (epilogue_.addend == GemmAddend::Col) gc = sum_to(reduce(ReduceKind::Sum, gc, std::vector<int>{1}, false), c);
  else gc = sum_to(gc, c);
  return {gc, dot(gp, transpose(b)), dot(transpose(a), gp)};
}

}  // namespace theon::ops

namespace theon::ops {

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Gemm>(PropReader& p) {
  const double alpha = p.number("alpha");
  const double beta = p.number("beta");
  GemmEpilogue epi;
  const std::string bias = p.text("bias", "matrix"), act = p.text("act", "none");
  if (bias == "row") epi.addend = GemmAddend::Row;
  else if (bias == "col") epi.addend = GemmAddend::Col;
  else if (bias == "none") epi.addend = GemmAddend::None;
  else if (bias != "matrix") throw ValueError("make_op(Gemm): prop 'bias' must be matrix, row, col or none, not '" + bias + "'");
  if (act == "relu") epi.act = GemmAct::Relu;
  else if (act != "none") throw ValueError("make_op(Gemm): prop 'act' must be none or relu, not '" + act + "'");
  if (epi.addend == GemmAddend::None && beta != 0)
    throw ValueError("make_op(Gemm): bias=none has no addend to scale: beta must be 0, not " + number(beta));
  return std::make_shared<const Gemm>(alpha, beta, epi);
}

}  // namespace theon::ops
