#include "ops/fused_reduce.hpp"
#include "ops/make_op.hpp"

#include "ops/elemwise.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

namespace theon::ops {

using graph::Apply;

namespace {

bool reduced(const std::vector<int>& axes, int d) { return std::binary_search(axes.begin(), axes.end(), d); }

}  // namespace

FusedReduce::FusedReduce(std::shared_ptr<const Composite> region, ReduceKind kind, std::vector<int> axes,
                         DType out_dtype)
    : region_(std::move(region)), kind_(kind), axes_(std::move(axes)), out_dtype_(out_dtype) {
  if (!region_ || region_->outputs().size() != 1) throw InternalError("FusedReduce: the region must have one output");
  if (kind_ == ReduceKind::Count) throw InternalError("FusedReduce: count is not a reduction to fuse");
  if (!std::is_sorted(axes_.begin(), axes_.end())) throw InternalError("FusedReduce: axes must be sorted");
}

graph::OpProps FusedReduce::props() const {
  graph::OpProps p = region_->props();
  std::string a = "(";
  for (size_t i = 0; i < axes_.size(); ++i) a += (i ? ", " : "") + std::to_string(axes_[i]);
  a += axes_.size() == 1 ? ",)" : ")";
  p.push_back({"reduce", std::string(reduce_kind_name(kind_))});
  p.push_back({"axes", a});
  p.push_back({"dtype", std::string(dtype_name(out_dtype_))});
  return p;
}

std::string FusedReduce::display() const {
  std::string a;
  for (size_t i = 0; i < axes_.size(); ++i) a += (i ? "," : "") + std::to_string(axes_[i]);
  return "FusedReduce{" + std::string(reduce_kind_name(kind_)) + "{axes=(" + a + (axes_.size() == 1 ? ",)" : ")") +
         "}, " + region_->expression(region_->outputs()[0]) + "}";
}

std::vector<Shape> FusedReduce::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const Shape full = broadcast_shapes(node, inputs);
  Shape out;
  for (int d = 0; d < static_cast<int>(full.size()); ++d) {
    if (!reduced(axes_, d)) out.push_back(full[d]);
    else if (full[d] == 0 && (kind_ == ReduceKind::Max || kind_ == ReduceKind::Min))
      throw ValueError(node.describe() + ": zero-size array to reduction operation " +
                       std::string(reduce_kind_name(kind_)) + " which has no identity (the reduced value " +
                       region_->expression(region_->outputs()[0]) + " has shape " + shape_str(full) + ")");
  }
  return {out};
}

graph::Cost FusedReduce::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  int64_t n = 1;
  for (auto& s : input_shapes) n = std::max(n, shape_size(s));
  c.flops = static_cast<double>(n) * static_cast<double>(region_->program().size() + 1);
  return c;
}

std::vector<graph::VarPtr> FusedReduce::L_op(const Apply& node, const std::vector<graph::VarPtr>&) const {
  throw NotImplementedError(node.describe() +
                            ": FusedReduce has no gradient: fusion runs when a function is compiled, after grad() "
                            "built the gradient graph; differentiate the unfused graph instead");
}

}  // namespace theon::ops

namespace theon::ops {

THEON_NOT_REBUILDABLE(FusedReduce, "a fused region holds a scalar program that its props print but do not rebuild")

}  // namespace theon::ops
