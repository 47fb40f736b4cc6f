// Harness cases for shape and indexing ops (reshape, concatenate, subtensor, ...). The
// references gather and scatter elements by explicit per-dim index lists.
#include "harness.hpp"

#include <cmath>
#include <numeric>
#include <optional>

namespace theon::testing {
namespace {

using D = DType;
const std::vector<D> kAll = {D::Float32, D::Float64, D::Int8, D::Int16, D::Int32, D::Int64, D::UInt8, D::Bool};

// ---- reference helpers ----

Ref with_shape(Ref r, Shape s) {
  r.shape = std::move(s);
  return r;
}

int64_t flat_index(const Shape& shape, const std::vector<int64_t>& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}

// Calls fn(position) for every multi-index of `shape`, row-major.
void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& fn) {
  if (shape_size(shape) == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  while (true) {
    fn(idx);
    int d = static_cast<int>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// One index of a reference expression: an integer or start:stop:step (Python semantics).
struct RIdx {
  bool slice = true;
  int64_t i = 0;
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};
RIdx at(int64_t i) { return {false, i, {}, {}, 1}; }
RIdx sl(std::optional<int64_t> a, std::optional<int64_t> b, int64_t step = 1) { return {true, 0, a, b, step}; }

// The element indices a Python slice visits, by walking range() the language defines.
std::vector<int64_t> visit(int64_t n, const RIdx& s) {
  if (!s.slice) return {s.i < 0 ? s.i + n : s.i};
  std::vector<int64_t> out;
  auto norm = [&](std::optional<int64_t> v, int64_t dflt, int64_t lo, int64_t hi) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    return std::min(std::max(x, lo), hi);
  };
  if (s.step > 0) {
    for (int64_t i = norm(s.start, 0, 0, n), e = norm(s.stop, n, 0, n); i < e; i += s.step) out.push_back(i);
  } else {
    for (int64_t i = norm(s.start, n - 1, -1, n - 1), e = norm(s.stop, -1, -1, n - 1); i > e; i += s.step)
      out.push_back(i);
  }
  return out;
}

struct Selection {
  std::vector<std::vector<int64_t>> lists;  // per dim of x
  std::vector<bool> drop;
  Shape region;  // the shape of x[...]
};

Selection select(const Shape& x, std::vector<RIdx> idx) {
  idx.resize(x.size(), sl({}, {}));
  Selection s;
  for (size_t d = 0; d < x.size(); ++d) {
    s.lists.push_back(visit(x[d], idx[d]));
    s.drop.push_back(!idx[d].slice);
    if (idx[d].slice) s.region.push_back(static_cast<int64_t>(s.lists.back().size()));
  }
  return s;
}

// fn(region position, x flat index) for each element of the selection.
void walk(const Shape& x, const Selection& s, const std::function<void(const std::vector<int64_t>&, int64_t)>& fn) {
  for_each_index(s.region, [&](const std::vector<int64_t>& r) {
    std::vector<int64_t> xi;
    for (size_t d = 0, k = 0; d < x.size(); ++d) xi.push_back(s.lists[d][s.drop[d] ? 0 : r[k++]]);
    fn(r, flat_index(x, xi));
  });
}

Ref gather(const Ref& x, const Selection& s) {
  Ref out;
  out.dtype = x.dtype;
  out.shape = s.region;
  walk(x.shape, s, [&](const std::vector<int64_t>&, int64_t f) { out.v.push_back(x.v[f]); });
  return out;
}

// y's element for a region position, broadcasting y NumPy-style.
double broadcast_at(const Ref& y, const Shape& region, const std::vector<int64_t>& r) {
  std::vector<int64_t> yi;
  for (int d = 0; d < y.ndim(); ++d) yi.push_back(y.shape[d] == 1 ? 0 : r[region.size() - y.ndim() + d]);
  return y.v[flat_index(y.shape, yi)];
}

Ref scatter(const Ref& x, const Selection& s, const Ref& y, bool inc) {
  Ref out = x;
  walk(x.shape, s, [&](const std::vector<int64_t>& r, int64_t f) {
    double v = broadcast_at(y, s.region, r);
    out.v[f] = to_dtype(inc ? out.v[f] + v : v, x.dtype);
  });
  return out;
}

// A take along `axis` as a selection with a repeated-index list.
Selection take_selection(const Shape& x, const Ref& idx, int axis) {
  Selection s = select(x, {});
  s.lists[axis].clear();
  for (double v : idx.v) s.lists[axis].push_back(v < 0 ? int64_t(v) + x[axis] : int64_t(v));
  s.region[axis] = idx.size();
  return s;
}

Ref concat_ref(const std::vector<Ref>& xs, int axis, D dtype) {
  Shape shape = xs[0].shape;
  shape[axis] = 0;
  for (auto& x : xs) shape[axis] += x.shape[axis];
  Ref out;
  out.dtype = dtype;
  out.shape = shape;
  out.v.assign(shape_size(shape), 0);
  int64_t at0 = 0;
  for (auto& x : xs) {
    for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
      std::vector<int64_t> o = i;
      o[axis] += at0;
      out.v[flat_index(shape, o)] = to_dtype(x.v[flat_index(x.shape, i)], dtype);
    });
    at0 += x.shape[axis];
  }
  return out;
}

Ref int_ref(Shape shape, std::vector<double> v) {
  Ref r;
  r.dtype = D::Int64;
  r.shape = std::move(shape);
  r.v = std::move(v);
  return r;
}

Case make(const std::string& op, const std::string& label, std::vector<D> dtypes, std::vector<std::vector<Shape>> shapes,
          std::function<Var(const std::vector<Var>&)> build, std::function<Ref(const std::vector<Ref>&)> reference) {
  Case c;
  c.op = op;
  c.label = label;
  c.dtypes = std::move(dtypes);
  c.shapes = std::move(shapes);
  c.build = std::move(build);
  c.reference = std::move(reference);
  c.rtol32 = c.atol32 = c.rtol64 = c.atol64 = 0;  // data movement is exact
  return c;
}

// Inputs: x of `dtype` per the first shape, then int64 arrays built by `extra`.
std::function<std::vector<Array>(D, const std::vector<Shape>&, uint64_t)> with_ints(
    std::function<std::vector<Array>(const std::vector<Shape>&)> extra) {
  return [extra](D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
    std::vector<Array> in = {random_array(dtype, shapes[0], Domain::Normal, seed)};
    for (auto& a : extra(shapes)) in.push_back(a);
    return in;
  };
}

Array i64(std::vector<int64_t> v, std::optional<Shape> shape = std::nullopt) { return Array::from_vector(v, shape); }

void add_reshape_cases(std::vector<Case>& cases) {
  cases.push_back(make("reshape", "all", kAll, {{{3, 4}}, {{0, 5}}, {{1}}, {{}}, {{2, 3, 2}}},
                       [](auto& v) { return tensor::reshape(v[0], std::vector<int64_t>{-1}); },
                       [](auto& r) { return with_shape(r[0], {r[0].size()}); }));
  cases.push_back(make("reshape", "two_dims", {D::Float32, D::Int32, D::Bool}, {{{4, 3}}, {{2, 0}}, {{2, 1, 3}}},
                       [](auto& v) { return v[0].reshape({2, -1}); },
                       [](auto& r) { return with_shape(r[0], {2, r[0].size() / 2}); }));
  // The symbolic form: the target shape is computed at run time (size(x), 1).
  cases.push_back(make("reshape", "symbolic", {D::Float64, D::Int8}, {{{3, 4}}, {{0, 2}}, {{1, 1}}},
                       [](auto& v) { return tensor::reshape(v[0], tensor::stack({tensor::size(v[0]), as_var(1)})); },
                       [](auto& r) { return with_shape(r[0], {r[0].size(), 1}); }));
  cases.push_back(make("flatten", "ndim2", kAll, {{{2, 3, 4}}, {{0, 3, 2}}, {{1, 1, 1}}, {{3, 2}}},
                       [](auto& v) { return tensor::flatten(v[0], 2); },
                       [](auto& r) {
                         const Shape& s = r[0].shape;
                         return with_shape(r[0], {s[0], shape_size(Shape(s.begin() + 1, s.end()))});
                       }));
  cases.push_back(make("flatten", "ndim1", {D::Float32, D::UInt8}, {{{2, 3, 4}}, {{0}}, {{}}},
                       [](auto& v) { return v[0].flatten(); },
                       [](auto& r) { return with_shape(r[0], {r[0].size()}); }));
  cases.push_back(make("broadcast_to", "", kAll, {{{3}}, {{1}}, {{2, 1}}, {{1, 3}}, {{2, 3}}},
                       [](auto& v) { return tensor::broadcast_to(v[0], {2, 3}); },
                       [](auto& r) {
                         Ref out = r[0];
                         out.shape = {2, 3};
                         out.v.clear();
                         for_each_index({2, 3}, [&](auto& i) { out.v.push_back(broadcast_at(r[0], {2, 3}, i)); });
                         return out;
                       }));
  cases.push_back(make("broadcast_to", "empty", {D::Float32}, {{{0}}, {{1}}},
                       [](auto& v) { return tensor::broadcast_to(v[0], {4, 0}); },
                       [](auto& r) { return with_shape(Ref{r[0].dtype, {}, {}}, {4, 0}); }));
}

void add_join_cases(std::vector<Case>& cases) {
  cases.push_back(make("concatenate", "axis1", kAll, {{{2, 3}, {2, 0}, {2, 1}}, {{0, 2}, {0, 1}, {0, 0}}, {{1, 1}, {1, 2}, {1, 1}}},
                       [](auto& v) { return tensor::concatenate({v[0], v[1], v[2]}, 1); },
                       [](auto& r) { return concat_ref(r, 1, r[0].dtype); }));
  cases.push_back(make("concatenate", "axis0", {D::Float64, D::Int16}, {{{2, 3}, {4, 3}}, {{0, 3}, {1, 3}}, {{5}, {0}}},
                       [](auto& v) { return tensor::concatenate({v[0], v[1]}, -v[0].ndim()); },
                       [](auto& r) { return concat_ref(r, 0, r[0].dtype); }));
  Case mixed = make("concatenate", "promote", {D::Int32}, {{{2, 3}, {2, 2}}},
                    [](auto& v) { return tensor::concatenate({v[0], v[1]}, 1); },
                    [](auto& r) { return concat_ref(r, 1, D::Float64); });  // int32 + float32 -> float64
  mixed.make_inputs = [](D, const std::vector<Shape>& s, uint64_t seed) {
    return std::vector<Array>{random_array(D::Int32, s[0], Domain::Normal, seed),
                              random_array(D::Float32, s[1], Domain::Normal, seed + 1)};
  };
  cases.push_back(mixed);
  auto stack_ref = [](int axis) {
    return [axis](const std::vector<Ref>& r) {
      std::vector<Ref> ex;
      for (auto x : r) {
        Shape s = x.shape;
        s.insert(s.begin() + (axis < 0 ? axis + x.ndim() + 1 : axis), 1);
        ex.push_back(with_shape(x, s));
      }
      return concat_ref(ex, axis < 0 ? axis + r[0].ndim() + 1 : axis, r[0].dtype);
    };
  };
  cases.push_back(make("stack", "axis0", kAll, {{{2, 3}, {2, 3}, {2, 3}}, {{0, 2}, {0, 2}, {0, 2}}, {{}, {}, {}}},
                       [](auto& v) { return tensor::stack({v[0], v[1], v[2]}); }, stack_ref(0)));
  cases.push_back(make("stack", "last", {D::Float32, D::Int64}, {{{2, 3}, {2, 3}}, {{1, 1}, {1, 1}}},
                       [](auto& v) { return tensor::stack({v[0], v[1]}, -1); }, stack_ref(-1)));
}

void add_shape_value_cases(std::vector<Case>& cases) {
  auto dims = [](const Ref& x) { return std::vector<double>(x.shape.begin(), x.shape.end()); };
  cases.push_back(make("shape", "", {D::Float32, D::Bool, D::Int8}, {{{2, 3}}, {{0, 4}}, {{}}, {{1, 5, 1}}},
                       [](auto& v) { return v[0].shape(); },
                       [=](auto& r) { return int_ref({r[0].ndim()}, dims(r[0])); }));
  cases.push_back(make("size", "", {D::Float64, D::UInt8}, {{{2, 3}}, {{0, 4}}, {{}}, {{7}}},
                       [](auto& v) { return tensor::size(v[0]); },
                       [](auto& r) { return int_ref({}, {double(r[0].size())}); }));
  Case al = make("alloc", "symbolic", kAll, {{{}, {}, {}}, {{3}, {}, {}}, {{1}, {}, {}}},
                 [](auto& v) { return tensor::alloc(v[0], {v[1], v[2]}); },
                 [](auto& r) {
                   Shape s = {int64_t(r[1].v[0]), int64_t(r[2].v[0])};
                   Ref out{r[0].dtype, s, {}};
                   for_each_index(s, [&](auto& i) { out.v.push_back(broadcast_at(r[0], s, i)); });
                   return out;
                 });
  al.make_inputs = [](D dtype, const std::vector<Shape>& s, uint64_t seed) {
    int64_t cols = s[0].empty() || s[0][0] == 1 ? 4 : s[0][0];
    return std::vector<Array>{random_array(dtype, s[0], Domain::Normal, seed), Array::scalar(2, D::Int64),
                              Array::scalar(double(cols), D::Int32)};
  };
  cases.push_back(al);
  cases.push_back(make("alloc", "static_empty", {D::Float32, D::Int32}, {{{}}},
                       [](auto& v) { return tensor::alloc(v[0], std::vector<int64_t>{0, 3}); },
                       [](auto& r) { return Ref{r[0].dtype, {0, 3}, {}}; }));
  auto filled = [](double value, D dtype) {
    return [=](const std::vector<Ref>& r) {
      return Ref{dtype, r[0].shape, std::vector<double>(r[0].size(), value)};
    };
  };
  cases.push_back(make("zeros_like", "", kAll, {{{2, 3}}, {{0, 2}}, {{}}, {{1}}},
                       [](auto& v) { return tensor::zeros_like(v[0]); },
                       [=](auto& r) { return filled(0, r[0].dtype)(r); }));
  cases.push_back(make("ones_like", "", kAll, {{{2, 3}}, {{0, 2}}, {{}}, {{1, 1}}},
                       [](auto& v) { return tensor::ones_like(v[0]); },
                       [=](auto& r) { return filled(1, r[0].dtype)(r); }));
  cases.push_back(make("ones_like", "dtype", {D::Int8}, {{{2, 3}}},
                       [](auto& v) { return tensor::ones_like(v[0], D::Float64); }, filled(1, D::Float64)));
}

// numpy.arange: length ceil((stop - start) / step) (at least 0), out[i] = start + i * step;
// integer inputs give int64, float inputs their dtype.
Ref arange_ref(double start, double stop, double step, D dtype) {
  const double n = std::max(0.0, std::ceil((stop - start) / step));
  Ref r{dtype, {int64_t(n)}, {}};
  for (int64_t i = 0; i < int64_t(n); ++i) r.v.push_back(to_dtype(start + double(i) * step, dtype));
  return r;
}

void add_arange_cases(std::vector<Case>& cases) {
  struct Bounds {
    std::string label;
    double start, stop, step;
    bool integral;
  };
  const std::vector<Bounds> variants = {
      {"up", 0, 10, 1, true},           {"stride3", 2, 11, 3, true},       {"down", 10, -1, -2, true},
      {"empty", 5, 5, 1, true},         {"backwards_empty", 7, 3, 1, true}, {"quarters", -3.5, 4, 0.75, false},
      {"down_float", 1, 0, -0.125, false}, {"tenths", 0, 1, 0.1, false}};
  for (const Bounds& b : variants) {
    Case c = make("arange", b.label,
                  b.integral ? std::vector<D>{D::Int64, D::Int32, D::Int8, D::Float64, D::Float32}
                             : std::vector<D>{D::Float64, D::Float32},
                  {{{}, {}, {}}}, [](auto& v) { return tensor::arange(v[0], v[1], v[2]); },
                  [](auto& r) {
                    const D out = is_float(r[0].dtype) ? r[0].dtype : D::Int64;
                    return arange_ref(r[0].v[0], r[1].v[0], r[2].v[0], out);
                  });
    c.make_inputs = [b](D dtype, const std::vector<Shape>&, uint64_t) {
      return std::vector<Array>{Array::scalar(b.start, dtype), Array::scalar(b.stop, dtype), Array::scalar(b.step, dtype)};
    };
    c.vary_layout = false;
    c.rtol32 = c.rtol64 = 1e-15;  // the kernels compute start + i * step in double, as the reference
    // Theano's gradient (start: sum(g), step: sum(g * arange(n))), the same for every
    // variant: one row, at float64 points in the positive domain.
    c.check_grad = b.label == "quarters";
    c.domain = Domain::Positive;
    cases.push_back(c);
  }
  // One argument (stop), Python-literal bounds (weak: the float dtype of the symbolic one), an
  // explicit dtype.
  cases.push_back(make("arange", "stop_only", {D::Int64, D::Int32, D::UInt8}, {{{}}},
                       [](auto& v) { return tensor::arange(v[0]); },
                       [](auto& r) { return arange_ref(0, r[0].v[0], 1, D::Int64); }));
  cases.back().make_inputs = [](D dtype, const std::vector<Shape>&, uint64_t) {
    return std::vector<Array>{Array::scalar(7, dtype)};
  };
  cases.push_back(make("arange", "literal_floats", {D::Float32, D::Float64}, {{{}}},
                       [](auto& v) { return tensor::arange(0.5, v[0], 0.25); },
                       [](auto& r) { return arange_ref(0.5, r[0].v[0], 0.25, r[0].dtype); }));
  cases.back().make_inputs = [](D dtype, const std::vector<Shape>&, uint64_t) {
    return std::vector<Array>{Array::scalar(3.1, dtype)};
  };
  cases.push_back(make("arange", "dtype", {D::Int32, D::Float64}, {{{}, {}}},
                       [](auto& v) { return tensor::arange(v[0], v[1], 2, D::Float32); },
                       [](auto& r) { return arange_ref(r[0].v[0], r[1].v[0], 2, D::Float32); }));
  cases.back().make_inputs = [](D dtype, const std::vector<Shape>&, uint64_t) {
    return std::vector<Array>{Array::scalar(-4, dtype), Array::scalar(9, dtype)};
  };
}

void add_index_cases(std::vector<Case>& cases) {
  auto sub = [&](const std::string& label, std::vector<std::vector<Shape>> shapes, std::vector<Index> idx,
                 std::vector<RIdx> ridx) {
    cases.push_back(make("subtensor", label, kAll, std::move(shapes),
                         [idx](auto& v) { return tensor::subtensor(v[0], idx); },
                         [ridx](auto& r) { return gather(r[0], select(r[0].shape, ridx)); }));
  };
  sub("slice_int", {{{4, 3}}, {{2, 5}}, {{1, 1}}}, {Slice{1, std::nullopt, {}}, 0}, {sl(1, {}), at(0)});
  sub("negative", {{{4, 3}}, {{5, 2}}, {{0, 3}}}, {Slice{std::nullopt, std::nullopt, -1}, Slice{-1, 0, -2}},
      {sl({}, {}, -1), sl(-1, 0, -2)});
  sub("neg_int_step", {{{3, 4, 5}}, {{2, 1, 7}}}, {-1, Slice{}, Slice{1, -1, 3}}, {at(-1), sl({}, {}), sl(1, -1, 3)});
  sub("clamped", {{{6}}, {{0}}, {{1}}}, {Slice{-100, 100, 2}}, {sl(-100, 100, 2)});
  // Symbolic bounds: x[i:i+2, ::step] with i and step int64 scalars.
  Case sym = make("subtensor", "symbolic", kAll, {{{5, 4}}, {{3, 0}}, {{2, 1}}},
                  [](auto& v) { return v[0][{Slice{v[1], v[1] + 2, {}}, Slice{std::nullopt, std::nullopt, v[2]}}]; },
                  [](auto& r) {
                    return gather(r[0], select(r[0].shape, {sl(int64_t(r[1].v[0]), int64_t(r[1].v[0]) + 2),
                                                            sl({}, {}, int64_t(r[2].v[0]))}));
                  });
  sym.make_inputs = with_ints([](auto&) { return std::vector<Array>{i64({1}, Shape{}), i64({-2}, Shape{})}; });
  cases.push_back(sym);
  Case arr = make("subtensor", "array", kAll, {{{4, 3}}, {{2, 0}}},
                  [](auto& v) { return v[0][{Slice{}, v[1]}]; },
                  [](auto& r) {
                    Ref t = r[0];
                    return gather(t, take_selection(t.shape, r[1], 1));
                  });
  arr.make_inputs = [](D dtype, const std::vector<Shape>& s, uint64_t seed) {
    std::vector<int64_t> idx = s[0][1] == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{2, -1, 0, 0};
    return std::vector<Array>{random_array(dtype, s[0], Domain::Normal, seed), i64(idx)};
  };
  cases.push_back(arr);

  for (int axis : {0, 1}) {
    Case tk = make("take", "axis" + std::to_string(axis), kAll, {{{5, 3}}, {{2, 4}}, {{1, 1}}},
                   [axis](auto& v) { return tensor::take(v[0], v[1], axis); },
                   [axis](auto& r) { return gather(r[0], take_selection(r[0].shape, r[1], axis)); });
    tk.make_inputs = [axis](D dtype, const std::vector<Shape>& s, uint64_t seed) {
      const int64_t n = s[0][axis];
      return std::vector<Array>{random_array(dtype, s[0], Domain::Normal, seed), i64({n - 1, 0, -n, -1, 0})};
    };
    cases.push_back(tk);
  }
  Case tk2 = make("take", "matrix_indices", {D::Float32, D::Int32}, {{{5}}, {{3}}},
                  [](auto& v) { return tensor::take(v[0], v[1]); },
                  [](auto& r) { return with_shape(gather(r[0], take_selection(r[0].shape, r[1], 0)), {2, 2}); });
  tk2.make_inputs = with_ints([](auto&) { return std::vector<Array>{i64({0, 2, -1, 1}, Shape{2, 2})}; });
  cases.push_back(tk2);
  Case tk0 = make("take", "empty", {D::Float64}, {{{0, 3}}},
                  [](auto& v) { return tensor::take(v[0], v[1], 0); },
                  [](auto& r) { return Ref{r[0].dtype, {0, 3}, {}}; });
  tk0.make_inputs = with_ints([](auto&) { return std::vector<Array>{i64({})}; });
  cases.push_back(tk0);

  // Several integer arrays (broadcast together), adjacent: x[i, j] with i (4,) and j (2, 1).
  auto wrap = [](double v, int64_t n) { return v < 0 ? int64_t(v) + n : int64_t(v); };
  Case two = make("subtensor", "two_arrays", kAll, {{{4, 5, 3}}},
                  [](auto& v) { return v[0][{v[1], v[2]}]; },
                  [wrap](auto& r) {
                    const Ref &x = r[0], &i = r[1], &j = r[2];
                    Ref out{x.dtype, {2, 4, 3}, {}};
                    for (int a = 0; a < 2; ++a)
                      for (int b = 0; b < 4; ++b)
                        for (int c = 0; c < 3; ++c)
                          out.v.push_back(x.v[flat_index(x.shape, {wrap(i.v[b], 4), wrap(j.v[a], 5), c})]);
                    return out;
                  });
  two.make_inputs = with_ints([](auto&) { return std::vector<Array>{i64({0, 3, -1, 1}), i64({4, -5}, Shape{2, 1})}; });
  two.check_grad = true;
  cases.push_back(two);
  // Separated by a slice: NumPy puts the indexed dims first. x[i, :, j] -> (2, 5).
  Case apart = make("subtensor", "separated_arrays", kAll, {{{4, 5, 3}}},
                    [](auto& v) { return v[0][{v[1], Slice{}, v[2]}]; },
                    [wrap](auto& r) {
                      const Ref &x = r[0], &i = r[1], &j = r[2];
                      Ref out{x.dtype, {2, 5}, {}};
                      for (int b = 0; b < 2; ++b)
                        for (int c = 0; c < 5; ++c)
                          out.v.push_back(x.v[flat_index(x.shape, {wrap(i.v[b], 4), c, wrap(j.v[b], 3)})]);
                      return out;
                    });
  apart.make_inputs = with_ints([](auto&) { return std::vector<Array>{i64({-1, 2}), i64({0, 2})}; });
  apart.check_grad = true;
  cases.push_back(apart);

  for (bool inc : {false, true}) {
    const std::string op = inc ? "inc_subtensor" : "set_subtensor";
    auto write = [inc](const Var& s, const Var& y) { return inc ? tensor::inc_subtensor(s, y) : tensor::set_subtensor(s, y); };
    // Basic region x[1:3, ::-1] with a broadcast row y.
    cases.push_back(make(op, "basic", kAll, {{{4, 3}, {3}}, {{3, 2}, {1}}, {{0, 2}, {2}}, {{2, 0}, {0}}},
                         [write](auto& v) { return write(v[0][{Slice{1, 3, {}}, Slice{std::nullopt, std::nullopt, -1}}], v[1]); },
                         [inc](auto& r) { return scatter(r[0], select(r[0].shape, {sl(1, 3), sl({}, {}, -1)}), r[1], inc); }));
    cases.push_back(make(op, "int_index", {D::Float32, D::Int16}, {{{4, 3}, {}}, {{2, 5}, {5}}},
                         [write](auto& v) { return write(v[0][-1], v[1]); },
                         [inc](auto& r) { return scatter(r[0], select(r[0].shape, {at(-1)}), r[1], inc); }));
    // take regions with repeated indices: inc accumulates, set keeps the last.
    Case adv = make(op, "take_repeated", kAll, {{{4, 3}, {5, 3}}, {{3, 2}, {1}}},
                    [write](auto& v) { return write(tensor::take(v[0], v[2]), v[1]); },
                    [inc](auto& r) { return scatter(r[0], take_selection(r[0].shape, r[2], 0), r[1], inc); });
    adv.make_inputs = [](D dtype, const std::vector<Shape>& s, uint64_t seed) {
      return std::vector<Array>{random_array(dtype, s[0], Domain::Normal, seed),
                                random_array(dtype, s[1], Domain::Normal, seed + 1), i64({1, -1, 1, 0, 1})};
    };
    adv.float_atomics = inc;  // row 1 is incremented three times
    cases.push_back(adv);
    // x[1:, idx]: a slice and an array index; the result has x's shape.
    Case mixed = make(op, "slice_and_array", {D::Float64, D::Int32}, {{{3, 4}, {2, 3}}},
                      [write](auto& v) { return write(v[0][{Slice{1, std::nullopt, {}}, v[2]}], v[1]); },
                      [inc](auto& r) {
                        Selection s = take_selection(r[0].shape, r[2], 1);
                        s.lists[0] = {1, 2};
                        s.region[0] = 2;
                        return scatter(r[0], s, r[1], inc);
                      });
    mixed.make_inputs = [](D dtype, const std::vector<Shape>& s, uint64_t seed) {
      return std::vector<Array>{random_array(dtype, s[0], Domain::Normal, seed),
                                random_array(dtype, s[1], Domain::Normal, seed + 1), i64({3, 0, 3})};
    };
    mixed.float_atomics = inc;  // column 3 is incremented twice
    cases.push_back(mixed);
    // x[i, j] = y with repeated (i, j) pairs: inc accumulates, set keeps the last write.
    Case pairs = make(op, "two_arrays", kAll, {{{4, 3}, {5}}, {{4, 3}, {}}},
                      [write](auto& v) { return write(v[0][{v[2], v[3]}], v[1]); },
                      [inc](auto& r) {
                        Ref out = r[0];
                        const Ref &y = r[1], &i = r[2], &j = r[3];
                        for (int e = 0; e < 5; ++e) {
                          const int64_t f = flat_index(out.shape, {(int64_t(i.v[e]) + 4) % 4, (int64_t(j.v[e]) + 3) % 3});
                          const double v = y.v[y.size() == 1 ? 0 : e];
                          out.v[f] = to_dtype(inc ? out.v[f] + v : v, out.dtype);
                        }
                        return out;
                      });
    pairs.make_inputs = [](D dtype, const std::vector<Shape>& s, uint64_t seed) {
      return std::vector<Array>{random_array(dtype, s[0], Domain::Normal, seed),
                                random_array(dtype, s[1], Domain::Normal, seed + 1), i64({1, -1, 1, 0, 1}),
                                i64({0, 2, 0, 1, -3})};
    };
    pairs.float_atomics = inc;  // x[1, 0] is incremented three times
    pairs.check_grad = inc;     // set's y gradient is Theano's rule (every write), not the last write's
    cases.push_back(pairs);
  }
}

}  // namespace

void add_shape_cases(std::vector<Case>& cases) {
  add_reshape_cases(cases);
  add_join_cases(cases);
  add_shape_value_cases(cases);
  add_arange_cases(cases);
  add_index_cases(cases);
}

}  // namespace theon::testing
