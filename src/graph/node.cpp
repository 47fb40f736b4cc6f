#include "graph/node.hpp"

#include "graph/op.hpp"

#include <theon/error.hpp>

#include <functional>

namespace theon::graph {

std::string Variable::label() const {
  if (!name.empty()) return name;
  if (kind == VarKind::Constant && constant.defined() && constant.size() == 1) {
    double v = constant.item();
    std::string s = std::to_string(v);
    if (!is_float(constant.dtype())) s = std::to_string(static_cast<int64_t>(v));
    else {
      s.erase(s.find_last_not_of('0') + 1);
      if (!s.empty() && s.back() == '.') s += '0';
    }
    return s;
  }
  return "<" + std::string(dtype_name(type.dtype)) + " " + type.kind() + " #" + std::to_string(id) + ">";
}

ApplyPtr Variable::owner_ptr() const { return owner ? owner->shared_from_this() : nullptr; }

VarPtr Variable::make_input(TensorType type, std::string name) {
  auto v = std::make_shared<Variable>();
  v->type = std::move(type);
  v->name = std::move(name);
  v->kind = VarKind::Input;
  return v;
}

VarPtr Variable::make_constant(Array value, bool weak, std::string name) {
  auto v = std::make_shared<Variable>();
  v->type.dtype = value.dtype();
  v->type.dims.assign(value.shape().begin(), value.shape().end());
  v->constant = std::move(value);
  v->weak = weak;
  v->name = std::move(name);
  v->kind = VarKind::Constant;
  return v;
}

VarPtr Variable::make_shared(std::shared_ptr<SharedStorage> storage, TensorType type, std::string name) {
  auto v = std::make_shared<Variable>();
  v->type = std::move(type);
  v->storage = std::move(storage);
  v->name = std::move(name);
  v->kind = VarKind::Shared;
  return v;
}

namespace {
thread_local std::string t_context_scope;
}  // namespace

const std::string& context_scope() { return t_context_scope; }
void set_context_scope(std::string context_name) { t_context_scope = std::move(context_name); }

ApplyPtr Apply::make(std::shared_ptr<const Op> op, std::vector<VarPtr> inputs, std::vector<TensorType> output_types) {
  for (auto& in : inputs)
    if (!in) throw InternalError(op->display() + ": null input");
  // Inside a context scope every new node's outputs are pinned to it; a Transfer's output
  // stays on the context it moves the value to.
  if (!t_context_scope.empty() && op->kind() != OpKind::Transfer)
    for (TensorType& t : output_types) t.context = t_context_scope;
  ApplyPtr node(new Apply());
  node->op_ = std::move(op);
  node->inputs_ = std::move(inputs);
  for (size_t i = 0; i < output_types.size(); ++i) {
    auto v = std::make_unique<Variable>();
    v->type = std::move(output_types[i]);
    v->kind = VarKind::Output;
    v->owner = node.get();
    v->index = static_cast<int>(i);
    node->outputs_.push_back(std::move(v));
  }
  return node;
}

Apply::~Apply() {
  // The outermost destructor drains a worklist; nested ones (triggered by dropping the last
  // reference to an input's owner) only hand their inputs to it.
  thread_local std::vector<VarPtr>* pending = nullptr;
  if (pending) {
    for (auto& in : inputs_) pending->push_back(std::move(in));
    return;
  }
  std::vector<VarPtr> work;
  pending = &work;
  for (auto& in : inputs_) work.push_back(std::move(in));
  while (!work.empty()) {
    VarPtr v = std::move(work.back());
    work.pop_back();
    v.reset();  // may run ~Apply of its owner, which appends to `work`
  }
  pending = nullptr;
}

VarPtr Apply::output(int i) const { return VarPtr(shared_from_this(), outputs_.at(i).get()); }

std::vector<VarPtr> Apply::outputs() const {
  std::vector<VarPtr> out;
  for (int i = 0; i < num_outputs(); ++i) out.push_back(output(i));
  return out;
}

std::string Apply::describe() const {
  std::string s = op_->display() + "(";
  for (size_t i = 0; i < inputs_.size(); ++i) s += (i ? ", " : "") + inputs_[i]->label();
  return s + ")";
}

VarPtr make_output(std::shared_ptr<const Op> op, std::vector<VarPtr> inputs, TensorType type) {
  return Apply::make(std::move(op), std::move(inputs), {std::move(type)})->output(0);
}

std::optional<OpKind> kind_from_name(std::string_view name) {
  for (const OpKindInfo& info : op_kinds)
    if (info.name == name) return info.kind;
  return std::nullopt;
}

std::string Op::display() const {
  OpProps p = props();
  if (p.empty()) return name();
  std::string s = name() + "{";
  for (size_t i = 0; i < p.size(); ++i) {
    if (i) s += ", ";
    s += p[i].first.empty() ? p[i].second : p[i].first + "=" + p[i].second;
  }
  return s + "}";
}

size_t Op::hash() const {
  size_t h = std::hash<std::string>()(name());
  for (auto& [k, v] : props()) h = h * 1000003u ^ std::hash<std::string>()(k + "=" + v);
  return h;
}

std::vector<VarPtr> Op::L_op(const Apply&, const std::vector<VarPtr>&) const {
  throw NotImplementedError(display() + ": gradient not implemented");
}

void Op::perform(const Apply&, const std::vector<Array>&, std::vector<Array>&) const {
  throw InternalError(name() + " has no reference implementation in ops/; its kernels live in backends");
}

std::vector<VarPtr> Op::R_op(const Apply&, const std::vector<VarPtr>&) const {
  throw NotImplementedError(display() + ": R_op (forward-mode derivative) not implemented");
}

std::string Op::render(const std::vector<std::string>& inputs, int output) const {
  std::string s = display() + "(";
  for (size_t i = 0; i < inputs.size(); ++i) s += (i ? ", " : "") + inputs[i];
  s += ")";
  if (output > 0) s += "[output " + std::to_string(output) + "]";
  return s;
}

Cost Op::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  Cost c;
  for (size_t i = 0; i < input_shapes.size(); ++i)
    c.bytes += static_cast<double>(shape_size(input_shapes[i]) * itemsize(node.input(static_cast<int>(i))->type.dtype));
  return c;
}

}  // namespace theon::graph
