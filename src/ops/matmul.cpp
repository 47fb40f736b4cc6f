#include "ops/matmul.hpp"
#include "ops/make_op.hpp"
#include "util/checked_size.hpp"
#include "graph/user_names.hpp"

#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/reduce.hpp"
#include "ops/sum_to.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

#include <algorithm>
#include <numeric>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

namespace {

int batch_rank(int ndim) { return std::max(ndim - 2, 0); }

std::string operands_text(const VarPtr& a, const VarPtr& b) {
  return a->label() + " is " + a->type.str() + ", " + b->label() + " is " + b->type.str();
}

// Broadcasts two static batch dims (-1 unknown); false when they cannot agree.
bool broadcast_static_dim(int64_t x, int64_t y, int64_t& out) {
  if (x == 1) out = y;
  else if (y == 1) out = x;
  else if (x < 0) out = y;  // unknown: must be 1 or y at run time, so the result is y (or unknown)
  else if (y < 0) out = x;
  else if (x == y) out = x;
  else return false;
  return true;
}

}  // namespace

std::string input_label(const Apply& node, int i) {
  const graph::Variable& v = *node.input(i);
  if (v.name.empty() && v.owner)
    if (auto* ew = graph::op_if<Elemwise>(v.owner->op()); ew && ew->scalar() == ScalarOpId::Cast)
      return v.owner->input(0)->label();
  return v.label();
}

VarPtr matmul(const VarPtr& a_in, const VarPtr& b_in) {
  const std::string what = "matmul(" + a_in->label() + ", " + b_in->label() + ")";
  const int na = a_in->type.ndim(), nb = b_in->type.ndim();
  if (na < 1 || nb < 1)
    throw ShapeError(what + ": matmul needs operands of rank >= 1 (" + operands_text(a_in, b_in) +
                     "); use multiplication for scalars");
  DType t = result_type({{a_in->type.dtype, a_in->weak}, {b_in->type.dtype, b_in->weak}}, config().floatX);
  require_supported(t, what);
  if (t == DType::Bool) t = DType::Int64;  // sums of products, as dot
  VarPtr a = cast(a_in, t), b = cast(b_in, t);
  const auto &da = a->type.dims, &db = b->type.dims;
  const int64_t ka = da[na - 1], kb = db[nb == 1 ? 0 : nb - 2];
  if (ka >= 0 && kb >= 0 && ka != kb)
    throw ShapeError(what + ": inner dimensions differ (" + std::to_string(ka) + " vs " + std::to_string(kb) + "; " +
                     operands_text(a_in, b_in) + ")");
  const int ba = batch_rank(na), bb = batch_rank(nb), nbatch = std::max(ba, bb);
  graph::TensorType out;
  out.dtype = t;
  for (int d = 0; d < nbatch; ++d) {
    int64_t x = d - (nbatch - ba) >= 0 ? da[d - (nbatch - ba)] : 1;
    int64_t y = d - (nbatch - bb) >= 0 ? db[d - (nbatch - bb)] : 1;
    int64_t o = -1;
    if (!broadcast_static_dim(x, y, o))
      throw ShapeError(what + ": batch dimensions do not broadcast (" + std::to_string(x) + " vs " + std::to_string(y) +
                       "; " + operands_text(a_in, b_in) + ")");
    out.dims.push_back(o);
  }
  if (na >= 2) out.dims.push_back(da[na - 2]);
  if (nb >= 2) out.dims.push_back(db[nb - 1]);
  return graph::make_output(std::make_shared<BatchedMatmul>(), {a, b}, out);
}

MatmulShape matmul_shape(const Apply& node, const Shape& a, const Shape& b) {
  const int na = static_cast<int>(a.size()), nb = static_cast<int>(b.size());
  auto fail = [&](const std::string& why) {
    const std::string la = input_label(node, 0), lb = input_label(node, 1);
    return ShapeError("matmul(" + la + ", " + lb + "): " + why + ": " + la + " has shape " + shape_str(a) + ", " + lb +
                      " has shape " + shape_str(b));
  };
  MatmulShape g;
  g.k = a.back();
  const int64_t kb = b[nb == 1 ? 0 : nb - 2];
  if (g.k != kb) throw fail("inner dimensions differ (" + std::to_string(g.k) + " vs " + std::to_string(kb) + ")");
  const int ba = batch_rank(na), bb = batch_rank(nb), nbatch = std::max(ba, bb);
  for (int d = 0; d < nbatch; ++d) {
    int64_t x = d - (nbatch - ba) >= 0 ? a[d - (nbatch - ba)] : 1;
    int64_t y = d - (nbatch - bb) >= 0 ? b[d - (nbatch - bb)] : 1;
    if (x != y && x != 1 && y != 1)
      throw fail("batch dimensions do not broadcast (" + std::to_string(x) + " vs " + std::to_string(y) + ")");
    g.batch.push_back(x == 1 ? y : x);
  }
  g.out = g.batch;
  if (na >= 2) g.out.push_back(g.m = a[na - 2]);
  if (nb >= 2) g.out.push_back(g.n = b[nb - 1]);
  return g;
}

MatrixStrides lhs_matrix_strides(const Array& a) {
  const int nd = a.ndim();
  return {nd >= 2 ? a.strides()[nd - 2] : 0, a.strides()[nd - 1]};
}

MatrixStrides rhs_matrix_strides(const Array& b) {
  const int nd = b.ndim();
  return nd >= 2 ? MatrixStrides{b.strides()[nd - 2], b.strides()[nd - 1]} : MatrixStrides{b.strides()[0], 0};
}

void for_each_matmul_batch(const MatmulShape& g, const Array& a, const Array& b,
                           const std::function<void(int64_t, int64_t, int64_t)>& fn) {
  const int64_t count = shape_size(g.batch), per_matrix = g.m * g.n;
  if (g.batch.empty()) return fn(0, 0, 0);
  // Batch strides of each operand over the broadcast batch shape (0 where it broadcasts),
  // plus a trailing 0-stride dim so OuterLoop's odometer covers every batch dim.
  auto batch_strides = [&](const Array& x) {
    Strides s(g.batch.size() + 1, 0);
    const int bx = batch_rank(x.ndim()), lead = static_cast<int>(g.batch.size()) - bx;
    for (int d = 0; d < bx; ++d) s[lead + d] = x.shape()[d] == 1 ? 0 : x.strides()[d];
    return s;
  };
  Strides sa = batch_strides(a), sb = batch_strides(b);
  Shape shape = g.batch;
  shape.push_back(1);
  detail::OuterLoop loop(shape, {&sa, &sb}, {0, 0});
  for (int64_t i = 0; i < count; ++i, loop.next()) fn(loop.offsets()[0], loop.offsets()[1], i * per_matrix);
}

std::vector<Shape> BatchedMatmul::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  Shape out = matmul_shape(node, inputs[0].shape(), inputs[1].shape()).out;
  detail::checked_nbytes(out, node.output_raw(0)->type.dtype, [&] { return graph::user_describe(node); });
  return {out};
}

graph::Cost BatchedMatmul::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  const MatmulShape g = matmul_shape(node, input_shapes[0], input_shapes[1]);
  const double matrices = static_cast<double>(shape_size(g.batch));
  c.flops = 2.0 * matrices * static_cast<double>(g.m * g.n * g.k);
  c.bytes += matrices * static_cast<double>(g.m * g.n * itemsize(node.input(0)->type.dtype));
  return c;
}

}  // namespace theon::ops

// ---- gradient ----

namespace theon::ops {

namespace {

// The last two dims swapped (x has rank >= 2).
VarPtr swap_last_two(const VarPtr& x) {
  std::vector<int> pattern(x->type.ndim());
  std::iota(pattern.begin(), pattern.end(), 0);
  std::swap(pattern[pattern.size() - 2], pattern.back());
  return dimshuffle(x, pattern);
}

// g (rank >= like's) summed to like's run-time shape: the leading dims that broadcasting
// added are reduced away, then the dims where like has size 1 (sum_to).
VarPtr sum_to_like(const VarPtr& g, const VarPtr& like) {
  VarPtr r = g;
  const int lead = r->type.ndim() - like->type.ndim();
  if (lead > 0) {
    std::vector<int> axes(lead);
    std::iota(axes.begin(), axes.end(), 0);
    r = reduce(ReduceKind::Sum, r, axes, false);
  }
  return sum_to(cast(r, like->type.dtype), like);
}

}  // namespace

std::vector<VarPtr> BatchedMatmul::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr &a = node.input(0), &b = node.input(1);
  if (!output_grads[0] || !is_float(a->type.dtype)) return {nullptr, nullptr};
  const int na = a->type.ndim(), nb = b->type.ndim();
  // Promote vectors as the forward did: a (k,) is a (1, k) row, b (k,) a (k, 1) column, and
  // gz gets the size-1 dims back (m for a vector a, n for a vector b).
  const VarPtr a2 = na == 1 ? dimshuffle(a, {-1, 0}) : a;
  const VarPtr b2 = nb == 1 ? dimshuffle(b, {0, -1}) : b;
  const int nbatch = std::max(batch_rank(na), batch_rank(nb));
  std::vector<int> pattern(nbatch);
  std::iota(pattern.begin(), pattern.end(), 0);
  int next = nbatch;
  pattern.push_back(na == 1 ? -1 : next++);
  pattern.push_back(nb == 1 ? -1 : next++);
  const VarPtr gz = dimshuffle(cast(output_grads[0], a->type.dtype), pattern);  // batch + (m, n)
  // Both products broadcast over the full batch; each is summed back to its operand.
  VarPtr ga = sum_to_like(matmul(gz, swap_last_two(b2)), a2);
  VarPtr gb = sum_to_like(matmul(swap_last_two(a2), gz), b2);
  if (na == 1) ga = dimshuffle(ga, {1});
  if (nb == 1) gb = dimshuffle(gb, {0});
  return {ga, gb};
}

}  // namespace theon::ops

namespace theon::ops {

THEON_PROPLESS_FACTORY(BatchedMatmul, BatchedMatmul)

}  // namespace theon::ops
