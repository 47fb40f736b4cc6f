// theon/graph.hpp: the user's view of graph nodes, and clone with replacements.
#include <theon/error.hpp>
#include <theon/graph.hpp>

#include "api/apply_info.hpp"
#include "graph/node.hpp"
#include "graph/op.hpp"

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
  if (a.dtype != b.dtype || a.ndim() != b.ndim()) fail("dtype and rank must match");
  for (int d = 0; d < a.ndim(); ++d) {
    const int64_t x = a.dims[d], y = b.dims[d];
    if (x >= 0 && y >= 0 && x != y) fail("dim " + std::to_string(d) + " has static size " + std::to_string(x) +
                                         " in one and " + std::to_string(y) + " in the other");
    if (strict && x >= 0 && y < 0)
      fail("dim " + std::to_string(d) + " has static size " + std::to_string(x) +
           " but the replacement's size is unknown (strict=False accepts it)");
  }
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
          for (const VarPtr& in : node->inputs()) ins.push_back(memo.at(in.get()));
          std::vector<graph::TensorType> types;
          for (int i = 0; i < node->num_outputs(); ++i) types.push_back(node->output_raw(i)->type);
          graph::ApplyPtr copy = graph::Apply::make(node->op_ptr(), std::move(ins), std::move(types));
          for (int i = 0; i < node->num_outputs(); ++i) {
            copy->output_raw(i)->name = node->output_raw(i)->name;
            memo[node->output_raw(i)] = copy->output(i);
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
