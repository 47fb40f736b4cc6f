#include "ops/pool.hpp"
#include "ops/make_op.hpp"

#include "graph/user_names.hpp"
#include "ops/matmul.hpp"
#include "ops/shape.hpp"
#include "util/checked_size.hpp"

#include <theon/error.hpp>

#include <sstream>

namespace theon::ops {

using graph::Apply;
using graph::OpKind;
using graph::VarPtr;

namespace {

std::string tuple_str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::vector<int64_t> parse_tuple(PropReader& r, const std::string& key, int nd) {
  const Shape s = r.shape(key);
  if (static_cast<int>(s.size()) != nd)
    throw ValueError("Pool: prop '" + key + "' must have " + std::to_string(nd) + " entries");
  return s;
}

// The geometry of a node's pooled tensor; `x` the input shape.
void check_rank(const Shape& x, const PoolParams& p, const std::string& what) {
  if (static_cast<int>(x.size()) < p.nd || static_cast<int>(x.size()) > p.nd + pool::kMaxLead)
    throw ShapeError(what + ": the input must have rank " + std::to_string(p.nd) + " to " +
                     std::to_string(p.nd + pool::kMaxLead) + ", got shape " + shape_str(x));
}

}  // namespace

const char* pool_mode_name(pool::Mode mode) {
  switch (mode) {
    case pool::kMax: return "max";
    case pool::kSum: return "sum";
    case pool::kAverageIncPad: return "average_inc_pad";
    case pool::kAverageExcPad: return "average_exc_pad";
  }
  return "?";
}

pool::Mode parse_pool_mode(const std::string& name, const std::string& what) {
  if (name == "max" || name == "max_deterministic") return pool::kMax;
  if (name == "sum") return pool::kSum;
  if (name == "average_inc_pad") return pool::kAverageIncPad;
  if (name == "average_exc_pad") return pool::kAverageExcPad;
  throw ValueError(what + ": Pool mode parameter only supports 'max', 'sum', 'average_inc_pad' and "
                          "'average_exc_pad', got '" + name + "'");
}

std::string pool_call(const std::string& x, const PoolParams& p) {
  return "pool_" + std::to_string(p.nd) + "d(" + x + ", ws=" + tuple_str(p.ws) + ", stride=" + tuple_str(p.stride) +
         ", pad=" + tuple_str(p.pad) + ", ignore_border=" + (p.ignore_border ? "True" : "False") + ", mode='" +
         pool_mode_name(p.mode) + "')";
}

int64_t pool_output_size(int64_t n, int64_t ws, int64_t st, int64_t pad, bool ignore_border) {
  if (n == 0) return 0;
  const int64_t r = n + 2 * pad;
  if (ignore_border) return r < ws ? 0 : (r - ws) / st + 1;
  if (st >= ws) return (r - 1) / st + 1;
  const int64_t k = r - 1 - ws + st;  // >= 0 here unless r < ws - st + 1
  return (k > 0 ? k / st : 0) + 1;
}

Shape pool_output_shape(const Shape& x, const PoolParams& p) {
  Shape out = x;
  const size_t lead = x.size() - static_cast<size_t>(p.nd);
  for (int d = 0; d < p.nd; ++d)
    out[lead + d] = pool_output_size(x[lead + d], p.ws[d], p.stride[d], p.pad[d], p.ignore_border);
  return out;
}

pool::Geometry pool_geometry(const Shape& x, const PoolParams& p) {
  pool::Geometry g{};
  g.mode = p.mode;
  g.lead = static_cast<int>(x.size()) - p.nd;
  g.planes = 1;
  for (int d = 0; d < g.lead; ++d) {
    g.lead_shape[d] = x[d];
    g.planes *= x[d];
  }
  const int skip = 3 - p.nd;  // 2-d pooling: a leading pooled dim of size 1
  for (int d = 0; d < 3; ++d) {
    if (d < skip) {
      g.n[d] = g.out[d] = g.ws[d] = g.st[d] = 1;
      g.pad[d] = 0;
      continue;
    }
    const int k = d - skip;
    g.n[d] = x[g.lead + k];
    g.ws[d] = p.ws[k];
    g.st[d] = p.stride[k];
    g.pad[d] = p.pad[k];
    g.out[d] = pool_output_size(g.n[d], g.ws[d], g.st[d], g.pad[d], p.ignore_border);
  }
  return g;
}

pool::Strides pool_strides(const Array& a, const PoolParams& p) {
  pool::Strides s{};
  const int lead = a.ndim() - p.nd;
  for (int d = 0; d < lead; ++d) s.lead[d] = a.strides()[d];
  const int skip = 3 - p.nd;
  for (int d = 0; d < 3; ++d) s.sp[d] = d < skip ? 0 : a.strides()[lead + d - skip];
  return s;
}

graph::OpProps Pool::props() const {
  return {{"nd", std::to_string(p_.nd)},
          {"ws", tuple_str(p_.ws)},
          {"stride", tuple_str(p_.stride)},
          {"pad", tuple_str(p_.pad)},
          {"ignore_border", p_.ignore_border ? "True" : "False"},
          {"mode", pool_mode_name(p_.mode)}};
}

// ---- builders ----

namespace {

// A static dim may be any int64 (a run-time one is at most 2**62: its array must fit), so the
// padded size n + 2 * pad is checked here; ShapeError naming `what` when it leaves int64.
graph::TensorType pooled_type(const graph::TensorType& x, const PoolParams& p, const std::string& what) {
  graph::TensorType t = x;
  const size_t lead = x.dims.size() - static_cast<size_t>(p.nd);
  for (int d = 0; d < p.nd; ++d) {
    const int64_t n = x.dims[lead + d];
    if (int64_t padded; n >= 0 && !detail::checked_add(n, 2 * p.pad[d], padded))
      throw ShapeError(what + ": the padded size " + std::to_string(n) + " + 2 * " + std::to_string(p.pad[d]) +
                       " of pooled dim " + std::to_string(d) + " is too big (beyond int64)");
    t.dims[lead + d] = n < 0 ? graph::kUnknownDim : pool_output_size(n, p.ws[d], p.stride[d], p.pad[d], p.ignore_border);
  }
  return t;
}

void check_static_like(const std::string& what, const VarPtr& v, const graph::TensorType& want, const std::string& role) {
  if (v->type.dtype != want.dtype || v->type.ndim() != want.ndim())
    throw TypeError(what + ": " + role + " " + label_type(v) + " must have dtype " + std::string(dtype_name(want.dtype)) +
                    " and rank " + std::to_string(want.ndim()));
  for (int d = 0; d < want.ndim(); ++d)
    if (v->type.dims[d] >= 0 && want.dims[d] >= 0 && v->type.dims[d] != want.dims[d])
      throw ShapeError(what + ": " + role + " " + label_type(v) + " must have the static shape " + dims_str(want.dims));
}

void require_pool_dtype(const std::string& what, const VarPtr& x) {
  if (x->type.dtype != DType::Float16 && x->type.dtype != DType::Float32 && x->type.dtype != DType::Float64)
    throw TypeError(what + ": the input must be a float16, float32 or float64 tensor, got " + label_type(x));
}

VarPtr make_pool_node(OpKind kind, const PoolParams& p, std::vector<VarPtr> inputs, const graph::TensorType& t) {
  return graph::make_output(std::make_shared<Pool>(kind, p), std::move(inputs), t);
}

}  // namespace

namespace {

// The window, stride and pad of every pooled dim (the output-size rule divides by the stride
// and needs pad < ws, both below 2**40, so the sizes it computes stay far inside int64).
void check_pool_numbers(const PoolParams& p, const std::string& what) {
  bool padded = false;
  for (int d = 0; d < p.nd; ++d) {
    if (p.ws[d] < 1) throw ValueError(what + ": ws must be >= 1 in every dim");
    if (p.stride[d] < 1) throw ValueError(what + ": stride must be >= 1 in every dim");
    if (p.pad[d] < 0) throw ValueError(what + ": pad must be >= 0 in every dim");
    if (p.pad[d] >= p.ws[d]) throw NotImplementedError(what + ": padding must be smaller than the window (pad < ws)");
    padded = padded || p.pad[d] != 0;
    if (p.ws[d] > (int64_t(1) << 40) || p.stride[d] > (int64_t(1) << 40))
      throw ValueError(what + ": ws and stride must be below 2**40");
  }
  if (padded && !p.ignore_border) throw NotImplementedError(what + ": padding works only with ignore_border=True");
}

}  // namespace

PoolParams checked_pool_params(const VarPtr& x, const PoolParams& p_in) {
  PoolParams p = p_in;
  const std::string name = "pool_" + std::to_string(p.nd) + "d";
  if (p.nd != 2 && p.nd != 3) throw ValueError("pool: pools 2 or 3 dims, not " + std::to_string(p.nd));
  if (static_cast<int>(p.ws.size()) != p.nd)
    throw ValueError(name + "(" + x->label() + "): ws must have " + std::to_string(p.nd) + " entries, got " + tuple_str(p.ws));
  if (p.stride.empty()) p.stride = p.ws;
  if (p.pad.empty()) p.pad.assign(static_cast<size_t>(p.nd), 0);
  const std::string what = pool_call(x->label(), p);
  if (static_cast<int>(p.stride.size()) != p.nd || static_cast<int>(p.pad.size()) != p.nd)
    throw ValueError(what + ": stride and pad must have " + std::to_string(p.nd) + " entries");
  require_supported(x->type.dtype, what);
  require_pool_dtype(what, x);
  if (x->type.ndim() < p.nd)
    throw TypeError(what + ": " + name + " requires an input of rank >= " + std::to_string(p.nd) + ", got " + label_type(x));
  if (x->type.ndim() > p.nd + pool::kMaxLead)
    throw NotImplementedError(what + ": at most " + std::to_string(pool::kMaxLead) + " leading dims, got " + label_type(x));
  check_pool_numbers(p, what);
  return p;
}

VarPtr pool(const VarPtr& x, const PoolParams& p_in) {
  const PoolParams p = checked_pool_params(x, p_in);
  return make_pool_node(OpKind::Pool, p, {x}, pooled_type(x->type, p, pool_call(x->label(), p)));
}

VarPtr max_pool_grad(const VarPtr& x, const VarPtr& z, const VarPtr& gz, const PoolParams& p) {
  const std::string what = "MaxPoolGrad of " + pool_call(x->label(), p);
  require_pool_dtype(what, x);
  const graph::TensorType zt = pooled_type(x->type, p, what);
  check_static_like(what, z, zt, "the pooled value");
  check_static_like(what, gz, zt, "the output gradient");
  return make_pool_node(OpKind::MaxPoolGrad, p, {x, z, gz}, x->type);
}

VarPtr average_pool_grad(const VarPtr& x, const VarPtr& gz, const PoolParams& p) {
  const std::string what = "AveragePoolGrad of " + pool_call(x->label(), p);
  require_pool_dtype(what, x);
  check_static_like(what, gz, pooled_type(x->type, p, what), "the output gradient");
  return make_pool_node(OpKind::AveragePoolGrad, p, {x, gz}, x->type);
}

VarPtr max_pool_grad_grad(const VarPtr& x, const VarPtr& z, const VarPtr& g, const PoolParams& p) {
  const std::string what = "DownsampleFactorMaxGradGrad of " + pool_call(x->label(), p);
  require_pool_dtype(what, x);
  const graph::TensorType zt = pooled_type(x->type, p, what);
  check_static_like(what, z, zt, "the pooled value");
  check_static_like(what, g, x->type, "the gradient");
  return make_pool_node(OpKind::DownsampleFactorMaxGradGrad, p, {x, z, g}, zt);
}

// ---- shapes, cost, gradients ----

std::vector<Shape> Pool::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const Shape& x = inputs[0].shape();
  const auto what = [&] { return graph::user_describe(node) + " (" + pool_call(input_label(node, 0), p_) + ")"; };
  check_rank(x, p_, what());
  const Shape z = pool_output_shape(x, p_);
  const auto expect = [&](int i, const Shape& want, const char* role) {
    if (inputs[i].shape() != want)
      throw ShapeError(what() + ": " + role + " " + graph::user_value(*node.input(i), inputs[i].shape()) +
                       " must have the shape " + shape_str(want) + " for the input of shape " + shape_str(x));
  };
  switch (kind_) {
    case OpKind::Pool:
      detail::checked_nbytes(z, inputs[0].dtype(), what);
      return {z};
    case OpKind::MaxPoolGrad:
      expect(1, z, "the pooled value");
      expect(2, z, "the output gradient");
      return {x};
    case OpKind::AveragePoolGrad:
      expect(1, z, "the output gradient");
      return {x};
    case OpKind::DownsampleFactorMaxGradGrad:
      expect(1, z, "the pooled value");
      expect(2, x, "the gradient");
      return {z};
    default: throw InternalError("Pool: unexpected kind");
  }
}

graph::Cost Pool::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  int64_t window = 1;
  for (int64_t w : p_.ws) window *= w;
  const Shape z = pool_output_shape(input_shapes[0], p_);
  c.flops = static_cast<double>(shape_size(z)) * static_cast<double>(window);
  return c;
}

std::vector<VarPtr> Pool::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr& g = output_grads[0];
  const VarPtr x = node.input(0);
  switch (kind_) {
    case OpKind::Pool:
      if (!g) return {nullptr};
      if (p_.mode == pool::kMax) return {max_pool_grad(x, const_cast<Apply&>(node).output(0), g, p_)};
      return {average_pool_grad(x, g, p_)};
    case OpKind::MaxPoolGrad: {
      const VarPtr z = node.input(1);
      if (!g) return {nullptr, nullptr, nullptr};
      return {fill_like(x, 0.0, std::nullopt, "zeros_like"), fill_like(z, 0.0, std::nullopt, "zeros_like"),
              max_pool_grad_grad(x, z, g, p_)};
    }
    case OpKind::AveragePoolGrad:
      if (!g) return {nullptr, nullptr};
      return {fill_like(x, 0.0, std::nullopt, "zeros_like"), pool(g, p_)};
    case OpKind::DownsampleFactorMaxGradGrad: {
      const VarPtr z = node.input(1);
      if (!g) return {nullptr, nullptr, nullptr};
      return {fill_like(x, 0.0, std::nullopt, "zeros_like"), fill_like(z, 0.0, std::nullopt, "zeros_like"),
              max_pool_grad(x, z, g, p_)};
    }
    default: throw InternalError("Pool: unexpected kind");
  }
}

std::string Pool::render(const std::vector<std::string>& inputs, int output) const {
  if (kind_ != OpKind::Pool || output != 0 || inputs.size() != 1) return Op::render(inputs, output);
  return pool_call(inputs[0], p_);
}

// ---- factories ----

namespace {

std::shared_ptr<const graph::Op> pool_from_props(OpKind kind, PropReader& r) {
  PoolParams p;
  p.nd = static_cast<int>(r.integer("nd"));
  if (p.nd != 2 && p.nd != 3) throw ValueError("Pool: prop 'nd' must be 2 or 3");
  p.ws = parse_tuple(r, "ws", p.nd);
  p.stride = parse_tuple(r, "stride", p.nd);
  p.pad = parse_tuple(r, "pad", p.nd);
  const std::string ib = r.text("ignore_border");
  if (ib != "True" && ib != "False") throw ValueError("Pool: prop 'ignore_border' must be True or False");
  p.ignore_border = ib == "True";
  p.mode = parse_pool_mode(r.text("mode"), "Pool");
  check_pool_numbers(p, "make_op(" + std::string(graph::kind_name(kind)) + ")");
  return r.done(std::make_shared<const Pool>(kind, p));
}

}  // namespace

template <>
std::shared_ptr<const graph::Op> op_from_props<OpKind::Pool>(PropReader& p) {
  return pool_from_props(OpKind::Pool, p);
}
template <>
std::shared_ptr<const graph::Op> op_from_props<OpKind::MaxPoolGrad>(PropReader& p) {
  return pool_from_props(OpKind::MaxPoolGrad, p);
}
template <>
std::shared_ptr<const graph::Op> op_from_props<OpKind::AveragePoolGrad>(PropReader& p) {
  return pool_from_props(OpKind::AveragePoolGrad, p);
}
template <>
std::shared_ptr<const graph::Op> op_from_props<OpKind::DownsampleFactorMaxGradGrad>(PropReader& p) {
  return pool_from_props(OpKind::DownsampleFactorMaxGradGrad, p);
}

}  // namespace theon::ops
