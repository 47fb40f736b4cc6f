#include "ops/dimshuffle.hpp"
#include "ops/make_op.hpp"

#include "ops/reduce.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <numeric>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

namespace {
std::string pattern_str(const std::vector<int>& pattern) {
  std::string s = "(";
  for (size_t i = 0; i < pattern.size(); ++i)
    s += (i ? "," : "") + (pattern[i] < 0 ? std::string("x") : std::to_string(pattern[i]));
  return s + ")";
}
}  // namespace

graph::OpProps DimShuffle::props() const { return {{"", pattern_str(pattern_)}}; }

bool DimShuffle::presents_input() const {
  int last = -1;
  for (int p : pattern_) {
    if (p < 0) continue;
    if (p < last) return false;  // a transpose: the user asked for it
    last = p;
  }
  return true;
}

Shape DimShuffle::presented_shape(const Shape& shape) const {
  if (shape.size() != pattern_.size()) return shape;
  Shape in(input_ndim_, 1);  // dropped dims had size 1
  for (size_t j = 0; j < pattern_.size(); ++j)
    if (pattern_[j] >= 0) in[pattern_[j]] = shape[j];
  return in;
}

VarPtr dimshuffle(const VarPtr& x, const std::vector<int>& pattern) {
  const int nd = x->type.ndim();
  const std::string what = "dimshuffle" + pattern_str(pattern) + " of " + x->label() + " (" + x->type.str() + ")";
  std::vector<bool> used(nd, false);
  graph::TensorType t = x->type;
  t.dims.clear();
  for (int p : pattern) {
    if (p < -1 || p >= nd) throw ShapeError(what + ": dim " + std::to_string(p) + " out of range");
    if (p >= 0) {
      if (used[p]) throw ShapeError(what + ": dim " + std::to_string(p) + " appears twice");
      used[p] = true;
      t.dims.push_back(x->type.dims[p]);
    } else {
      t.dims.push_back(1);
    }
  }
  for (int d = 0; d < nd; ++d)
    if (!used[d] && x->type.dims[d] != 1)
      throw ShapeError(what + ": dim " + std::to_string(d) + " is dropped but is not broadcastable (size " +
                       (x->type.dims[d] < 0 ? std::string("unknown") : std::to_string(x->type.dims[d])) + ")");
  bool identity = static_cast<int>(pattern.size()) == nd;
  for (int i = 0; identity && i < nd; ++i) identity = pattern[i] == i;
  if (identity) return x;
  if (x->kind == graph::VarKind::Constant) {  // fold at build time: literals broadcast for free
    const Array& c = x->constant;
    Shape shape;
    Strides strides;
    for (int p : pattern) {
      shape.push_back(p < 0 ? 1 : c.shape()[p]);
      strides.push_back(p < 0 ? 0 : c.strides()[p]);
    }
    Array folded = Array(c.buffer(), c.dtype(), shape, strides, c.offset()).copy();
    return graph::Variable::make_constant(folded, x->weak, x->name);
  }
  return graph::make_output(std::make_shared<DimShuffle>(nd, pattern), {x}, t);
}

VarPtr transpose(const VarPtr& x, std::vector<int> axes) {
  const int nd = x->type.ndim();
  if (axes.empty()) {
    axes.resize(nd);
    std::iota(axes.rbegin(), axes.rend(), 0);
  }
  if (static_cast<int>(axes.size()) != nd)
    throw ShapeError("transpose(" + x->label() + "): axes of length " + std::to_string(axes.size()) +
                     " for a tensor of rank " + std::to_string(nd));
  for (int& a : axes)
    if (a < 0) a += nd;
  return dimshuffle(x, axes);
}

std::vector<Shape> DimShuffle::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  // Run on every call (the executor's shape check): two allocations, no copy of the shape.
  const Shape& in = inputs[0].shape();
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] != 1 && std::find(pattern_.begin(), pattern_.end(), static_cast<int>(d)) == pattern_.end())
      throw ShapeError(node.describe() + ": dropped dim " + std::to_string(d) + " of " + node.input(0)->label() +
                       " has size " + std::to_string(in[d]) + " (shape " + shape_str(in) + "), expected 1");
  std::vector<Shape> out(1);
  out[0].resize(pattern_.size());
  for (size_t i = 0; i < pattern_.size(); ++i) out[0][i] = pattern_[i] < 0 ? 1 : in[pattern_[i]];
  return out;
}

void DimShuffle::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  // A view, on every call of a function: the shape and strides are filled in place (one
  // allocation each, none for infer_shape's vectors); a dropped dim that is not 1 goes through
  // infer_shape for its message.
  const Array& in = inputs[0];
  const Shape& is = in.shape();
  for (size_t d = 0; d < is.size(); ++d)
    if (is[d] != 1 && std::find(pattern_.begin(), pattern_.end(), static_cast<int>(d)) == pattern_.end())
      (void)infer_shape(node, inputs);  // throws ShapeError
  Shape shape(pattern_.size());
  Strides strides(pattern_.size());
  for (size_t i = 0; i < pattern_.size(); ++i) {
    const int p = pattern_[i];
    shape[i] = p < 0 ? 1 : is[p];
    strides[i] = p < 0 ? 0 : in.strides()[p];
  }
  outputs[0] = Array(in.buffer(), in.dtype(), std::move(shape), std::move(strides), in.offset());
}

}  // namespace theon::ops

namespace theon::ops {

std::vector<VarPtr> DimShuffle::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr& gz = output_grads[0];
  if (!gz || !is_float(node.input(0)->type.dtype)) return {nullptr};
  // The inverse shuffle: each input dim comes back from its output position; dims the
  // forward dropped (size 1) come back as 'x'; the forward's 'x' dims (size 1) are dropped.
  // The forward's 'x' dims have size 1 at run time, but gz's type may not know it (e.g. it
  // came through a reshape): summing over them drops them whatever the static type says.
  VarPtr g = gz;
  std::vector<int> new_axes, kept;  // output positions that were 'x' / that came from x
  for (size_t i = 0; i < pattern_.size(); ++i) (pattern_[i] < 0 ? new_axes : kept).push_back(static_cast<int>(i));
  bool static_ones = true;
  for (int a : new_axes) static_ones = static_ones && gz->type.dims[a] == 1;
  std::vector<int> position(pattern_.size(), -1);  // output position -> position in g
  if (!static_ones && !new_axes.empty()) {
    g = reduce(ReduceKind::Sum, gz, new_axes, false);
    for (size_t k = 0; k < kept.size(); ++k) position[kept[k]] = static_cast<int>(k);
  } else {
    for (size_t i = 0; i < pattern_.size(); ++i) position[i] = static_cast<int>(i);
  }
  std::vector<int> inverse(input_ndim_, -1);
  for (size_t i = 0; i < pattern_.size(); ++i)
    if (pattern_[i] >= 0) inverse[pattern_[i]] = position[i];
  return {dimshuffle(g, inverse)};
}

}  // namespace theon::ops

namespace theon::ops {

// Props: the pattern "(x,1,0)" and, not printed (dropped dims do not show), "input_ndim"
// (rebuild_props adds it).
template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::DimShuffle>(PropReader& p) {
  const std::string text = p.text("");
  const std::optional<int64_t> ndim = p.integer_or_none("input_ndim");
  if (!ndim)
    p.not_rebuildable("a DimShuffle's input rank is not among its printed props (rebuild_props adds it as input_ndim)");
  constexpr int64_t kMaxRank = 64;
  if (*ndim < 0 || *ndim > kMaxRank) p.fail("input_ndim " + std::to_string(*ndim) + " is not a rank");
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') p.fail("not a pattern: '" + text + "'");
  std::vector<int> pattern;
  std::vector<bool> seen(static_cast<size_t>(*ndim), false);
  const std::string_view body = std::string_view(text).substr(1, text.size() - 2);
  size_t start = 0;
  while (start < body.size()) {
    size_t comma = body.find(',', start);
    if (comma == std::string_view::npos) comma = body.size();
    const std::string_view item = body.substr(start, comma - start);
    if (item == "x") {
      pattern.push_back(-1);
    } else {
      int d = -1;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
      if (ec != std::errc() || end != item.data() + item.size() || d < 0 || d >= *ndim || seen[d])
        p.fail("pattern '" + text + "': '" + std::string(item) + "' is not a new dim of an input of rank " +
               std::to_string(*ndim));
      seen[d] = true;
      pattern.push_back(d);
    }
    if (pattern.size() > static_cast<size_t>(kMaxRank)) p.fail("pattern '" + text + "' has too many dims");
    start = comma + 1;
  }
  return std::make_shared<const DimShuffle>(static_cast<int>(*ndim), std::move(pattern));
}

}  // namespace theon::ops
