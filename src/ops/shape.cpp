#include "ops/shape.hpp"
#include "ops/make_op.hpp"

#include "graph/user_names.hpp"
#include "ops/elemwise.hpp"
#include "ops/subtensor.hpp"
#include "util/checked_size.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

#include <algorithm>
#include <cstring>
#include <functional>

namespace theon::ops {

using graph::Apply;
using graph::TensorType;
using graph::VarPtr;

// ---- shared helpers ----

std::string label_type(const VarPtr& v) { return v->label() + " (" + v->type.str() + ")"; }

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
  return s + (dims.size() == 1 ? ",)" : ")");
}

int64_t scalar_int(const Array& a) {
  return detail::visit_dtype(a.dtype(), [&]<class T>() { return static_cast<int64_t>(a.data<T>()[0]); });
}

void require_int_scalar(const VarPtr& v, const std::string& what) {
  if (v->type.ndim() != 0 || !is_integer(v->type.dtype))
    throw TypeError(what + ": " + label_type(v) + " must be an integer scalar");
}

namespace {

// Runs fn(dst_ptr, src_ptr, n, dst_stride, src_stride) over inner rows of dst and src
// broadcast to dst's shape.
template <class T, class F>
void strided_rows(const Array& src, const Array& dst, F&& fn) {
  if (dst.size() == 0) return;
  Shape shape = dst.shape();
  std::vector<Strides> st = {dst.strides(), detail::broadcast_strides(src, shape)};
  detail::collapse_dims(shape, st);
  detail::OuterLoop loop(shape, {&st[0], &st[1]}, {0, 0});
  T* d = dst.data<T>();
  const T* s = src.data<T>();
  for (int64_t r = 0; r < loop.count(); ++r, loop.next())
    fn(d + loop.offsets()[0], s + loop.offsets()[1], shape.back(), st[0].back(), st[1].back());
}

}  // namespace

namespace {

// The broadcasts a bias makes (W2: a (1, n) row into (m, n); a (m, 1) column), into a
// contiguous dst: the generic row walk pays its per-row overhead on every short row.
// Returns false when the copy is not one of them.
bool copy_broadcast_fast(const Array& src, const Array& dst) {
  if (!dst.is_contiguous() || dst.size() == 0) return false;
  Shape shape = dst.shape();
  std::vector<Strides> st = {dst.strides(), detail::broadcast_strides(src, shape)};
  detail::collapse_dims(shape, st);
  if (shape.size() != 2) return false;
  const int64_t rows = shape[0], n = shape[1];
  const size_t item = static_cast<size_t>(itemsize(dst.dtype()));
  char* d = static_cast<char*>(dst.data());
  const char* s = static_cast<const char*>(src.data());
  if (st[1][0] == 0 && st[1][1] == 1) {  // a row: copy it once, then double the filled part
    const size_t row = static_cast<size_t>(n) * item, total = row * static_cast<size_t>(rows);
    std::memcpy(d, s, row);
    for (size_t done = row; done < total;) {
      const size_t take = std::min(done, total - done);
      std::memcpy(d + done, d, take);
      done += take;
    }
    return true;
  }
  if (st[1][1] == 0) {  // a column: each row is one value
    detail::visit_dtype(dst.dtype(), [&]<class T>() {
      const T* sv = src.data<T>();
      T* dv = dst.data<T>();
      for (int64_t r = 0; r < rows; ++r) std::fill_n(dv + r * n, n, sv[r * st[1][0]]);
    });
    return true;
  }
  return false;
}

}  // namespace

void copy_strided(const Array& src, const Array& dst) {
  if (copy_broadcast_fast(src, dst)) return;
  detail::visit_dtype(dst.dtype(), [&]<class T>() {
    strided_rows<T>(src, dst, [](T* d, const T* s, int64_t n, int64_t ds, int64_t ss) {
      if (ds == 1 && ss == 1) std::copy_n(s, n, d);  // memmove-fast
      else
        for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
    });
  });
}

void add_strided(const Array& src, const Array& dst) {
  detail::visit_dtype(dst.dtype(), [&]<class T>() {
    strided_rows<T>(src, dst, [](T* d, const T* s, int64_t n, int64_t ds, int64_t ss) {
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<T, bool>) d[i * ds] = d[i * ds] || s[i * ss];
        else if constexpr (std::is_integral_v<T>)  // wrap like NumPy, without signed overflow
          d[i * ds] = static_cast<T>(static_cast<uint64_t>(d[i * ds]) + static_cast<uint64_t>(s[i * ss]));
        else d[i * ds] += s[i * ss];
      }
    });
  });
}

// ---- Reshape ----

namespace {

// Resolves one -1 against `total` elements; ShapeError via `what` on any mismatch, and for a
// shape too big for `dtype` (the product of its given entries, as NumPy counts it).
// Without `in` (static dims unknown) only the entries themselves are checked.
Shape resolve_target(const std::function<std::string()>& what, const std::optional<Shape>& in,
                     const std::vector<int64_t>& want, DType dtype) {
  int unknown = -1;
  int64_t nonzero = 1;  // the product of the given non-zero entries, bounded as NumPy does
  bool zero = false;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == -1) {
      if (unknown >= 0)
        throw ShapeError(what() + ": can only specify one unknown dimension (-1) in " + shape_str(want));
      unknown = static_cast<int>(i);
    } else if (want[i] < 0) {
      throw ShapeError(what() + ": negative dimension " + std::to_string(want[i]) + " in " + shape_str(want));
    } else if (want[i] == 0) {
      zero = true;
    } else if (!detail::checked_mul(nonzero, want[i], nonzero)) {
      detail::throw_too_big(what(), want, dtype);
    }
  }
  if (int64_t bytes; !detail::checked_mul(nonzero, static_cast<int64_t>(itemsize(dtype)), bytes))
    detail::throw_too_big(what(), want, dtype);
  const int64_t known = zero ? 0 : nonzero;
  if (!in) return want;
  const int64_t total = detail::checked_size(*in, what);
  Shape out = want;
  if (unknown >= 0) {
    if (known == 0 || total % known != 0)
      throw ShapeError(what() + ": cannot reshape an array of shape " + shape_str(*in) + " (size " +
                       std::to_string(total) + ") into shape " + shape_str(want));
    out[unknown] = total / known;
  } else if (known != total) {
    throw ShapeError(what() + ": cannot reshape an array of shape " + shape_str(*in) + " (size " +
                     std::to_string(total) + ") into shape " + shape_str(want));
  }
  return out;
}

std::string reshape_what(const VarPtr& x, const std::string& shape_text) {
  return "reshape(" + x->label() + ", " + shape_text + ")";
}

bool all_known(const std::vector<int64_t>& dims) {
  for (int64_t d : dims)
    if (d < 0) return false;
  return true;
}

}  // namespace

std::string Reshape::render(const std::vector<std::string>& inputs, int) const {
  if (inputs.empty()) return Op::render(inputs);
  if (flatten_) return "flatten(" + inputs[0] + (ndim_ == 1 ? "" : ", " + std::to_string(ndim_)) + ")";
  return inputs.size() == 2 ? "reshape(" + inputs[0] + ", " + inputs[1] + ")" : Op::render(inputs);
}

graph::OpProps Reshape::props() const {
  graph::OpProps p = {{"ndim", std::to_string(ndim_)}};
  if (flatten_) p.push_back({"flatten", "True"});
  return p;
}

VarPtr reshape(const VarPtr& x, const std::vector<int64_t>& shape) {
  require_supported(x->type.dtype, "reshape(" + x->label() + ")");
  const std::string what = reshape_what(x, shape_str(shape)) + " of " + label_type(x);
  TensorType t = x->type;
  // Static errors where x's dims are known (and the -1 inferred); else the entries' checks.
  t.dims = resolve_target([&] { return what; },
                          all_known(x->type.dims) ? std::optional<Shape>(x->type.dims) : std::nullopt, shape,
                          x->type.dtype);
  Array value = Array::from_vector<int64_t>(shape, Shape{static_cast<int64_t>(shape.size())});
  return graph::make_output(std::make_shared<Reshape>(static_cast<int>(shape.size()), false),
                            {x, ops::constant(value)}, t);
}

VarPtr reshape(const VarPtr& x, const VarPtr& shape) {
  const std::string what = reshape_what(x, shape->label());
  require_supported(x->type.dtype, what);
  if (shape->type.ndim() != 1 || !is_integer(shape->type.dtype))
    throw TypeError(what + ": the shape " + label_type(shape) + " must be an integer vector");
  if (shape->type.dims[0] < 0)
    throw ShapeError(what + ": the length of the shape " + label_type(shape) +
                     " must be known statically (it gives the output rank); declare it with "
                     "tensor::tensor(DType::Int64, {n}) or use tensor::shape(...)");
  if (shape->kind == graph::VarKind::Constant) return reshape(x, shape->constant.to_vector<int64_t>());
  TensorType t = x->type;
  t.dims.assign(shape->type.dims[0], graph::kUnknownDim);
  return graph::make_output(std::make_shared<Reshape>(static_cast<int>(shape->type.dims[0]), false),
                            {x, cast(shape, DType::Int64)}, t);
}

VarPtr flatten(const VarPtr& x, int ndim) {
  const std::string what = "flatten(" + x->label() + ", ndim=" + std::to_string(ndim) + ")";
  require_supported(x->type.dtype, what);
  const int nd = x->type.ndim();
  if (ndim < 1 || ndim > std::max(nd, 1))
    throw ShapeError(what + ": ndim must be in [1, " + std::to_string(std::max(nd, 1)) + "] for " + label_type(x));
  TensorType t = x->type;
  t.dims.assign(x->type.dims.begin(), x->type.dims.begin() + (ndim - 1));
  int64_t rest = 1;
  for (int d = ndim - 1; d < nd; ++d) {
    if (rest < 0 || x->type.dims[d] < 0) rest = -1;
    else if (!detail::checked_mul(rest, x->type.dims[d], rest)) detail::throw_too_big(what, x->type.dims, std::nullopt);
  }
  t.dims.push_back(rest);
  return graph::make_output(std::make_shared<Reshape>(ndim, true), {x}, t);
}

std::vector<Shape> Reshape::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const Shape& in = inputs[0].shape();
  if (flatten_) {
    Shape out(in.begin(), in.begin() + (ndim_ - 1));
    int64_t rest = 1;
    for (size_t d = ndim_ - 1; d < in.size(); ++d)
      if (!detail::checked_mul(rest, in[d], rest)) detail::throw_too_big(graph::user_describe(node), in, std::nullopt);
    out.push_back(rest);
    return {out};
  }
  std::vector<int64_t> want = inputs[1].to_vector<int64_t>();
  return {resolve_target([&] { return graph::user_describe(node); }, in, want, inputs[0].dtype())};
}

void Reshape::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  outputs[0] = inputs[0].reshape(infer_shape(node, inputs)[0]);  // Array::reshape copies when not contiguous
}

// ---- BroadcastTo ----

graph::OpProps BroadcastTo::props() const { return {{"shape", shape_str(shape_)}}; }

namespace {
// NumPy's rule: align right; each input dim must be 1 or equal to the target.
bool broadcastable_to(const std::vector<int64_t>& in, const Shape& target) {
  if (in.size() > target.size()) return false;
  const size_t lead = target.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] >= 0 && in[d] != 1 && in[d] != target[lead + d]) return false;
  return true;
}
}  // namespace

VarPtr broadcast_to(const VarPtr& x, const std::vector<int64_t>& shape) {
  const std::string what = "broadcast_to(" + x->label() + ", " + shape_str(shape) + ")";
  require_supported(x->type.dtype, what);
  for (int64_t n : shape)
    if (n < 0) throw ShapeError(what + ": negative dimension in the target shape " + shape_str(shape));
  if (!broadcastable_to(x->type.dims, shape))
    throw ShapeError(what + ": cannot broadcast " + label_type(x) + " to shape " + shape_str(shape));
  detail::checked_nbytes(shape, x->type.dtype, what);
  TensorType t = x->type;
  t.dims = shape;
  return graph::make_output(std::make_shared<BroadcastTo>(shape), {x}, t);
}

std::vector<Shape> BroadcastTo::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  if (!broadcastable_to(inputs[0].shape(), shape_)) {
    const graph::UserValue u = graph::user_view(*node.input(0), inputs[0].shape());
    throw ShapeError(graph::user_describe(node) + ": cannot broadcast " + u.label + " of shape " + shape_str(u.shape) +
                     " to shape " + shape_str(shape_));
  }
  return {shape_};
}

void BroadcastTo::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  infer_shape(node, inputs);
  outputs[0] = inputs[0].broadcast_to(shape_);
}

// ---- Shape ----

VarPtr shape_of(const VarPtr& x) {
  TensorType t;
  t.dtype = DType::Int64;
  t.dims = {x->type.ndim()};
  return graph::make_output(std::make_shared<ShapeOf>(false), {x}, t);
}

VarPtr size_of(const VarPtr& x) {
  TensorType t;
  t.dtype = DType::Int64;
  return graph::make_output(std::make_shared<ShapeOf>(true), {x}, t);
}

std::vector<Shape> ShapeOf::infer_shape(const Apply&, const std::vector<Array>& inputs) const {
  if (size_) return {Shape{}};
  return {Shape{inputs[0].ndim()}};
}

void ShapeOf::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  int64_t* out = outputs[0].data<int64_t>();
  if (size_) *out = inputs[0].size();
  else
    for (int d = 0; d < inputs[0].ndim(); ++d) out[d] = inputs[0].shape()[d];
}

// ---- Alloc ----

VarPtr alloc(const VarPtr& value_in, const std::vector<VarPtr>& shape) {
  std::string what = "alloc(" + value_in->label();
  for (auto& s : shape) what += ", " + s->label();
  what += ")";
  require_supported(value_in->type.dtype, what);
  VarPtr value = value_in;
  if (value->weak) value = cast(value, result_type({{value->type.dtype, true}}, config().floatX));
  std::vector<VarPtr> inputs = {value};
  TensorType t;
  t.dtype = value->type.dtype;
  for (auto& s : shape) {
    require_int_scalar(s, what + ": size");
    int64_t n = graph::kUnknownDim;
    if (s->kind == graph::VarKind::Constant) {
      n = scalar_int(s->constant);
      if (n < 0) throw ShapeError(what + ": negative dimension " + std::to_string(n));
    }
    t.dims.push_back(n);
    inputs.push_back(cast(s, DType::Int64));
  }
  if (value->type.ndim() > static_cast<int>(shape.size()) ||
      (all_known(t.dims) && !broadcastable_to(value->type.dims, t.dims)))
    throw ShapeError(what + ": the value " + label_type(value) + " cannot be broadcast to shape " + dims_str(t.dims));
  if (all_known(t.dims)) detail::checked_nbytes(t.dims, t.dtype, what);
  return graph::make_output(std::make_shared<Alloc>(), inputs, t);
}

VarPtr fill_like(const VarPtr& x, double fill, std::optional<DType> dtype, const std::string& what) {
  const DType dt = dtype.value_or(x->type.dtype);
  require_supported(dt, what + "(" + x->label() + ")");
  std::vector<VarPtr> sizes;
  VarPtr shp;
  for (int d = 0; d < x->type.ndim(); ++d) {
    int64_t n = x->type.dims[d];
    if (n >= 0) {
      sizes.push_back(ops::constant(Array::scalar(static_cast<double>(n), DType::Int64)));
      continue;
    }
    // x.shape[d], as Theano builds it: the Shape vector indexed by d.
    if (!shp) shp = shape_of(x);
    sizes.push_back(subtensor(shp, {Index(static_cast<int64_t>(d))}));
  }
  return alloc(ops::constant(Array::scalar(fill, dt)), sizes);
}

std::vector<Shape> Alloc::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  Shape out;
  for (size_t i = 1; i < inputs.size(); ++i) {
    int64_t n = scalar_int(inputs[i]);
    if (n < 0)
      throw ShapeError(graph::user_describe(node) + ": negative dimension " + std::to_string(n) + " given by " +
                       graph::user_label(*node.input(static_cast<int>(i))));
    out.push_back(n);
  }
  if (!broadcastable_to(inputs[0].shape(), out)) {
    const graph::UserValue u = graph::user_view(*node.input(0), inputs[0].shape());
    throw ShapeError(graph::user_describe(node) + ": the value " + u.label + " of shape " + shape_str(u.shape) +
                     " cannot be broadcast to shape " + shape_str(out));
  }
  detail::checked_nbytes(out, node.output_raw(0)->type.dtype, [&] { return graph::user_describe(node); });
  return {out};
}

graph::Cost Alloc::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  // Reads the value and writes the output; the sizes are values, so only static dims count.
  graph::Cost c;
  const auto& dims = node.output_raw(0)->type.dims;
  const double out = all_known(dims) ? static_cast<double>(shape_size(dims)) : 0.0;
  c.bytes = (static_cast<double>(shape_size(input_shapes[0])) + out) * static_cast<double>(itemsize(node.input(0)->type.dtype));
  return c;
}

}  // namespace theon::ops

namespace theon::ops {

THEON_PROPLESS_FACTORY(Alloc, Alloc)

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Reshape>(PropReader& p) {
  const int ndim = static_cast<int>(p.integer("ndim"));
  return std::make_shared<const Reshape>(ndim, p.flag("flatten"));
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::BroadcastTo>(PropReader& p) {
  return std::make_shared<const BroadcastTo>(p.shape("shape"));
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Shape>(PropReader& p) {
  return std::make_shared<const ShapeOf>(p.word("size", "shape"));
}

}  // namespace theon::ops
