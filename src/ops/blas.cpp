#include "ops/blas.hpp"
#include "ops/make_op.hpp"
#include "util/checked_size.hpp"
#include "graph/user_names.hpp"

#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "util/dispatch.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

VarPtr dot(const VarPtr& a_in, const VarPtr& b_in) {
  const std::string what = "dot(" + a_in->label() + ", " + b_in->label() + ")";
  const int na = a_in->type.ndim(), nb = b_in->type.ndim();
  if (na < 1 || na > 2 || nb < 1 || nb > 2)
    throw ShapeError(what + ": dot takes vectors and matrices (ranks " + std::to_string(na) + " and " +
                     std::to_string(nb) + " given: " + a_in->type.str() + ", " + b_in->type.str() +
                     "); use matmul for batches and multiplication for scalars");
  DType t = result_type({{a_in->type.dtype, a_in->weak}, {b_in->type.dtype, b_in->weak}}, config().floatX);
  require_supported(t, what);
  if (t == DType::Bool) t = DType::Int64;  // NumPy gives bool; Theano-style sums of products are more useful
  VarPtr a = cast(a_in, t), b = cast(b_in, t);
  int64_t ka = a->type.dims[na - 1], kb = b->type.dims[nb == 2 ? 0 : 0];
  if (ka >= 0 && kb >= 0 && ka != kb)
    throw ShapeError(what + ": inner dimensions differ (" + a->type.str() + " . " + b->type.str() + ": " +
                     std::to_string(ka) + " vs " + std::to_string(kb) + ")");
  graph::TensorType out;
  out.dtype = t;
  if (na == 2) out.dims.push_back(a->type.dims[0]);
  if (nb == 2) out.dims.push_back(b->type.dims[1]);
  return graph::make_output(std::make_shared<Dot>(), {a, b}, out);
}

GemmShape dot_geometry(const Apply& node, const Shape& a, const Shape& b) {
  int64_t m = a.size() == 2 ? a[0] : 1, k = a.back();
  int64_t kb = b[0], n = b.size() == 2 ? b[1] : 1;
  if (k != kb)
    throw ShapeError(node.describe() + ": inner dimensions differ: " + node.input(0)->label() + " has shape " +
                     shape_str(a) + ", " + node.input(1)->label() + " has shape " + shape_str(b) + " (" +
                     std::to_string(k) + " vs " + std::to_string(kb) + ")");
  return {m, n, k};
}

std::vector<Shape> Dot::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const Shape &a = inputs[0].shape(), &b = inputs[1].shape();
  dot_geometry(node, a, b);
  Shape out;
  if (a.size() == 2) out.push_back(a[0]);
  if (b.size() == 2) out.push_back(b[1]);
  detail::checked_nbytes(out, node.output_raw(0)->type.dtype, [&] { return graph::user_describe(node); });
  return {out};
}

graph::Cost Dot::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  GemmShape g = dot_geometry(node, input_shapes[0], input_shapes[1]);
  c.flops = 2.0 * static_cast<double>(g.m * g.n * g.k);
  c.bytes += static_cast<double>(g.m * g.n * itemsize(node.input(0)->type.dtype));
  return c;
}

}  // namespace theon::ops

namespace theon::ops {

std::vector<VarPtr> Dot::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr &a = node.input(0), &b = node.input(1), &gz = output_grads[0];
  if (!gz || !is_float(a->type.dtype)) return {nullptr, nullptr};
  const int na = a->type.ndim(), nb = b->type.ndim();
  auto col = [](const VarPtr& v) { return dimshuffle(v, {0, -1}); };  // (n,) -> (n, 1)
  auto row = [](const VarPtr& v) { return dimshuffle(v, {-1, 0}); };  // (n,) -> (1, n)
  if (na == 2 && nb == 2) return {dot(gz, transpose(b)), dot(transpose(a), gz)};
  if (na == 2 && nb == 1) return {dot(col(gz), row(b)), dot(transpose(a), gz)};
  if (na == 1 && nb == 2) return {dot(b, gz), dot(col(a), row(gz))};
  return {elemwise(ScalarOpId::Mul, {gz, b}), elemwise(ScalarOpId::Mul, {gz, a})};
}

}  // namespace theon::ops

namespace theon::ops {

THEON_PROPLESS_FACTORY(Dot, Dot)

}  // namespace theon::ops
