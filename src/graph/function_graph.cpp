#include "graph/function_graph.hpp"

#include "graph/op.hpp"

#include <theon/error.hpp>

#include <unordered_set>

namespace theon::graph {

std::vector<ApplyPtr> toposort(const std::vector<VarPtr>& outputs) {
  std::vector<ApplyPtr> order;
  std::unordered_set<const Apply*> done, active;
  // Iterative DFS: deep graphs (long chains, unrolled loops) must not overflow the stack.
  std::vector<std::pair<ApplyPtr, size_t>> stack;
  for (const VarPtr& out : outputs) {
    ApplyPtr root = out->owner_ptr();
    if (!root || done.count(root.get())) continue;
    stack.push_back({root, 0});
    active.insert(root.get());
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs().size()) {
        ApplyPtr child = node->input(static_cast<int>(next++))->owner_ptr();
        if (!child || done.count(child.get())) continue;
        if (active.count(child.get())) throw InternalError("toposort: the graph has a cycle at " + child->describe());
        active.insert(child.get());
        stack.push_back({child, 0});
      } else {
        done.insert(node.get());
        active.erase(node.get());
        order.push_back(node);
        stack.pop_back();
      }
    }
  }
  return order;
}

std::vector<VarPtr> graph_leaves(const std::vector<VarPtr>& outputs) {
  std::vector<VarPtr> leaves;
  std::unordered_set<const Variable*> seen;
  auto visit = [&](const VarPtr& v) {
    if (!v->owner && seen.insert(v.get()).second) leaves.push_back(v);
  };
  for (auto& o : outputs) visit(o);
  for (auto& node : toposort(outputs))
    for (auto& in : node->inputs()) visit(in);
  return leaves;
}

FunctionGraph::FunctionGraph(const std::vector<VarPtr>& inputs, const std::vector<VarPtr>& outputs,
                             const std::vector<std::pair<VarPtr, VarPtr>>& givens) {
  std::unordered_map<const Variable*, VarPtr> memo;
  for (const VarPtr& in : inputs) {
    if (in->kind != VarKind::Input)
      throw TypeError("function: input '" + in->label() + "' is not an input variable (it is " +
                      (in->kind == VarKind::Shared ? "a shared variable" : in->kind == VarKind::Constant
                                                                              ? "a constant"
                                                                              : "computed from other variables") +
                      "); use givens= to substitute it");
    if (memo.count(in.get())) throw TypeError("function: input '" + in->label() + "' is given twice");
    VarPtr c = Variable::make_input(in->type, in->name);
    memo[in.get()] = c;
    inputs_.push_back(c);
  }
  std::unordered_map<const Variable*, VarPtr> given;
  for (auto& [old_v, new_v] : givens) {
    if (old_v->type.dtype != new_v->type.dtype || old_v->type.ndim() != new_v->type.ndim())
      throw TypeError("function: givens replaces '" + old_v->label() + "' (" + old_v->type.str() + ") by '" +
                      new_v->label() + "' (" + new_v->type.str() + "): dtype and rank must match");
    given[old_v.get()] = new_v;
  }

  // Clone bottom-up with an explicit stack (long chains must not overflow the C++ stack);
  // a given replaces its variable by the clone of its replacement graph, and the graph
  // above a replaced variable is never visited.
  auto clone = [&](const VarPtr& root) -> VarPtr {
    std::vector<VarPtr> stack{root};
    while (!stack.empty()) {
      VarPtr v = stack.back();
      if (memo.count(v.get())) {
        stack.pop_back();
        continue;
      }
      if (auto g = given.find(v.get()); g != given.end()) {
        if (auto done = memo.find(g->second.get()); done != memo.end()) {
          memo[v.get()] = done->second;
          stack.pop_back();
        } else {
          stack.push_back(g->second);
        }
        continue;
      }
      switch (v->kind) {
        case VarKind::Constant: memo[v.get()] = v; break;  // immutable: share
        case VarKind::Shared: memo[v.get()] = Variable::make_shared(v->storage, v->type, v->name); break;
        case VarKind::Input:
          throw TypeError("function: the graph needs input '" + v->label() + "' (" + v->type.str() +
                          ") but it is not in the inputs list (nor in givens)");
        case VarKind::Output: {
          Apply* owner = v->owner;
          bool ready = true;
          for (auto& in : owner->inputs())
            if (!memo.count(in.get())) {
              stack.push_back(in);
              ready = false;
            }
          if (!ready) continue;
          std::vector<VarPtr> ins;
          for (auto& in : owner->inputs()) ins.push_back(memo.at(in.get()));
          std::vector<TensorType> types;
          for (int i = 0; i < owner->num_outputs(); ++i) types.push_back(owner->output_raw(i)->type);
          ApplyPtr node = Apply::make(owner->op_ptr(), ins, types);
          for (int i = 0; i < owner->num_outputs(); ++i) {
            node->output_raw(i)->name = owner->output_raw(i)->name;
            memo[owner->output_raw(i)] = node->output(i);
          }
          break;
        }
      }
      stack.pop_back();
    }
    return memo.at(root.get());
  };
  for (const VarPtr& o : outputs) outputs_.push_back(clone(o));
  rebuild();
}

void FunctionGraph::rebuild() {
  nodes_ = toposort(outputs_);
  clients_.clear();
  for (auto& node : nodes_)
    for (int i = 0; i < static_cast<int>(node->inputs().size()); ++i)
      clients_[node->input(i).get()].push_back({node.get(), i});
}

std::vector<VarPtr> FunctionGraph::shared_inputs() const {
  std::vector<VarPtr> out;
  for (auto& leaf : graph_leaves(outputs_))
    if (leaf->kind == VarKind::Shared) out.push_back(leaf);
  return out;
}

std::vector<std::pair<Apply*, int>> FunctionGraph::clients(const Variable* v) const {
  auto it = clients_.find(v);
  return it == clients_.end() ? std::vector<std::pair<Apply*, int>>{} : it->second;
}

void FunctionGraph::replace(const VarPtr& old_var, const VarPtr& new_var, const std::string& reason) {
  replace_all({{old_var, new_var}}, reason);
}

void FunctionGraph::replace_all(const std::vector<std::pair<VarPtr, VarPtr>>& pairs, const std::string& reason) {
  for (auto& [old_var, new_var] : pairs) {
    if (!(old_var->type.dtype == new_var->type.dtype && old_var->type.ndim() == new_var->type.ndim()))
      throw InternalError("FunctionGraph::replace" + (reason.empty() ? "" : " (" + reason + ")") + ": type of '" +
                          old_var->label() + "' (" + old_var->type.str() + ") differs from its replacement (" +
                          new_var->type.str() + ")");
    if (new_var->name.empty() && new_var->kind == VarKind::Output) new_var->name = old_var->name;
    for (auto [node, pos] : clients(old_var.get())) node->set_input(pos, new_var);
    for (auto& o : outputs_)
      if (o == old_var) o = new_var;
    // Keep the client index valid for the next pair without a full rebuild.
    auto it = clients_.find(old_var.get());
    if (it != clients_.end()) {
      auto moved = std::move(it->second);
      clients_.erase(it);
      auto& dst = clients_[new_var.get()];
      dst.insert(dst.end(), moved.begin(), moved.end());
    }
  }
  rebuild();
}

void FunctionGraph::change_inputs(const std::vector<InputChange>& changes, const std::string& reason) {
  for (const InputChange& c : changes) {
    const VarPtr& old_var = c.node->input(c.input);
    if (!(old_var->type.dtype == c.value->type.dtype && old_var->type.ndim() == c.value->type.ndim()))
      throw InternalError("FunctionGraph::change_inputs" + (reason.empty() ? "" : " (" + reason + ")") + ": input " +
                          std::to_string(c.input) + " of " + c.node->describe() + " (" + old_var->type.str() +
                          ") cannot become '" + c.value->label() + "' (" + c.value->type.str() + ")");
    c.node->set_input(c.input, c.value);
  }
  rebuild();
}

void FunctionGraph::verify() const {
  std::unordered_set<const Variable*> available;
  for (auto& in : inputs_) available.insert(in.get());
  for (auto& node : nodes_) {
    for (auto& in : node->inputs()) {
      if (in->kind == VarKind::Input && !available.count(in.get()))
        throw InternalError("FunctionGraph::verify: " + node->describe() + " reads a variable that is not an input");
      if (in->kind == VarKind::Output && !available.count(in.get()))
        throw InternalError("FunctionGraph::verify: " + node->describe() + " is not in topological order");
    }
    for (int i = 0; i < node->num_outputs(); ++i) available.insert(node->output_raw(i));
  }
}

}  // namespace theon::graph
