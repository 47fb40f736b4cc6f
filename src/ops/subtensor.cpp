#include "ops/subtensor.hpp"
#include "ops/make_op.hpp"
#include "util/checked_size.hpp"

#include "graph/user_names.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/shape.hpp"
#include "util/dispatch.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace theon::ops {

using graph::Apply;
using graph::TensorType;
using graph::VarPtr;
using Kind = IndexEntry::Kind;

namespace {

// ---- index specs ----

std::string part_str(const IndexEntry::Part& p) {
  switch (p.kind) {
    case Kind::None: return "";
    case Kind::Const: return std::to_string(p.value);
    case Kind::Input: return "$" + std::to_string(p.value);
  }
  return "?";
}

// With `bounds` (the texts of the node's bound inputs), symbolic bounds show as those.
std::string spec_str(const IndexSpec& spec, const std::vector<std::string>* bounds = nullptr) {
  auto part = [&](const IndexEntry::Part& p) {
    if (bounds && p.kind == Kind::Input && p.value >= 0 && p.value < static_cast<int64_t>(bounds->size()))
      return (*bounds)[p.value];
    return part_str(p);
  };
  std::string s;
  for (size_t i = 0; i < spec.size(); ++i) {
    const IndexEntry& e = spec[i];
    s += i ? ", " : "";
    if (!e.is_slice) s += part(e.start);
    else s += part(e.start) + ":" + part(e.stop) + (e.step.kind == Kind::None ? "" : ":" + part(e.step));
  }
  return s;
}

}  // namespace

IndexSpec index_spec_from_text(std::string_view text) {
  auto fail = [&]() -> IndexSpec { throw ValueError("not an index spec: '" + std::string(text) + "'"); };
  auto integer = [](std::string_view t, int64_t& out) {
    if (t.empty()) return false;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return ec == std::errc() && end == t.data() + t.size();
  };
  auto part = [&](std::string_view t, IndexEntry::Part& p) {
    p = {};
    if (t.empty()) return true;
    if (t[0] == '$') return p.kind = Kind::Input, integer(t.substr(1), p.value);
    return p.kind = Kind::Const, integer(t, p.value);
  };
  IndexSpec spec;
  if (text.empty()) return spec;
  for (size_t at = 0; at <= text.size();) {
    size_t end = text.find(", ", at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view e = text.substr(at, end - at);
    IndexEntry entry;
    const size_t c1 = e.find(':');
    if (c1 == std::string_view::npos) {
      if (!part(e, entry.start) || entry.start.kind == Kind::None) return fail();
    } else {
      entry.is_slice = true;
      const size_t c2 = e.find(':', c1 + 1);
      const std::string_view stop = c2 == std::string_view::npos ? e.substr(c1 + 1) : e.substr(c1 + 1, c2 - c1 - 1);
      if (!part(e.substr(0, c1), entry.start) || !part(stop, entry.stop)) return fail();
      if (c2 != std::string_view::npos && (!part(e.substr(c2 + 1), entry.step) || entry.step.kind == Kind::None))
        return fail();
    }
    spec.push_back(entry);
    at = end + 2;
  }
  return spec;
}

namespace {

// The value of a bound: nullopt when absent; `bounds` are the node's bound inputs.
std::optional<int64_t> part_value(const IndexEntry::Part& p, const Array* bounds) {
  if (p.kind == Kind::None) return std::nullopt;
  if (p.kind == Kind::Const) return p.value;
  return scalar_int(bounds[p.value]);
}

// Python's slice.indices(n) plus the length; nullopt bounds are omitted ones.
DimSelection python_slice(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  auto clamp = [&](int64_t i) {
    if (i < 0) i += n;
    if (i < 0) return step < 0 ? int64_t(-1) : int64_t(0);
    if (i >= n) return step < 0 ? n - 1 : n;
    return i;
  };
  DimSelection s;
  s.step = step;
  s.start = start ? clamp(*start) : (step < 0 ? n - 1 : 0);
  const int64_t e = stop ? clamp(*stop) : (step < 0 ? -1 : n);
  if (step > 0) s.len = e > s.start ? (e - s.start - 1) / step + 1 : 0;
  else s.len = s.start > e ? (s.start - e - 1) / (-step) + 1 : 0;
  return s;
}

std::string step_zero(const std::string& what) { return what + ": slice step cannot be zero"; }

std::string index_error(const std::string& what, const std::string& var, int64_t index, int axis, int64_t n) {
  return what + ": index " + std::to_string(index) + " is out of bounds for axis " + std::to_string(axis) + " of " +
         var + " with size " + std::to_string(n);
}

// Resolves every dim of `shape`, node's input 0 (dims past the spec are kept whole); errors
// name what the user wrote (built only on failure: this runs on every call).
std::vector<DimSelection> resolve(const IndexSpec& spec, const Shape& shape, const Array* bounds, const Apply& node) {
  std::vector<DimSelection> sel(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t n = shape[d];
    if (d >= spec.size()) {
      sel[d] = {0, 1, n, false};
      continue;
    }
    const IndexEntry& e = spec[d];
    if (!e.is_slice) {
      int64_t i = *part_value(e.start, bounds);
      const int64_t orig = i;
      if (i < 0) i += n;
      if (i < 0 || i >= n)
        throw IndexError(index_error(graph::user_describe(node), graph::user_label(*node.input(0)), orig,
                                     static_cast<int>(d), n) +
                         " (shape " + shape_str(shape) + ")");
      sel[d] = {i, 1, 1, true};
      continue;
    }
    const int64_t step = part_value(e.step, bounds).value_or(1);
    if (step == 0) throw ValueError(step_zero(graph::user_describe(node)));
    sel[d] = python_slice(n, part_value(e.start, bounds), part_value(e.stop, bounds), step);
  }
  return sel;
}

Shape selected_shape(const std::vector<DimSelection>& sel) {
  Shape out;
  for (auto& s : sel)
    if (!s.drop) out.push_back(s.len);
  return out;
}

Array selected_view(const Array& a, const std::vector<DimSelection>& sel) {
  Shape shape;
  Strides strides;
  int64_t offset = a.offset();
  bool empty = false;
  for (size_t d = 0; d < sel.size(); ++d) {
    if (sel[d].len == 0) empty = true;
    offset += sel[d].start * a.strides()[d];
    if (sel[d].drop) continue;
    shape.push_back(sel[d].len);
    strides.push_back(a.strides()[d] * sel[d].step);
  }
  return Array(a.buffer(), a.dtype(), shape, strides, empty ? a.offset() : offset);
}

// Static output dims: known where the dim and the bounds are.
std::vector<int64_t> static_dims(const IndexSpec& spec, const VarPtr& x, const std::string& what) {
  std::vector<int64_t> dims;
  for (int d = 0; d < x->type.ndim(); ++d) {
    const int64_t n = x->type.dims[d];
    if (d >= static_cast<int>(spec.size())) {
      dims.push_back(n);
      continue;
    }
    const IndexEntry& e = spec[d];
    if (!e.is_slice) {
      if (n >= 0 && e.start.kind == Kind::Const && (e.start.value >= n || e.start.value < -n))
        throw IndexError(index_error(what, label_type(x), e.start.value, d, n));
      continue;
    }
    if (e.step.kind == Kind::Const && e.step.value == 0) throw ValueError(step_zero(what));
    const bool whole = e.start.kind == Kind::None && e.stop.kind == Kind::None && e.step.kind == Kind::None;
    const bool constant = e.start.kind != Kind::Input && e.stop.kind != Kind::Input && e.step.kind != Kind::Input;
    if (whole) dims.push_back(n);
    else if (n >= 0 && constant)
      dims.push_back(python_slice(n, part_value(e.start, nullptr), part_value(e.stop, nullptr),
                                  part_value(e.step, nullptr).value_or(1)).len);
    else dims.push_back(graph::kUnknownDim);
  }
  return dims;
}

IndexEntry::Part make_part(const Bound& b, std::vector<VarPtr>& bound_inputs, const std::string& what) {
  IndexEntry::Part p;
  if (b.var) {
    require_int_scalar(b.var, what + ": index bound");
    if (b.var->kind == graph::VarKind::Constant) return {Kind::Const, scalar_int(b.var->constant)};
    p = {Kind::Input, static_cast<int64_t>(bound_inputs.size())};
    bound_inputs.push_back(b.var);
  } else if (b.value) {
    p = {Kind::Const, *b.value};
  }
  return p;
}

std::string index_text(const VarPtr& x, const std::vector<Index>& indices) {
  std::string s = x->label() + "[";
  for (size_t i = 0; i < indices.size(); ++i) {
    const Index& ix = indices[i];
    auto b = [](const Bound& bd) { return bd.var ? bd.var->label() : bd.value ? std::to_string(*bd.value) : ""; };
    s += i ? ", " : "";
    if (ix.array) s += ix.array->label();
    else if (!ix.is_slice) s += b(ix.scalar);
    else s += b(ix.slice.start) + ":" + b(ix.slice.stop) + (ix.slice.step.empty() ? "" : ":" + b(ix.slice.step));
  }
  return s + "]";
}

bool is_whole_slice(const Index& ix) {
  return ix.is_slice && ix.slice.start.empty() && ix.slice.stop.empty() && ix.slice.step.empty();
}

VarPtr basic_subtensor(const VarPtr& x, const std::vector<Index>& indices, const std::string& what) {
  IndexSpec spec;
  std::vector<VarPtr> inputs = {x};
  std::vector<VarPtr> bounds;
  for (const Index& ix : indices) {
    IndexEntry e;
    e.is_slice = ix.is_slice;
    if (ix.is_slice) {
      e.start = make_part(ix.slice.start, bounds, what);
      e.stop = make_part(ix.slice.stop, bounds, what);
      e.step = make_part(ix.slice.step, bounds, what);
    } else {
      e.start = make_part(ix.scalar, bounds, what);
    }
    spec.push_back(e);
  }
  TensorType t = x->type;
  t.dims = static_dims(spec, x, what);
  inputs.insert(inputs.end(), bounds.begin(), bounds.end());
  return graph::make_output(std::make_shared<Subtensor>(spec), inputs, t);
}

void require_indices(const VarPtr& indices, const std::string& what) {
  if (!is_integer(indices->type.dtype))
    throw TypeError(what + ": the indices " + label_type(indices) +
                    " must be integers (boolean mask indexing is not supported)");
}

// y converted to x's dtype: literals always; arrays when NumPy's same_kind casting allows.
VarPtr assignable_value(const VarPtr& x, const VarPtr& y, const std::string& what) {
  const DType xd = x->type.dtype, yd = y->type.dtype;
  require_supported(yd, what);
  const bool same_kind = y->weak || xd == yd || is_float(xd) || (is_integer(xd) && !is_float(yd));
  if (!same_kind)
    throw TypeError(what + ": cannot write " + label_type(y) + " into " + label_type(x) + " (casting " +
                    std::string(dtype_name(yd)) + " to " + std::string(dtype_name(xd)) + " would lose its kind)");
  return cast(y, xd);
}

void check_static_assignable(const std::string& what, const VarPtr& y, const VarPtr& sub) {
  const auto& yd = y->type.dims;
  const auto& sd = sub->type.dims;
  bool ok = yd.size() <= sd.size();
  for (size_t d = 0; ok && d < yd.size(); ++d) {
    const int64_t r = sd[sd.size() - yd.size() + d];
    ok = yd[d] < 0 || yd[d] == 1 || r < 0 || yd[d] == r;
  }
  if (!ok)
    throw ShapeError(what + ": cannot broadcast " + label_type(y) + " to the indexed region " + label_type(sub));
}

}  // namespace

Shape index_broadcast_shape(const Apply& node, const std::vector<Array>& inputs, int first, int k) {
  size_t rank = 0;
  for (int j = 0; j < k; ++j) rank = std::max(rank, inputs[first + j].shape().size());
  Shape out(rank, 1);
  for (int j = 0; j < k; ++j) {
    const Shape& s = inputs[first + j].shape();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& o = out[rank - s.size() + d];
      if (s[d] == 1 || s[d] == o) continue;
      if (o != 1) {
        std::string shapes;
        for (int i = 0; i < k; ++i)
          shapes += (i ? ", " : "") + graph::user_value(*node.input(first + i), inputs[first + i].shape());
        throw ShapeError(graph::user_describe(node) + ": the index arrays cannot be broadcast together: " + shapes);
      }
      o = s[d];
    }
  }
  return out;
}

FlatIndices checked_flat_indices(const Apply& node, const std::vector<Array>& inputs, int first, int k, int axis,
                                 const Shape& x) {
  FlatIndices r;
  r.shape = k == 1 ? inputs[first].shape() : index_broadcast_shape(node, inputs, first, k);
  const int64_t m = shape_size(r.shape);
  r.flat.assign(static_cast<size_t>(m), 0);
  for (int j = 0; j < k; ++j) {
    const Array idx = inputs[first + j].broadcast_to(r.shape);
    const std::vector<int64_t> v = idx.to_vector<int64_t>();
    const int64_t n = x[axis + j];
    for (int64_t e = 0; e < m; ++e) {
      int64_t i = v[e];
      if (i < 0) i += n;
      if (i < 0 || i >= n)
        throw IndexError(index_error(graph::user_describe(node), graph::user_label(*node.input(0)), v[e], axis + j, n) +
                         " (shape " + shape_str(x) + ", indices " + graph::user_label(*node.input(first + j)) + ")");
      r.flat[e] = r.flat[e] * n + i;  // row-major over the indexed dims
    }
  }
  return r;
}

Shape take_shape(const Shape& x, const Shape& idx, int axis, int k) {
  Shape out(x.begin(), x.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.begin() + axis + k, x.end());
  return out;
}

// y (node input 1) must broadcast to the region: NumPy's rule for assignment.
void check_assignable(const Apply& node, const Shape& y, const Shape& region) {
  bool ok = y.size() <= region.size();
  for (size_t d = 0; ok && d < y.size(); ++d) {
    const int64_t r = region[region.size() - y.size() + d];
    ok = y[d] == 1 || y[d] == r;
  }
  if (!ok) {
    const graph::UserValue u = graph::user_view(*node.input(1), y);
    throw ShapeError(graph::user_describe(node) + ": cannot broadcast " + u.label + " of shape " + shape_str(u.shape) +
                     " to the indexed region of shape " + shape_str(region));
  }
}

// ---- Subtensor ----

graph::OpProps Subtensor::props() const { return {{"", spec_str(spec_)}}; }

std::string Subtensor::render(const std::vector<std::string>& inputs, int) const {
  if (inputs.empty()) return Op::render(inputs);
  const std::vector<std::string> bounds(inputs.begin() + 1, inputs.end());
  return inputs[0] + "[" + spec_str(spec_, &bounds) + "]";
}

VarPtr subtensor(const VarPtr& x, const std::vector<Index>& indices) {
  const std::string what = index_text(x, indices);
  require_supported(x->type.dtype, what);
  if (static_cast<int>(indices.size()) > x->type.ndim())
    throw IndexError(what + ": too many indices for " + label_type(x) + ": it has " +
                     std::to_string(x->type.ndim()) + " dims but " + std::to_string(indices.size()) +
                     " were indexed");
  std::vector<int> arrays;  // positions in `indices` of the integer arrays
  for (size_t i = 0; i < indices.size(); ++i)
    if (indices[i].array) {
      require_indices(indices[i].array, what);
      arrays.push_back(static_cast<int>(i));
    }
  if (arrays.empty()) return basic_subtensor(x, indices, what);

  // Basic indexing of the rest, then one take of the arrays' dims (broadcast together).
  std::vector<Index> basic = indices;
  std::vector<VarPtr> idx;
  for (int i : arrays) basic[i] = Index(Slice{}), idx.push_back(indices[i].array);
  const bool any_basic = std::any_of(basic.begin(), basic.end(), [](const Index& ix) { return !is_whole_slice(ix); });
  const VarPtr base = any_basic ? basic_subtensor(x, basic, what) : x;
  // The arrays' dims in `base` (integer indices dropped theirs). NumPy: when a slice
  // separates the advanced indices (arrays and integers), their result dims go first.
  std::vector<int> at;
  int dim = 0, first_adv = arrays.front(), last_adv = arrays.back();
  for (int i = 0; i < static_cast<int>(indices.size()); ++i) {
    if (indices[i].array) at.push_back(dim);
    if (indices[i].is_slice || indices[i].array) ++dim;
    else first_adv = std::min(first_adv, i), last_adv = std::max(last_adv, i);
  }
  bool adjacent = true;
  for (int i = first_adv; i <= last_adv; ++i) adjacent = adjacent && !indices[i].is_slice;
  if (adjacent) return take(base, idx, at.front(), any_basic);
  if (at.front() == 0 && at.back() == static_cast<int>(at.size()) - 1) return take(base, idx, 0, any_basic);
  std::vector<int> pattern = at;
  for (int d = 0; d < base->type.ndim(); ++d)
    if (std::find(at.begin(), at.end(), d) == at.end()) pattern.push_back(d);
  return take(dimshuffle(base, pattern), idx, 0, any_basic, /*moved=*/true);
}

VarPtr subtensor_spec(const VarPtr& x, const IndexSpec& spec, const std::vector<VarPtr>& bounds) {
  TensorType t = x->type;
  t.dims = static_dims(spec, x, x->label() + "[" + spec_str(spec) + "]");
  std::vector<VarPtr> inputs = {x};
  inputs.insert(inputs.end(), bounds.begin(), bounds.end());
  return graph::make_output(std::make_shared<Subtensor>(spec), inputs, t);
}

std::vector<Shape> Subtensor::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  return {selected_shape(resolve(spec_, inputs[0].shape(), inputs.data() + 1, node))};
}

void Subtensor::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  outputs[0] = selected_view(inputs[0], resolve(spec_, inputs[0].shape(), inputs.data() + 1, node));
}

// ---- IncSubtensor ----

graph::OpProps IncSubtensor::props() const {
  return {{"", spec_str(spec_)}, {"", set_ ? "set" : "inc"}};
}

std::vector<Shape> IncSubtensor::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  auto sel = resolve(spec_, inputs[0].shape(), inputs.data() + 2, node);
  check_assignable(node, inputs[1].shape(), selected_shape(sel));
  return {inputs[0].shape()};
}

graph::Cost IncSubtensor::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);  // reads x and y
  c.bytes += static_cast<double>(shape_size(input_shapes[0]) * itemsize(node.input(0)->type.dtype));
  c.flops = set_ ? 0 : static_cast<double>(shape_size(input_shapes[1]));
  return c;
}

// ---- AdvancedSubtensor1 (take) ----

graph::OpProps AdvancedSubtensor1::props() const {
  graph::OpProps p = {{"axis", std::to_string(axis_)}};
  if (nested_) p.push_back({"nested", "True"});
  if (moved_) p.push_back({"moved", "True"});
  return p;
}

std::string AdvancedSubtensor1::render(const std::vector<std::string>& inputs, int) const {
  if (inputs.size() < 2) return Op::render(inputs);
  std::string idx;
  for (size_t i = 1; i < inputs.size(); ++i) idx += (i > 1 ? ", " : "") + inputs[i];
  if (inputs.size() > 2) idx = "(" + idx + ")";
  return "take(" + inputs[0] + ", " + idx + ", axis=" + std::to_string(axis_) + ")";
}

VarPtr take(const VarPtr& x, const VarPtr& indices, int axis, bool nested) {
  return take(x, std::vector<VarPtr>{indices}, axis, nested);
}

VarPtr take(const VarPtr& x, const std::vector<VarPtr>& indices, int axis, bool nested, bool moved) {
  std::string names;
  for (const VarPtr& i : indices) names += (names.empty() ? "" : ", ") + i->label();
  const int k = static_cast<int>(indices.size());
  const std::string what = "take(" + x->label() + ", " + (k == 1 ? names : "(" + names + ")") +
                           ", axis=" + std::to_string(axis) + ")";
  require_supported(x->type.dtype, what);
  for (const VarPtr& i : indices) require_indices(i, what);
  const int nd = x->type.ndim();
  const int orig = axis;
  if (axis < 0) axis += nd;
  if (k < 1 || axis < 0 || axis + k > nd)
    throw ShapeError(what + ": axis " + std::to_string(orig) + (k > 1 ? " and the " + std::to_string(k - 1) + " after it" : "") +
                     " out of bounds for " + label_type(x));
  // The indices' static broadcast (-1: unknown until run time, checked then).
  size_t rank = 0;
  for (const VarPtr& i : indices) rank = std::max(rank, i->type.dims.size());
  std::vector<int64_t> dims(rank, 1);
  for (const VarPtr& i : indices) {
    const auto& d = i->type.dims;
    for (size_t j = 0; j < d.size(); ++j) {
      int64_t& o = dims[rank - d.size() + j];
      if (d[j] == 1) continue;
      if (o == 1) o = d[j];
      else if (o >= 0 && d[j] >= 0 && o != d[j])
        throw ShapeError(what + ": the index arrays cannot be broadcast together: " + names);
      else if (o < 0) o = d[j];
    }
  }
  TensorType t = x->type;
  t.dims = take_shape(x->type.dims, dims, axis, k);
  std::vector<VarPtr> inputs = {x};
  inputs.insert(inputs.end(), indices.begin(), indices.end());
  return graph::make_output(std::make_shared<AdvancedSubtensor1>(axis, nested, moved), inputs, t);
}

std::vector<Shape> AdvancedSubtensor1::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const int k = static_cast<int>(inputs.size()) - 1;
  const Shape idx = k == 1 ? inputs[1].shape() : index_broadcast_shape(node, inputs, 1, k);
  Shape out = take_shape(inputs[0].shape(), idx, axis_, k);
  detail::checked_nbytes(out, node.output_raw(0)->type.dtype, [&] { return graph::user_describe(node); });
  return {out};
}

// ---- AdvancedIncSubtensor1 ----

graph::OpProps AdvancedIncSubtensor1::props() const {
  return {{"axis", std::to_string(axis_)}, {"", set_ ? "set" : "inc"}};
}

std::vector<Shape> AdvancedIncSubtensor1::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const int k = static_cast<int>(inputs.size()) - 2;
  const Shape idx = k == 1 ? inputs[2].shape() : index_broadcast_shape(node, inputs, 2, k);
  check_assignable(node, inputs[1].shape(), take_shape(inputs[0].shape(), idx, axis_, k));
  return {inputs[0].shape()};
}

// ---- set_subtensor / inc_subtensor ----

VarPtr inc_subtensor(const VarPtr& sub, const VarPtr& y_in, bool set) {
  const std::string what =
      std::string(set ? "set_subtensor(" : "inc_subtensor(") + sub->label() + ", " + y_in->label() + ")";
  const Apply* owner = sub->owner;
  const std::optional<graph::OpKind> op = owner ? std::optional(owner->op().kind()) : std::nullopt;
  if (op != graph::OpKind::Subtensor && op != graph::OpKind::AdvancedSubtensor1)
    throw TypeError(what + ": the first argument " + label_type(sub) +
                    " must be the result of indexing (x[...] or take), but it is " +
                    (owner ? "computed by " + owner->describe()
                           : sub->kind == graph::VarKind::Shared     ? std::string("a shared variable")
                           : sub->kind == graph::VarKind::Constant ? std::string("a constant")
                                                                     : std::string("an input variable")));
  const VarPtr x = owner->input(0);
  const VarPtr y = assignable_value(x, y_in, what);
  check_static_assignable(what, y, sub);
  if (op == graph::OpKind::Subtensor) {
    std::vector<VarPtr> inputs = {x, y};
    for (size_t i = 1; i < owner->inputs().size(); ++i) inputs.push_back(owner->input(static_cast<int>(i)));
    const auto& spec = static_cast<const Subtensor&>(owner->op()).spec();
    return graph::make_output(std::make_shared<IncSubtensor>(spec, set), inputs, x->type);
  }
  const auto& adv = static_cast<const AdvancedSubtensor1&>(owner->op());
  std::vector<VarPtr> inputs = {x, y};
  for (size_t i = 1; i < owner->inputs().size(); ++i) inputs.push_back(owner->input(static_cast<int>(i)));
  VarPtr updated = graph::make_output(std::make_shared<AdvancedIncSubtensor1>(adv.axis(), set), inputs, x->type);
  VarPtr base = x;
  if (adv.moved()) {
    // x[i, :, j]: the take read a DimShuffle bringing the arrays' dims first; undo it.
    const auto& pattern = static_cast<const DimShuffle&>(x->owner->op()).pattern();
    std::vector<int> inverse(pattern.size());
    for (size_t d = 0; d < pattern.size(); ++d) inverse[static_cast<size_t>(pattern[d])] = static_cast<int>(d);
    base = x->owner->input(0);
    updated = dimshuffle(updated, inverse);
  }
  if (!adv.nested()) return updated;
  // x[slices, idx]: write the updated slice region back into the original tensor.
  return inc_subtensor(base, updated, /*set=*/true);
}

}  // namespace theon::ops

namespace theon::ops {

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Subtensor>(PropReader& p) {
  return std::make_shared<const Subtensor>(p.index_spec());
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::IncSubtensor>(PropReader& p) {
  IndexSpec spec = p.index_spec();
  return std::make_shared<const IncSubtensor>(std::move(spec), p.word("set", "inc"));
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::AdvancedSubtensor1>(PropReader& p) {
  const int axis = static_cast<int>(p.integer("axis"));
  const bool nested = p.flag("nested");
  return std::make_shared<const AdvancedSubtensor1>(axis, nested, p.flag("moved"));
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::AdvancedIncSubtensor1>(PropReader& p) {
  const int axis = static_cast<int>(p.integer("axis"));
  return std::make_shared<const AdvancedIncSubtensor1>(axis, p.word("set", "inc"));
}

}  // namespace theon::ops
