// theon/serialize.hpp: nodes as records (kind, props, inputs, output types) and back, for
// pickling graphs. Ops come back only through make_op, which validates the props.
#include <theon/error.hpp>
#include <theon/serialize.hpp>

#include "autodiff/grad_ops.hpp"
#include "graph/node.hpp"
#include "graph/op.hpp"
#include "ops/elemwise.hpp"
#include "ops/make_op.hpp"
#include "ops/reduce.hpp"

namespace theon {

namespace {

const graph::VarPtr& need(const Var& v, const char* what) {
  if (!v.defined()) throw ValueError(std::string(what) + ": use of an undefined Var");
  return v.node();
}

Var as_user_var(const graph::VarPtr& v) {
  if (v->kind == graph::VarKind::Shared) return SharedVar(v);
  return Var(v);
}

// The dtype an op fixes for its output 0 (Elemwise, Reduce), to check a record's type against.
std::optional<DType> fixed_out_dtype(const graph::Op& op) {
  if (const auto* e = graph::op_if<ops::Elemwise>(op)) return e->out_dtype();
  if (ops::is_reduce(op.kind())) return static_cast<const ops::Reduce&>(op).out_dtype();
  return std::nullopt;
}

}  // namespace

std::optional<NodeRecord> node_record(const Var& v) {
  autodiff::register_op_factories();  // the gradient ops are rebuilt through make_op too
  const graph::VarPtr& var = need(v, "node_record");
  const graph::ApplyPtr node = var->owner_ptr();
  if (!node) return std::nullopt;
  const graph::Op& op = node->op();
  NodeRecord r;
  r.kind = op.name();
  r.props = ops::rebuild_props(op);
  try {
    (void)ops::make_op(op.kind(), r.props);
  } catch (const NotImplementedError& e) {
    throw NotImplementedError("cannot save '" + var->label() + "': it is computed by " + node->describe() +
                              ", which cannot be rebuilt (" + e.what() + ")");
  }
  for (const graph::VarPtr& in : node->inputs()) r.inputs.push_back(as_user_var(in));
  for (int i = 0; i < node->num_outputs(); ++i) {
    r.outputs.push_back(Var(node->output(i)));  // its type carries its context (Var::context)
  }
  r.index = var->index;
  return r;
}

std::vector<Var> rebuild_node(const std::string& kind_name,
                              const std::vector<std::pair<std::string, std::string>>& props,
                              const std::vector<Var>& inputs, const std::vector<OutputRecord>& outputs) {
  autodiff::register_op_factories();
  const std::optional<graph::OpKind> kind = graph::kind_from_name(kind_name);
  if (!kind) throw ValueError("rebuild_node: unknown op kind '" + kind_name + "'");
  const std::shared_ptr<const graph::Op> op = ops::make_op(*kind, props);
  const std::string what = "rebuild_node(" + op->display() + ")";
  std::vector<graph::VarPtr> ins;
  ins.reserve(inputs.size());
  for (const Var& in : inputs) ins.push_back(need(in, what.c_str()));
  if (outputs.empty()) throw ValueError(what + ": a node has at least one output");
  if (const auto* e = graph::op_if<ops::Elemwise>(*op)) {
    const int arity = ops::scalar_op_info(e->scalar()).arity;
    if (arity > 0 && static_cast<int>(ins.size()) != arity)
      throw ValueError(what + ": takes " + std::to_string(arity) + " input(s), got " + std::to_string(ins.size()));
  }
  std::vector<graph::TensorType> types;
  for (const OutputRecord& o : outputs) {
    graph::TensorType t;
    try {
      t.dtype = parse_dtype(o.dtype);
    } catch (const ValueError& e) {
      throw ValueError(what + ": output '" + o.name + "': " + e.what());
    }
    for (const int64_t d : o.shape)
      if (d < -1) throw ValueError(what + ": output '" + o.name + "' has a size " + std::to_string(d));
    t.dims = o.shape;
    t.context = o.context;
    types.push_back(std::move(t));
  }
  if (const std::optional<DType> fixed = fixed_out_dtype(*op); fixed && *fixed != types[0].dtype)
    throw ValueError(what + ": the op computes " + std::string(dtype_name(*fixed)) + ", the output is recorded as " +
                     outputs[0].dtype);
  const graph::ApplyPtr node = graph::Apply::make(op, std::move(ins), std::move(types));
  std::vector<Var> result;
  for (int i = 0; i < node->num_outputs(); ++i) {
    graph::VarPtr out = node->output(i);
    out->name = outputs[i].name;
    result.push_back(Var(std::move(out)));
  }
  return result;
}

bool is_weak_constant(const Var& v) {
  const graph::VarPtr& var = need(v, "is_weak_constant");
  return var->kind == graph::VarKind::Constant && var->weak;
}

Var make_constant(const Array& value, bool weak, const std::string& name) {
  if (!value.defined()) throw ValueError("make_constant('" + name + "'): the value is an undefined Array");
  return Var(graph::Variable::make_constant(value.copy(), weak, name));
}

}  // namespace theon
