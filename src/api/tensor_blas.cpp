// tensor:: products: dot (Theano's, any rank), tensordot, batched_dot / batched_tensordot,
// outer, and the shape_pad* helpers they use. All but the Dot op itself are built from other
// builders: a contraction transposes each operand to (batch, free, summed) order, reshapes it
// to a matrix (a stack of matrices when batched), multiplies with dot or matmul and reshapes the
// result back, so their gradients are those of transpose, reshape and the products.
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "api/need_var.hpp"
#include "ops/blas.hpp"
#include "ops/shape.hpp"

#include <algorithm>
#include <numeric>

namespace theon::tensor {

namespace {

std::string list_text(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// "x (float32 (?, 3))": the user's name (or a generated one) and the type, for messages.
std::string operand_text(const Var& x) { return ops::label_type(x.node()); }
std::string label(const Var& x) { return x.node()->label(); }

// The size of dim d of x as an int64 scalar (a constant when static).
Var dim_size(const Var& x, int d) {
  const int64_t n = x.static_shape()[d];
  if (n >= 0) return constant(Array::scalar(static_cast<double>(n), DType::Int64));
  return x.shape()[{Index(static_cast<int64_t>(d))}];
}

// A reshape target: one entry per group of x's dims (their product), static where every dim of
// the group is.
struct Group {
  const Var* of;
  std::vector<int> dims;
};
Var reshape_to(const Var& x, const std::vector<Group>& groups) {
  std::vector<int64_t> fixed;
  bool all_static = true;
  for (const Group& g : groups) {
    int64_t n = 1;
    for (int d : g.dims) {
      const int64_t s = g.of->static_shape()[d];
      if (s < 0) all_static = false;
      n *= std::max<int64_t>(s, 0);
    }
    fixed.push_back(n);
  }
  if (all_static) return reshape(x, fixed);
  std::vector<Var> sizes;
  for (const Group& g : groups) {
    Var n = constant(Array::scalar(1, DType::Int64));
    for (size_t i = 0; i < g.dims.size(); ++i) n = i ? n * dim_size(*g.of, g.dims[i]) : dim_size(*g.of, g.dims[i]);
    sizes.push_back(n);
  }
  return reshape(x, stack(sizes));
}

std::vector<int> normalized(const std::string& what, const Var& x, std::vector<int> axes) {
  for (int& a : axes) {
    const int n = x.ndim();
    if (a < -n || a >= n)
      throw ShapeError(what + ": axis " + std::to_string(a) + " is out of range for " + operand_text(x));
    if (a < 0) a += n;
  }
  std::vector<int> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw ShapeError(what + ": axes " + list_text(axes) + " of " + operand_text(x) + " repeat an axis");
  return axes;
}

std::vector<int> others(int ndim, const std::vector<int>& used) {
  std::vector<int> out;
  for (int d = 0; d < ndim; ++d)
    if (std::find(used.begin(), used.end(), d) == used.end()) out.push_back(d);
  return out;
}

// sum over a's `a_axes` against b's `b_axes`; with `batched`, axis 0 of both is a batch axis
// (paired, not summed): batched_tensordot.
Var contract(const std::string& what, const Var& a, const Var& b, std::vector<int> a_axes, std::vector<int> b_axes,
             bool batched) {
  if (a_axes.size() != b_axes.size())
    throw ShapeError(what + ": the axes " + list_text(a_axes) + " of " + operand_text(a) + " and " + list_text(b_axes) +
                     " of " + operand_text(b) + " are not as many");
  a_axes = normalized(what, a, a_axes);
  b_axes = normalized(what, b, b_axes);
  for (size_t i = 0; i < a_axes.size(); ++i) {
    if (batched && (a_axes[i] == 0 || b_axes[i] == 0))
      throw ShapeError(what + ": axis 0 is the batch axis and cannot be summed over");
    const int64_t na = a.static_shape()[a_axes[i]], nb = b.static_shape()[b_axes[i]];
    if (na >= 0 && nb >= 0 && na != nb)
      throw ShapeError(what + ": axis " + std::to_string(a_axes[i]) + " of " + operand_text(a) + " has " +
                       std::to_string(na) + " elements, axis " + std::to_string(b_axes[i]) + " of " + operand_text(b) +
                       " has " + std::to_string(nb));
  }
  std::vector<int> batch = batched ? std::vector<int>{0} : std::vector<int>{};
  std::vector<int> used_a = a_axes, used_b = b_axes;
  used_a.insert(used_a.end(), batch.begin(), batch.end());
  used_b.insert(used_b.end(), batch.begin(), batch.end());
  const std::vector<int> free_a = others(a.ndim(), used_a), free_b = others(b.ndim(), used_b);
  // a as (batch, free, summed), b as (batch, summed, free).
  std::vector<int> perm_a = batch, perm_b = batch;
  perm_a.insert(perm_a.end(), free_a.begin(), free_a.end());
  perm_a.insert(perm_a.end(), a_axes.begin(), a_axes.end());
  perm_b.insert(perm_b.end(), b_axes.begin(), b_axes.end());
  perm_b.insert(perm_b.end(), free_b.begin(), free_b.end());
  std::vector<Group> ga = {{&a, free_a}, {&a, a_axes}}, gb = {{&b, b_axes}, {&b, free_b}};
  if (batched) {
    ga.insert(ga.begin(), Group{&a, batch});
    gb.insert(gb.begin(), Group{&b, batch});
  }
  const Var ma = reshape_to(a.transpose(perm_a), ga), mb = reshape_to(b.transpose(perm_b), gb);
  const Var product = batched ? matmul(ma, mb) : dot(ma, mb);
  std::vector<Group> out;
  if (batched) out.push_back({&a, batch});
  for (int d : free_a) out.push_back({&a, {d}});
  for (int d : free_b) out.push_back({&b, {d}});
  return reshape_to(product, out);
}

}  // namespace

Var dot(const Var& a, const Var& b) {
  const graph::VarPtr& pa = detail::need(a, "dot");
  const graph::VarPtr& pb = detail::need(b, "dot");
  if (a.ndim() == 0 || b.ndim() == 0) return a * b;  // Theano: a scalar scales
  if (a.ndim() <= 2 && b.ndim() <= 2) return Var(ops::dot(pa, pb));
  // Theano's rule for higher ranks: over a's last axis and b's second-to-last (its only one for a vector).
  return tensordot(a, b, std::vector<int>{a.ndim() - 1}, std::vector<int>{std::max(0, b.ndim() - 2)});
}

Var tensordot(const Var& a, const Var& b, int axes) {
  detail::need(a, "tensordot");
  detail::need(b, "tensordot");
  const std::string what = "tensordot(" + label(a) + ", " + label(b) + ", " + std::to_string(axes) + ")";
  if (axes < 0 || axes > a.ndim() || axes > b.ndim())
    throw ShapeError(what + ": cannot sum over " + std::to_string(axes) + " axes of " + operand_text(a) + " and " +
                     operand_text(b));
  std::vector<int> a_axes(axes), b_axes(axes);
  std::iota(a_axes.begin(), a_axes.end(), a.ndim() - axes);
  std::iota(b_axes.begin(), b_axes.end(), 0);
  return contract(what, a, b, a_axes, b_axes, false);
}

Var tensordot(const Var& a, const Var& b, const std::vector<int>& a_axes, const std::vector<int>& b_axes) {
  detail::need(a, "tensordot");
  detail::need(b, "tensordot");
  const std::string what = "tensordot(" + label(a) + ", " + label(b) + ", [" + list_text(a_axes) + ", " +
                           list_text(b_axes) + "])";
  return contract(what, a, b, a_axes, b_axes, false);
}

Var batched_tensordot(const Var& a, const Var& b, const std::vector<int>& a_axes, const std::vector<int>& b_axes) {
  detail::need(a, "batched_tensordot");
  detail::need(b, "batched_tensordot");
  const std::string what = "batched_tensordot(" + label(a) + ", " + label(b) + ")";
  if (a.ndim() < 1 || b.ndim() < 1)
    throw ShapeError(what + ": both operands need a batch axis (" + operand_text(a) + ", " + operand_text(b) + ")");
  return contract(what, a, b, a_axes, b_axes, true);
}

Var batched_dot(const Var& a, const Var& b) {
  detail::need(a, "batched_dot");
  detail::need(b, "batched_dot");
  const std::string what = "batched_dot(" + label(a) + ", " + label(b) + ")";
  if (a.ndim() == 0 || b.ndim() == 0)
    throw ShapeError(what + ": both operands need a batch axis (" + operand_text(a) + ", " + operand_text(b) + ")");
  // Theano's: a vector of per-batch scalars scales the other operand's rows.
  if (a.ndim() == 1) return shape_padright(a, b.ndim() - 1) * b;
  if (b.ndim() == 1) return a * shape_padright(b, a.ndim() - 1);
  return batched_tensordot(a, b, {a.ndim() - 1}, {std::max(1, b.ndim() - 2)});
}

Var outer(const Var& x, const Var& y) {
  detail::need(x, "outer");
  detail::need(y, "outer");
  // Theano flattens both; each element is one product, so broadcasting is exact (and fuses).
  const Var u = x.ndim() == 1 ? x : x.flatten(1), v = y.ndim() == 1 ? y : y.flatten(1);
  return u.dimshuffle({0, -1}) * v.dimshuffle({-1, 0});
}

Var shape_padleft(const Var& x, int n_ones) {
  detail::need(x, "shape_padleft");
  std::vector<int> pattern(static_cast<size_t>(std::max(n_ones, 0)), -1);
  for (int d = 0; d < x.ndim(); ++d) pattern.push_back(d);
  return x.dimshuffle(pattern);
}

Var shape_padright(const Var& x, int n_ones) {
  detail::need(x, "shape_padright");
  std::vector<int> pattern(static_cast<size_t>(x.ndim()));
  std::iota(pattern.begin(), pattern.end(), 0);
  pattern.insert(pattern.end(), static_cast<size_t>(std::max(n_ones, 0)), -1);
  return x.dimshuffle(pattern);
}

Var shape_padaxis(const Var& x, int axis) {
  detail::need(x, "shape_padaxis");
  const int n = x.ndim();
  if (axis < -n - 1 || axis > n)
    throw ShapeError("shape_padaxis(" + operand_text(x) + ", " + std::to_string(axis) + "): axis must be in [" +
                     std::to_string(-n - 1) + ", " + std::to_string(n) + "]");
  if (axis < 0) axis += n + 1;
  std::vector<int> pattern;
  for (int d = 0; d < n; ++d) {
    if (d == axis) pattern.push_back(-1);
    pattern.push_back(d);
  }
  if (axis == n) pattern.push_back(-1);
  return x.dimshuffle(pattern);
}

}  // namespace theon::tensor
