#include "ops/elemwise.hpp"
#include "ops/make_op.hpp"

#include "graph/user_names.hpp"
#include "ops/dimshuffle.hpp"
#include "util/checked_size.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

#include <algorithm>

namespace theon::ops {

using graph::Apply;
using graph::TensorType;
using graph::VarPtr;
using graph::Variable;

namespace {

const ScalarOpInfo kScalarOps[] = {
#define THEON_SCALAR_OP(functor, name, arity, kind) {name, arity, ScalarKind::kind, #functor},
#include <theon/scalar_ops.def>
#undef THEON_SCALAR_OP
};

std::string call_text(std::string_view op, const std::vector<VarPtr>& inputs) {
  std::string s = std::string(op) + "(";
  for (size_t i = 0; i < inputs.size(); ++i) s += (i ? ", " : "") + inputs[i]->label();
  return s + ")";
}

std::string type_list(const std::vector<VarPtr>& inputs) {
  std::string s;
  for (size_t i = 0; i < inputs.size(); ++i) s += (i ? ", " : "") + inputs[i]->label() + ": " + inputs[i]->type.str();
  return s;
}

// Ops that NumPy defines on bool arrays without leaving bool (add = or, mul = and).
bool keeps_bool(ScalarOpId id) {
  switch (id) {
    case ScalarOpId::Identity: case ScalarOpId::Add: case ScalarOpId::Mul: case ScalarOpId::Maximum:
    case ScalarOpId::Minimum: case ScalarOpId::Clip: return true;
    default: return false;
  }
}

}  // namespace

const ScalarOpInfo& scalar_op_info(ScalarOpId id) { return kScalarOps[static_cast<int>(id)]; }

ScalarOpId scalar_op_by_name(std::string_view name) {
  for (int i = 0; i < static_cast<int>(ScalarOpId::Count); ++i)
    if (kScalarOps[i].name == name) return static_cast<ScalarOpId>(i);
  throw ValueError("unknown scalar op '" + std::string(name) + "'");
}

graph::OpProps Elemwise::props() const {
  graph::OpProps p = {{"", std::string(scalar_op_info(scalar_).name)}};
  if (scalar_ == ScalarOpId::Cast) p.push_back({"", std::string(dtype_name(out_dtype_))});
  if (inplace_ >= 0) p.push_back({"", "inplace(" + std::to_string(inplace_) + ")"});
  return p;
}

std::string Elemwise::render(const std::vector<std::string>& inputs, int) const {
  std::string s = std::string(scalar_op_info(scalar_).name);
  if (scalar_ == ScalarOpId::Cast) s += "{" + std::string(dtype_name(out_dtype_)) + "}";
  s += "(";
  for (size_t i = 0; i < inputs.size(); ++i) s += (i ? ", " : "") + inputs[i];
  return s + ")";
}

VarPtr literal(double value, bool integral) {
  DType t = integral ? DType::Int64 : DType::Float64;
  return Variable::make_constant(Array::scalar(value, t), /*weak=*/true);
}

VarPtr constant(Array value, std::string name) {
  return Variable::make_constant(std::move(value), /*weak=*/false, std::move(name));
}

VarPtr cast(const VarPtr& x, DType dtype) {
  require_supported(dtype, "cast(" + x->label() + ")");
  if (x->type.dtype == dtype) return x;
  if (x->kind == graph::VarKind::Constant)  // fold at build time: literals become typed constants
    return Variable::make_constant(x->constant.astype(dtype), /*weak=*/false, x->name);
  TensorType t = x->type;
  t.dtype = dtype;
  return graph::make_output(std::make_shared<Elemwise>(ScalarOpId::Cast, dtype), {x}, t);
}

VarPtr elemwise(ScalarOpId id, std::vector<VarPtr> inputs) {
  const ScalarOpInfo& info = scalar_op_info(id);
  const std::string what = call_text(info.name, inputs);
  if (static_cast<int>(inputs.size()) != info.arity)
    throw TypeError(what + ": expected " + std::to_string(info.arity) + " inputs, got " + std::to_string(inputs.size()));
  if (info.kind == ScalarKind::Cast) throw InternalError(what + ": use ops::cast");
  for (auto& in : inputs) require_supported(in->type.dtype, what);

  // Dtype rule: NEP 50 promotion over the value inputs, then the op kind's rule.
  size_t first_value = info.kind == ScalarKind::Select ? 1 : 0;
  std::vector<DTypeOperand> operands;
  for (size_t i = first_value; i < inputs.size(); ++i) operands.push_back({inputs[i]->type.dtype, inputs[i]->weak});
  DType compute = result_type(operands, config().floatX);
  DType out = compute;
  switch (info.kind) {
    case ScalarKind::Arith:
      if (compute == DType::Bool && !keeps_bool(id)) {
        if (id == ScalarOpId::Sub || id == ScalarOpId::Neg)
          throw TypeError(what + ": " + std::string(info.name) +
                          " is not supported for bool inputs (use xor / not instead); inputs: " + type_list(inputs));
        compute = out = DType::Int8;
      }
      break;
    case ScalarKind::FloatFn: compute = out = upcast_to_float(compute); break;
    case ScalarKind::Compare: out = DType::Bool; break;
    case ScalarKind::Logic:
      if (is_float(compute))
        throw TypeError(what + ": " + std::string(info.name) + " needs bool or integer inputs; inputs: " + type_list(inputs));
      break;
    case ScalarKind::Select: break;
    case ScalarKind::Cast: break;
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    inputs[i] = cast(inputs[i], i < first_value ? DType::Bool : compute);

  // Align ranks by prepending broadcastable dims, as NumPy does.
  int nd = 0;
  for (auto& in : inputs) nd = std::max(nd, in->type.ndim());
  for (auto& in : inputs)
    if (in->type.ndim() < nd) {
      std::vector<int> pattern(nd - in->type.ndim(), -1);
      for (int d = 0; d < in->type.ndim(); ++d) pattern.push_back(d);
      in = dimshuffle(in, pattern);
    }
  std::vector<const TensorType*> types;
  for (auto& in : inputs) types.push_back(&in->type);
  TensorType t;
  t.dtype = out;
  try {
    t.dims = graph::broadcast_static_dims(types, what);
  } catch (ShapeError& e) {
    e.add_context("inputs: " + type_list(inputs));
    throw;
  }
  return graph::make_output(std::make_shared<Elemwise>(id, out), std::move(inputs), t);
}

Shape broadcast_shapes(const Apply& node, const std::vector<Array>& inputs) {
  if (inputs.empty()) return {};
  Shape out(inputs[0].ndim(), 1);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Array& a = inputs[k];
    if (a.ndim() != static_cast<int>(out.size()))
      throw InternalError(node.describe() + ": inputs of different ranks reached the kernel");
    for (int d = 0; d < a.ndim(); ++d) {
      int64_t n = a.shape()[d];
      if (n == 1) continue;
      if (out[d] != 1 && out[d] != n) {
        // Named as the user wrote them: y (4,), not the (1, 4) view rank alignment made of it.
        // Size-1 constants (literals, already broadcast at build time) cannot disagree: left out.
        std::string shapes;
        for (size_t j = 0; j < inputs.size(); ++j) {
          const graph::Variable& in = *node.input(static_cast<int>(j));
          if (in.kind == graph::VarKind::Constant && inputs[j].size() == 1) continue;
          shapes += (shapes.empty() ? "" : ", ") + graph::user_value(in, inputs[j].shape());
        }
        const int from_end = static_cast<int>(out.size()) - d;  // ranks differ; NumPy aligns at the end
        throw ShapeError(graph::user_describe(node) + ": shapes cannot be broadcast together: " + shapes + " (" +
                         (from_end == 1 ? std::string("last dimension") : "dimension -" + std::to_string(from_end)) +
                         ": " + std::to_string(out[d]) + " vs " + std::to_string(n) + ")");
      }
      out[d] = n;
    }
  }
  detail::checked_size(out, [&] { return node.describe(); });  // broadcast views can make any shape
  return out;
}

std::vector<Shape> Elemwise::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  return {broadcast_shapes(node, inputs)};
}

graph::Cost Elemwise::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  int64_t n = 1;
  for (auto& s : input_shapes) n = std::max(n, shape_size(s));
  c.flops = static_cast<double>(n);
  c.bytes += static_cast<double>(n) * static_cast<double>(itemsize(out_dtype_));
  return c;
}

}  // namespace theon::ops

namespace theon::ops {

// Props: the scalar op's name, a Cast's dtype, "inplace(k)"; a non-cast op's output dtype
// (promotion decides it, so it is not printed) comes as "out_dtype" (rebuild_props).
template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Elemwise>(PropReader& p) {
  const std::string name = p.text("");
  ScalarOpId scalar{};
  try {
    scalar = scalar_op_by_name(name);
  } catch (const ValueError& e) {
    p.fail(e.what());
  }
  DType out{};
  if (scalar == ScalarOpId::Cast) {
    out = p.dtype("");
  } else {
    const std::optional<DType> given = p.dtype_or_none("out_dtype");
    if (!given)
      p.not_rebuildable("the output dtype of a non-cast Elemwise is not among its printed props (rebuild_props "
                        "adds it as out_dtype)");
    out = *given;
  }
  int inplace = -1;
  const std::string destroys = p.text("", "");
  if (!destroys.empty()) {
    const std::string head = "inplace(";
    char* end = nullptr;
    const long k = destroys.rfind(head, 0) == 0 ? std::strtol(destroys.c_str() + head.size(), &end, 10) : -1;
    const int arity = scalar_op_info(scalar).arity;
    if (k < 0 || end == nullptr || std::string_view(end) != ")" || (arity > 0 && k >= arity))
      p.fail("expected inplace(k) with k an input of " + name + ", got '" + destroys + "'");
    inplace = static_cast<int>(k);
  }
  return std::make_shared<const Elemwise>(scalar, out, inplace);
}

}  // namespace theon::ops
