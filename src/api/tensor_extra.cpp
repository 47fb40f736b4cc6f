// Theano's everyday tensor names built from other ops (issue 17): eye, identity_like, tile,
// repeat, linspace, squeeze, addbroadcast, unbroadcast, patternbroadcast, specify_shape, roll,
// diagonal, diag (and the builders of the Sort and FlatNonZero ops: sort, argsort, flatnonzero, nonzero, nonzero_values). Each is a composition of existing differentiable ops (arange, comparison,
// alloc, reshape, dimshuffle, subtensor, take, join, Assert), so every backend runs it and its
// gradient follows; none needs a kernel of its own.
#include <theon/config.hpp>
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "graph/node.hpp"
#include "ops/assert.hpp"
#include "ops/elemwise.hpp"
#include "ops/nonzero.hpp"
#include "ops/sort.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

namespace theon::tensor {

namespace {

const graph::VarPtr& need(const Var& v, const char* what) {
  if (!v.defined()) throw ValueError(std::string(what) + ": use of an undefined Var");
  return v.node();
}

std::string label(const Var& v) { return v.node()->label(); }

int norm_axis(int axis, int ndim, const std::string& what) {
  if (axis < -ndim || axis >= ndim)
    throw IndexError(what + ": axis " + std::to_string(axis) + " is out of range for " + std::to_string(ndim) +
                     " dimensions");
  return axis < 0 ? axis + ndim : axis;
}

Var i64(const Var& v) { return v.dtype() == DType::Int64 ? v : cast(v, DType::Int64); }
Var lit64(int64_t n) { return constant(Array::scalar(static_cast<double>(n), DType::Int64)); }

void require_int_scalar(const Var& v, const std::string& what) {
  if (v.ndim() != 0 || !(is_integer(v.dtype()) || (v.node()->weak && v.dtype() == DType::Int64)))
    throw TypeError(what + ": " + label(v) + " (" + v.type_str() + ") must be an integer scalar");
}

// The value of an integer scalar constant, if v is one.
std::optional<int64_t> constant_int(const Var& v) {
  if (v.node()->kind != graph::VarKind::Constant) return std::nullopt;
  return v.node()->constant.astype(DType::Int64).data<int64_t>()[0];
}

// A size given by the user (as int64), refused when negative: now when it is a constant, when
// the function runs otherwise (NumPy's and Theano's "negative dimensions are not allowed").
Var checked_dim(const Var& n, const std::string& what) {
  const std::string message = what + ": negative dimensions are not allowed";
  if (auto c = constant_int(n)) {
    if (*c < 0) throw ShapeError(message + ", got " + std::to_string(*c));
    return i64(n);
  }
  const Var v = i64(n);
  return Var(ops::assert_op(v.node(), {ge(v, lit64(0)).node()}, message, {{label(n), v.node()}}, ops::AssertError::Shape));
}

// Size of dim d of x: a constant when static, else x.shape[d].
Var dim_of(const Var& x, int d) {
  const int64_t n = x.static_shape()[d];
  if (n >= 0) return lit64(n);
  return x.shape()[{Index(d)}];
}

}  // namespace

Var eye(const ScalarArg& n) { return eye(n, n, 0); }

Var eye(const ScalarArg& n, const ScalarArg& m, const ScalarArg& k, std::optional<DType> dtype) {
  const std::string what = "eye(" + label(n) + ", " + label(m) + ", k=" + label(k) + ")";
  require_int_scalar(n, what + ": n");
  require_int_scalar(m, what + ": m");
  require_int_scalar(k, what + ": k");
  Var rows = arange(checked_dim(n, what)).dimshuffle({0, -1});
  Var cols = arange(checked_dim(m, what)).dimshuffle({-1, 0});
  return cast(eq(rows + i64(k), cols), dtype.value_or(config().floatX));
}

Var identity_like(const Var& x) {
  need(x, "identity_like");
  if (x.ndim() != 2)
    throw TypeError("identity_like(" + label(x) + "): needs a matrix, got " + x.type_str());
  return eye(dim_of(x, 0), dim_of(x, 1), 0, x.dtype());
}

Var tile(const Var& x_in, const std::vector<ScalarArg>& reps) {
  need(x_in, "tile");
  std::string what = "tile(" + label(x_in) + ", (";
  for (size_t i = 0; i < reps.size(); ++i) what += (i ? ", " : "") + label(reps[i]);
  what += "))";
  for (auto& r : reps) require_int_scalar(r, what + ": reps");
  const int d = std::max<int>(x_in.ndim(), static_cast<int>(reps.size()));
  // x with leading broadcastable dims up to d; reps padded with 1s on the left.
  std::vector<int> pad;
  for (int i = 0; i < d - x_in.ndim(); ++i) pad.push_back(-1);
  for (int i = 0; i < x_in.ndim(); ++i) pad.push_back(i);
  Var x = x_in.dimshuffle(pad);
  std::vector<Var> r(d - reps.size(), lit64(1));
  for (auto& e : reps) r.push_back(i64(e));
  // (1, n0, 1, n1, ...) broadcast to (r0, n0, r1, n1, ...), then (r0*n0, r1*n1, ...).
  std::vector<int> interleave;
  std::vector<Var> big, merged;
  for (int i = 0; i < d; ++i) {
    interleave.push_back(-1);
    interleave.push_back(i);
    Var n = dim_of(x, i);
    big.push_back(r[i]);
    big.push_back(n);
    merged.push_back(r[i] * n);
  }
  if (d == 0) return x;
  Var y = alloc(x.dimshuffle(interleave), big);
  return reshape(y, stack(merged));
}

Var repeat(const Var& x_in, const Var& repeats, std::optional<int> axis_in) {
  need(x_in, "repeat");
  need(repeats, "repeat");
  const std::string what = "repeat(" + label(x_in) + ", " + label(repeats) +
                           (axis_in ? ", axis=" + std::to_string(*axis_in) : std::string()) + ")";
  if (!is_integer(repeats.dtype()) || repeats.ndim() > 1)
    throw TypeError(what + ": repeats " + repeats.type_str() + " must be an integer scalar or vector");
  Var x = axis_in ? x_in : x_in.flatten(1);
  const int axis = norm_axis(axis_in.value_or(0), x.ndim(), what);
  if (repeats.node()->kind == graph::VarKind::Constant) {  // constant counts: checked now
    const Array c = repeats.node()->constant.astype(DType::Int64);
    const int64_t* v = c.data<int64_t>();
    int64_t total = 0;
    for (int64_t i = 0; i < c.size(); ++i) {
      if (v[i] < 0) throw ValueError(what + ": repeats may not contain negative values, got " + std::to_string(v[i]));
      if (__builtin_add_overflow(total, v[i], &total))
        throw ShapeError(what + ": the counts sum past the largest possible array (2**63 - 1 bytes)");
    }
    const int64_t n = x.static_shape()[axis];
    if (repeats.ndim() == 1 && n >= 0 && c.size() != n)
      throw ShapeError(what + ": repeats must have one count per element along axis " + std::to_string(axis) +
                       ", got " + std::to_string(c.size()) + " counts for " + std::to_string(n) + " elements");
  }
  if (repeats.ndim() == 0) {
    // Insert a dim after `axis`, broadcast it to `repeats`, merge it into `axis`.
    std::vector<int> pattern;
    std::vector<Var> big, merged;
    for (int i = 0; i < x.ndim(); ++i) {
      pattern.push_back(i);
      Var n = dim_of(x, i);
      big.push_back(n);
      if (i == axis) {
        pattern.push_back(-1);
        big.push_back(i64(repeats));
        merged.push_back(n * i64(repeats));
      } else {
        merged.push_back(n);
      }
    }
    return reshape(alloc(x.dimshuffle(pattern), big), stack(merged));
  }
  // One count per element along `axis`: output position t takes element
  // #{j : cumsum(repeats)[j] <= t}, an index vector of length sum(repeats). The counts are
  // checked before any size is computed from them: one per element, none negative, and a sum
  // that fits (summed in float64, which cannot wrap: a sum of 2**62 or more, refused, would be
  // too big anyway, as would the int64 index vector of its length).
  const std::string r = label(repeats);
  Var counts = i64(repeats);
  const Var n = dim_of(x, axis), len = counts.shape()[{Index(0)}];
  counts = Var(ops::assert_op(counts.node(), {eq(len, n).node()},
                              what + ": repeats must have one count per element along axis " + std::to_string(axis),
                              {{"len(" + r + ")", len.node()}, {"the axis' length", n.node()}}, ops::AssertError::Shape));
  counts = Var(ops::assert_op(counts.node(), {all(counts >= 0).node()}, what + ": repeats may not contain negative values",
                              {{"min(" + r + ")", min(concatenate({counts, stack({lit64(0)})}, 0)).node()}}));
  const Var total = sum(cast(counts, DType::Float64));
  counts = Var(ops::assert_op(counts.node(), {lt(total, as_var(0x1p62)).node()},
                              what + ": the counts sum past the largest possible array (2**63 - 1 bytes)",
                              {{"sum(" + r + ")", total.node()}}, ops::AssertError::Shape));
  Var ends = cumsum(counts);
  Var t = arange(sum(counts)).dimshuffle({0, -1});
  Var idx = sum(cast(le(ends.dimshuffle({-1, 0}), t), DType::Int64), 1);
  return take(x, idx, axis);
}

Var linspace(const ScalarArg& start, const ScalarArg& stop, int64_t num, bool endpoint) {
  const std::string what = "linspace(" + label(start) + ", " + label(stop) + ", num=" + std::to_string(num) + ")";
  if (start.ndim() != 0 || stop.ndim() != 0) throw TypeError(what + ": start and stop must be scalars");
  if (num < 0) throw ValueError(what + ": num must be non-negative");
  // The dtype true_div gives start and stop: their promoted float dtype (integers widen,
  // Python-literal bounds floatX).
  const DType dt = true_div(start, stop).dtype();
  Var lo = cast(start, dt);
  Var hi = cast(stop, dt);
  const int64_t div = endpoint ? num - 1 : num;
  Var i = cast(arange(lit64(num)), dt);
  if (div <= 0) return lo + i * (hi - lo);  // num 0 or 1: [] or [start]
  Var y = lo + i * ((hi - lo) / static_cast<double>(div));
  if (!endpoint) return y;
  return switch_(eq(arange(lit64(num)), lit64(num - 1)), hi, y);  // the last value is stop exactly (numpy)
}

Var squeeze(const Var& x, std::optional<std::vector<int>> axes) {
  need(x, "squeeze");
  const auto bc = x.broadcastable();
  std::vector<bool> drop(x.ndim(), false);
  if (!axes) {
    drop = bc;
  } else {
    for (int a : *axes) {
      const std::string what = "squeeze(" + label(x) + ", axis=" + std::to_string(a) + ")";
      const int d = norm_axis(a, x.ndim(), what);
      if (!bc[d])
        throw ValueError(what + ": dim " + std::to_string(d) + " of " + x.type_str() +
                         " is not broadcastable (use addbroadcast first if it is 1)");
      drop[d] = true;
    }
  }
  std::vector<int> pattern;
  for (int d = 0; d < x.ndim(); ++d)
    if (!drop[d]) pattern.push_back(d);
  return x.dimshuffle(pattern);
}

Var addbroadcast(const Var& x, const std::vector<int>& axes) {
  need(x, "addbroadcast");
  std::string what = "addbroadcast(" + label(x);
  for (int a : axes) what += ", " + std::to_string(a);
  what += ")";
  std::vector<bool> make(x.ndim(), false);
  for (int a : axes) make[norm_axis(a, x.ndim(), what)] = true;
  std::vector<graph::VarPtr> checks;
  std::vector<Index> take_first;
  std::vector<int> pattern;
  const auto bc = x.broadcastable();
  for (int d = 0, kept = 0; d < x.ndim(); ++d) {
    if (make[d] && !bc[d]) {
      checks.push_back(eq(x.shape()[{Index(d)}], lit64(1)).node());
      take_first.push_back(Index(0));
      pattern.push_back(-1);
    } else {
      take_first.push_back(Index(Slice{}));
      pattern.push_back(kept++);
    }
  }
  if (checks.empty()) return x;
  Var checked(ops::assert_op(x.node(), checks, what + ": the dims made broadcastable must have size 1"));
  return checked[take_first].dimshuffle(pattern);
}

Var unbroadcast(const Var& x, const std::vector<int>& axes) {
  need(x, "unbroadcast");
  std::string what = "unbroadcast(" + label(x);
  for (int a : axes) what += ", " + std::to_string(a);
  what += ")";
  std::vector<bool> make(x.ndim(), false);
  for (int a : axes) make[norm_axis(a, x.ndim(), what)] = true;
  const auto bc = x.broadcastable();
  bool any_change = false;
  std::vector<Var> sizes;
  for (int d = 0; d < x.ndim(); ++d) {
    // x.shape[d] (a Shape node, not a constant) leaves the dim's size unknown to the type.
    if (make[d] && bc[d]) {
      sizes.push_back(x.shape()[{Index(d)}]);
      any_change = true;
    } else {
      sizes.push_back(dim_of(x, d));
    }
  }
  return any_change ? alloc(x, sizes) : x;
}

Var patternbroadcast(const Var& x, const std::vector<bool>& pattern) {
  need(x, "patternbroadcast");
  if (static_cast<int>(pattern.size()) != x.ndim())
    throw ValueError("patternbroadcast(" + label(x) + "): the pattern has " + std::to_string(pattern.size()) +
                     " entries for " + x.type_str());
  std::vector<int> add, remove;
  const auto bc = x.broadcastable();
  for (int d = 0; d < x.ndim(); ++d) {
    if (pattern[d] && !bc[d]) add.push_back(d);
    if (!pattern[d] && bc[d]) remove.push_back(d);
  }
  Var y = add.empty() ? x : addbroadcast(x, add);
  return remove.empty() ? y : unbroadcast(y, remove);
}

Var specify_shape(const Var& x, const std::vector<ScalarArg>& shape) {
  need(x, "specify_shape");
  std::string what = "specify_shape(" + label(x) + ", (";
  for (size_t i = 0; i < shape.size(); ++i) what += (i ? ", " : "") + label(shape[i]);
  what += "))";
  if (static_cast<int>(shape.size()) != x.ndim())
    throw ValueError(what + ": " + std::to_string(shape.size()) + " sizes for " + x.type_str());
  std::vector<graph::VarPtr> checks;
  std::vector<int64_t> fixed;
  const auto st = x.static_shape();
  for (int d = 0; d < x.ndim(); ++d) {
    require_int_scalar(shape[d], what);
    std::optional<int64_t> known;
    if (shape[d].node()->kind == graph::VarKind::Constant) known = shape[d].node()->constant.to_vector<int64_t>()[0];
    if (known && st[d] >= 0 && *known != st[d])
      throw ShapeError(what + ": dim " + std::to_string(d) + " of " + x.type_str() + " is not " + std::to_string(*known));
    if (known && *known < 0) throw ValueError(what + ": negative size " + std::to_string(*known));
    if (!(known && st[d] == *known)) checks.push_back(eq(x.shape()[{Index(d)}], i64(shape[d])).node());
    fixed.push_back(known ? *known : -1);
  }
  if (checks.empty()) return x;
  Var checked(ops::assert_op(x.node(), checks, what + ": the shape differs"));
  // Integer sizes become static: a reshape to the (checked) shape, a view.
  if (std::all_of(fixed.begin(), fixed.end(), [](int64_t n) { return n >= 0; })) return reshape(checked, fixed);
  return checked;
}

Var roll(const Var& x, const ScalarArg& shift, std::optional<int> axis) {
  need(x, "roll");
  const std::string what = "roll(" + label(x) + ", " + label(shift) +
                           (axis ? ", axis=" + std::to_string(*axis) : std::string()) + ")";
  require_int_scalar(shift, what + ": shift");
  if (!axis) {
    Var flat = x.flatten(1);
    Var r = roll(flat, shift, 0);
    return x.ndim() == 1 ? r : reshape(r, x.shape());
  }
  const int a = norm_axis(*axis, x.ndim(), what);
  Var n = dim_of(x, a);
  // s in [0, n) (numpy's shift mod n; 0 for an empty axis), then [x[n-s:], x[:n-s]].
  Var s = mod(i64(shift), maximum(n, lit64(1)));
  Var cut = n - s;
  std::vector<Index> tail(x.ndim(), Index(Slice{})), head(x.ndim(), Index(Slice{}));
  tail[a] = Index(Slice{Bound(cut), Bound(), Bound()});
  head[a] = Index(Slice{Bound(), Bound(cut), Bound()});
  return concatenate({x[tail], x[head]}, a);
}

Var diagonal(const Var& x, int offset, int axis1, int axis2) {
  need(x, "diagonal");
  const std::string what = "diagonal(" + label(x) + ", offset=" + std::to_string(offset) + ", axis1=" +
                           std::to_string(axis1) + ", axis2=" + std::to_string(axis2) + ")";
  if (x.ndim() < 2) throw ValueError(what + ": needs at least 2 dims, got " + x.type_str());
  const int a1 = norm_axis(axis1, x.ndim(), what), a2 = norm_axis(axis2, x.ndim(), what);
  if (a1 == a2) throw ValueError(what + ": axis1 and axis2 must differ");
  std::vector<int> perm;
  for (int d = 0; d < x.ndim(); ++d)
    if (d != a1 && d != a2) perm.push_back(d);
  perm.push_back(a1);
  perm.push_back(a2);
  Var t = x.transpose(perm);
  const int nd = t.ndim();
  Var r = dim_of(t, nd - 2), c = dim_of(t, nd - 1);
  // Element (i, i + offset) of each (r, c) plane is flat[start + i * (c + 1)].
  Var len = offset >= 0 ? minimum(r, c - offset) : minimum(r + offset, c);
  len = maximum(len, lit64(0));
  Var start = offset >= 0 ? lit64(offset) : lit64(-offset) * c;
  Var idx = start + arange(len) * (c + 1);
  return take(t.flatten(nd - 1), idx, nd - 2);
}

Var diag(const Var& x, int k) {
  need(x, "diag");
  if (x.ndim() == 2) return diagonal(x, k, 0, 1);
  if (x.ndim() != 1)
    throw ValueError("diag(" + label(x) + ", k=" + std::to_string(k) + "): needs a vector or a matrix, got " +
                     x.type_str());
  // A square matrix of side len + |k| with x on diagonal k: row r holds padded[r] at column r + k.
  const int64_t ak = std::llabs(static_cast<long long>(k));
  Var zeros = alloc(cast(constant(Array::scalar(0.0, DType::Float64)), x.dtype()), std::vector<int64_t>{ak});
  Var padded = k >= 0 ? concatenate({x, zeros}, 0) : concatenate({zeros, x}, 0);
  Var n = dim_of(x, 0) + ak;
  Var on = eq(arange(n).dimshuffle({0, -1}) + static_cast<int64_t>(k), arange(n).dimshuffle({-1, 0}));
  return switch_(on, padded.dimshuffle({0, -1}), cast(constant(Array::scalar(0.0, DType::Float64)), x.dtype()));
}

Var sort(const Var& x, std::optional<int> axis) { return Var(ops::sort(need(x, "sort"), axis)); }
Var argsort(const Var& x, std::optional<int> axis) { return Var(ops::argsort(need(x, "argsort"), axis)); }

Var flatnonzero(const Var& x) { return Var(ops::flatnonzero(need(x, "flatnonzero"))); }

std::vector<Var> nonzero(const Var& x) {
  Var flat = flatnonzero(x);
  // Coordinates of row-major positions: (p / prod(shape[d+1:])) % shape[d].
  std::vector<Var> out;
  Var stride = lit64(1);
  for (int d = x.ndim() - 1; d >= 0; --d) {
    Var n = dim_of(x, d);
    out.insert(out.begin(), mod(floor_div(flat, stride), n));
    stride = stride * n;
  }
  return out;
}

Var nonzero_values(const Var& x) { return take(x.flatten(1), flatnonzero(x), 0); }

}  // namespace theon::tensor
