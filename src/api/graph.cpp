// theon/graph.hpp: the user's view of graph nodes, and clone with replacements.
#include <theon/default_update.hpp>
#include <theon/error.hpp>
#include <theon/graph.hpp>

#include "api/apply_info.hpp"
#include "graph/default_updates.hpp"
#include "graph/node.hpp"
#include "graph/op.hpp"
#include "ops/blas.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/nnet.hpp"
#include "ops/reduce.hpp"
#include "ops/sum_to.hpp"

#include <unordered_map>

namespace theon {

using graph::VarKind;
using graph::VarPtr;

namespace {

const VarPtr& need(const Var& v, const char* what) {
  if (!v.defined()) throw ValueError(std::string(what) + ": use of an undefined Var");
  return v.node();
}

Var as_user_var(const VarPtr& v) {
  if (v->kind == VarKind::Shared) return SharedVar(v);
  return Var(v);
}

void check_replacement(const VarPtr& old_v, const VarPtr& new_v, bool strict) {
  const auto& a = old_v->type;
  const auto& b = new_v->type;
  auto fail = [&](const std::string& why) {
    throw TypeError("clone: cannot replace '" + old_v->label() + "' (" + a.str() + ") by '" + new_v->label() + "' (" +
                    b.str() + "): " + why);
  };
  if (a.ndim() != b.ndim()) fail("the rank must match");
  if (!strict) return;  // the nodes above are re-typed (retype below)
  if (a.dtype != b.dtype) fail("the dtype must match (strict=False re-types the graph for another dtype)");
  for (int d = 0; d < a.ndim(); ++d) {
    const int64_t x = a.dims[d], y = b.dims[d];
    if (x >= 0 && x != y && y >= 0)
      fail("dim " + std::to_string(d) + " has static size " + std::to_string(x) + " in one and " + std::to_string(y) +
           " in the other (strict=False re-types the graph)");
    if (x >= 0 && y < 0)
      fail("dim " + std::to_string(d) + " has static size " + std::to_string(x) +
           " but the replacement's size is unknown (strict=False re-types the graph)");
  }
}

// Kinds whose output is the first input's values rearranged or passed through: their output
// has that input's dtype whatever it is.
bool follows_input_dtype(graph::OpKind k) {
  using K = graph::OpKind;
  switch (k) {
    case K::Reshape: case K::BroadcastTo: case K::Subtensor: case K::AdvancedSubtensor1: case K::SumTo:
    case K::Assert: case K::Print: case K::ZeroGrad: case K::DisconnectedGrad: case K::GradClip: case K::GradScale:
    case K::Sort:
      return true;
    default:
      return false;
  }
}

// `node`'s op applied to `ins`, whose types differ from the node's inputs' (clone with
// strict=False), typed as Theano's make_node re-types a node: by the op's builder where the
// output type depends on the inputs' in a way of its own (promotion, reductions, dot), else the
// node's output types with the dtype the kind follows and every static size left unknown (a
// sound type: sizes are checked when the function runs).
std::vector<VarPtr> retype(const graph::Apply& node, const std::vector<VarPtr>& ins) {
  using K = graph::OpKind;
  const graph::Op& op = node.op();
  switch (op.kind()) {
    case K::Elemwise: {
      const auto& e = static_cast<const ops::Elemwise&>(op);
      return {e.scalar() == ops::ScalarOpId::Cast ? ops::cast(ins[0], e.out_dtype()) : ops::elemwise(e.scalar(), ins)};
    }
    case K::Sum: case K::Prod: case K::Max: case K::Min: case K::Any: case K::All: case K::Mean: {
      const auto& r = static_cast<const ops::Reduce&>(op);
      return {ops::reduce(r.reduce_kind(), ins[0], r.axes(), false)};
    }
    case K::Count: {
      const auto& r = static_cast<const ops::Reduce&>(op);
      return {ops::reduce_count(ins[0], r.axes(), r.out_dtype())};
    }
    case K::Dot: return {ops::dot(ins[0], ins[1])};
    case K::DimShuffle: return {ops::dimshuffle(ins[0], static_cast<const ops::DimShuffle&>(op).pattern())};
    case K::Softmax: case K::LogSoftmax: {
      const auto& sm = static_cast<const ops::Softmax&>(op);
      return {ops::softmax(ins[0], sm.axis(), sm.is_log())};
    }
    default: break;
  }
  bool same_dtypes = true;
  for (size_t i = 0; i < ins.size(); ++i) same_dtypes = same_dtypes && ins[i]->type.dtype == node.input(i)->type.dtype;
  const bool follow = follows_input_dtype(op.kind()) && !ins.empty();
  if (!same_dtypes && !follow)
    throw NotImplementedError("clone(strict=False): cannot re-type " + node.describe() + " (" +
                              std::string(graph::kind_name(op.kind())) +
                              ") for a replacement of another dtype; replace by a variable of the same dtype");
  std::vector<graph::TensorType> types;
  for (int i = 0; i < node.num_outputs(); ++i) {
    graph::TensorType t = node.output_raw(i)->type;
    if (follow && i == 0) t.dtype = ins[0]->type.dtype;
    for (int64_t& d : t.dims) d = graph::kUnknownDim;
    types.push_back(t);
  }
  return graph::Apply::make(node.op_ptr(), ins, std::move(types))->outputs();
}

}  // namespace

VarRole role(const Var& v) {
  switch (need(v, "role")->kind) {
    case VarKind::Input: return VarRole::Input;
    case VarKind::Output: return VarRole::Output;
    case VarKind::Constant: return VarRole::Constant;
    case VarKind::Shared: return VarRole::Shared;
  }
  throw InternalError("role: unknown variable kind");
}

namespace detail {
ApplyInfo apply_info(const graph::Apply& node, int index) {
  ApplyInfo info;
  const graph::Op& op = node.op();
  info.op = op.display();
  info.op_kind = op.name();
  info.op_props = op.props();
  info.op_pure = op.pure();
  for (const VarPtr& in : node.inputs()) info.inputs.push_back(as_user_var(in));
  for (int i = 0; i < node.num_outputs(); ++i) info.outputs.emplace_back(node.output(i));
  info.index = index;
  info.id = reinterpret_cast<uintptr_t>(&node);
  return info;
}
}  // namespace detail

std::optional<ApplyInfo> owner(const Var& v) {
  const VarPtr& n = need(v, "owner");
  graph::ApplyPtr node = n->owner_ptr();
  if (!node) return std::nullopt;
  return detail::apply_info(*node, n->index);
}

Array constant_value(const Var& v) {
  const VarPtr& n = need(v, "constant_value");
  if (n->kind != VarKind::Constant) throw ValueError("constant_value: '" + n->label() + "' is not a constant");
  return n->constant.copy();
}

void set_default_update(const SharedVar& s, const std::optional<Var>& update) {
  const VarPtr& t = need(s, "set_default_update");
  if (t->kind != VarKind::Shared)
    throw TypeError("default_update: '" + t->label() + "' is not a shared variable (only a shared variable has one)");
  if (!update) {
    t->default_update.reset();
    graph::set_default_update_template(t, std::nullopt);
    return;
  }
  const VarPtr& u = need(*update, "set_default_update: the update");
  // The check function() makes of an update, made when the update is given (a clearer place).
  if (u->type.dtype != t->type.dtype || u->type.ndim() != t->type.ndim())
    throw TypeError("default_update of '" + t->label() + "' (" + t->type.str() + "): the update has type " +
                    u->type.str() + "; an update must keep the shared variable's dtype and rank (cast it)");
  t->default_update = u;
  // Kept for as long as s lives, over a placeholder instead of s (graph/default_updates.hpp):
  // the update's graph reads s, and s holding it would be a cycle that nothing frees.
  const VarPtr placeholder = graph::Variable::make_input(t->type, t->name);
  const Var over_placeholder = clone({*update}, {{s, Var(placeholder)}})[0];
  graph::set_default_update_template(t, graph::DefaultUpdateTemplate{over_placeholder.node(), placeholder});
}

std::optional<Var> default_update(const SharedVar& s) {
  const VarPtr& t = need(s, "default_update");
  if (VarPtr u = t->default_update.lock()) return as_user_var(u);  // the update the caller made
  const std::optional<graph::DefaultUpdateTemplate> kept = graph::default_update_template(*t);
  if (!kept) return std::nullopt;
  return clone({Var(kept->update)}, {{Var(kept->placeholder), s}})[0];
}

std::vector<Var> clone(const std::vector<Var>& outputs, const std::vector<std::pair<Var, Var>>& replace, bool strict,
                       bool share_inputs) {
  std::unordered_map<const graph::Variable*, VarPtr> memo;
  for (const auto& [o, r] : replace) {
    const VarPtr& old_v = need(o, "clone: a replaced variable");
    const VarPtr& new_v = need(r, "clone: a replacement");
    check_replacement(old_v, new_v, strict);
    if (memo.count(old_v.get())) throw ValueError("clone: '" + old_v->label() + "' is replaced twice");
    memo[old_v.get()] = new_v;
  }
  std::vector<Var> result;
  for (const Var& out : outputs) {
    // Bottom-up with an explicit stack: deep graphs must not overflow the C++ stack.
    std::vector<VarPtr> stack{need(out, "clone: an output")};
    while (!stack.empty()) {
      VarPtr v = stack.back();
      if (memo.count(v.get())) {
        stack.pop_back();
        continue;
      }
      switch (v->kind) {
        case VarKind::Constant: memo[v.get()] = v; break;  // immutable: shared either way
        case VarKind::Input:
          memo[v.get()] = share_inputs ? v : graph::Variable::make_input(v->type, v->name);
          break;
        case VarKind::Shared:
          if (share_inputs) {
            memo[v.get()] = v;
          } else {
            VarPtr c = graph::Variable::make_shared(v->storage, v->type, v->name);
            c->default_update = v->default_update;
            memo[v.get()] = c;
          }
          break;
        case VarKind::Output: {
          graph::Apply* node = v->owner;
          bool ready = true;
          for (const VarPtr& in : node->inputs())
            if (!memo.count(in.get())) {
              stack.push_back(in);
              ready = false;
            }
          if (!ready) continue;
          std::vector<VarPtr> ins;
          bool retyped = false;
          for (const VarPtr& in : node->inputs()) {
            ins.push_back(memo.at(in.get()));
            retyped = retyped || ins.back()->type != in->type;
          }
          std::vector<VarPtr> outs;
          if (retyped && !strict) {
            outs = retype(*node, ins);
          } else {
            std::vector<graph::TensorType> types;
            for (int i = 0; i < node->num_outputs(); ++i) types.push_back(node->output_raw(i)->type);
            outs = graph::Apply::make(node->op_ptr(), std::move(ins), std::move(types))->outputs();
          }
          for (int i = 0; i < node->num_outputs(); ++i) {
            if (outs[i]->name.empty()) outs[i]->name = node->output_raw(i)->name;
            memo[node->output_raw(i)] = outs[i];
          }
          break;
        }
      }
      stack.pop_back();
    }
    result.push_back(as_user_var(memo.at(out.node().get())));
  }
  return result;
}

}  // namespace theon
