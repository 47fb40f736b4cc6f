// Var, SharedVar and the operators: thin wrappers over the op builders in src/ops/.
#include <theon/config.hpp>
#include <theon/device.hpp>
#include <theon/error.hpp>
#include <theon/tensor.hpp>
#include <theon/var.hpp>

#include "api/contexts_internal.hpp"
#include "graph/node.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"

#include <unordered_set>

namespace theon {

using graph::VarPtr;

namespace {
const VarPtr& need(const Var& v, const char* what) {
  if (!v.defined()) throw ValueError(std::string(what) + ": use of an undefined Var");
  return v.node();
}
}  // namespace

Bound::Bound(const Var& v) : var(need(v, "slice bound")) {}

Index::Index(const Var& v) {
  const VarPtr& n = need(v, "index");
  if (n->type.ndim() == 0) scalar.var = n;
  else array = n;
}

std::string Var::name() const { return need(*this, "Var::name")->name; }
Var& Var::set_name(const std::string& name) {
  need(*this, "Var::set_name")->name = name;
  return *this;
}
DType Var::dtype() const { return need(*this, "Var::dtype")->type.dtype; }
int Var::ndim() const { return need(*this, "Var::ndim")->type.ndim(); }
std::vector<bool> Var::broadcastable() const {
  std::vector<bool> b;
  for (int64_t d : need(*this, "Var::broadcastable")->type.dims) b.push_back(d == 1);
  return b;
}
std::vector<int64_t> Var::static_shape() const { return need(*this, "Var::static_shape")->type.dims; }
std::string Var::type_str() const { return need(*this, "Var::type_str")->type.str(); }
bool Var::is_output() const { return need(*this, "Var::is_output")->kind == graph::VarKind::Output; }

std::vector<Var> symbolic_inputs(const std::vector<Var>& outputs) {
  std::vector<Var> found;
  std::unordered_set<const graph::Variable*> seen;
  std::vector<graph::VarPtr> stack;
  for (auto it = outputs.rbegin(); it != outputs.rend(); ++it) stack.push_back(need(*it, "symbolic_inputs"));
  while (!stack.empty()) {  // iterative: graphs may be deep
    graph::VarPtr v = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(v.get()).second) continue;
    if (v->kind == graph::VarKind::Input) found.emplace_back(v);
    if (!v->owner) continue;
    const auto& ins = v->owner->inputs();
    for (auto it = ins.rbegin(); it != ins.rend(); ++it) stack.push_back(*it);
  }
  return found;
}

std::string Var::context() const { return need(*this, "Var::context")->type.context; }

Var Var::T() const { return Var(ops::transpose(need(*this, "Var::T"))); }
Var Var::transpose(std::vector<int> axes) const { return Var(ops::transpose(need(*this, "transpose"), std::move(axes))); }
Var Var::dimshuffle(const std::vector<int>& pattern) const {
  return Var(ops::dimshuffle(need(*this, "dimshuffle"), pattern));
}
Var Var::astype(DType dtype) const { return Var(ops::cast(need(*this, "astype"), dtype)); }

Var literal(double value, bool integral) { return Var(ops::literal(value, integral)); }
Var constant(const Array& value, const std::string& name) { return Var(ops::constant(value.copy(), name)); }

SharedVar shared(const Array& value, const std::string& name, const SharedOptions& options) {
  if (!value.defined()) throw ValueError("shared('" + name + "'): the value is an undefined Array");
  require_supported(value.dtype(), "shared('" + name + "')");
  auto storage = std::make_shared<graph::SharedStorage>();
  storage->value = options.borrow ? value : value.copy();
  graph::TensorType t;
  t.dtype = value.dtype();
  t.dims.assign(value.ndim(), graph::kUnknownDim);
  if (!options.broadcastable.empty()) {
    if (static_cast<int>(options.broadcastable.size()) != value.ndim())
      throw ShapeError("shared('" + name + "'): broadcastable has " + std::to_string(options.broadcastable.size()) +
                       " entries for a value of shape " + shape_str(value.shape()));
    for (int d = 0; d < value.ndim(); ++d)
      if (options.broadcastable[d]) {
        if (value.shape()[d] != 1)
          throw ShapeError("shared('" + name + "'): dim " + std::to_string(d) +
                           " is declared broadcastable but the value has shape " + shape_str(value.shape()));
        t.dims[d] = 1;
      }
  }
  if (!options.target.empty()) {
    // Stored on the context's device (copied there for a GPU) and pinned to the name. Where no
    // CUDA device can be used at all, a GPU context's value stays on the host: compiling a
    // function that reads it applies on_fallback (warn: the CPU runs it; raise: an error).
    const runtime::Context where =
        detail::context_named(options.target, "shared('" + name + "', target='" + options.target + "')");
    if (!where.device.is_cpu() && cuda_status().ok) storage->value = to_device(storage->value, where.device);
    else if (!storage->value.on_host()) storage->value = storage->value.to_host();
    t.context = where.name;
  }
  return SharedVar(graph::Variable::make_shared(storage, t, name));
}

Array SharedVar::get_value(bool borrow) const {
  const VarPtr& v = need(*this, "SharedVar::get_value");
  Array a = v->storage->get();
  if (!a.on_host()) return a.to_host();  // a value on the GPU: copied out (borrow cannot apply)
  return borrow ? a : a.copy();
}

void SharedVar::set_value(const Array& value, bool borrow) {
  const VarPtr& v = need(*this, "SharedVar::set_value");
  const std::string what = "set_value of shared variable '" + v->label() + "' (" + v->type.str() + ")";
  if (!value.defined()) throw ValueError(what + ": undefined Array");
  if (value.ndim() != v->type.ndim())
    throw TypeError(what + ": expected rank " + std::to_string(v->type.ndim()) + ", got shape " +
                    shape_str(value.shape()));
  if (!v->type.accepts(value.shape()))
    throw ShapeError(what + ": static shape does not accept shape " + shape_str(value.shape()));
  if (value.dtype() != v->type.dtype)
    throw TypeError(what + ": expected dtype " + std::string(dtype_name(v->type.dtype)) + ", got " +
                    std::string(dtype_name(value.dtype())));
  // A shared variable that lives on a device stays there: the new value is copied in.
  const Array current = v->storage->get();
  if (current.defined() && !current.on_host()) {
    v->storage->set(to_device(value, current.device()));
    return;
  }
  v->storage->set(borrow ? value : value.to_host().copy());
}

Var operator+(const Var& a, const Var& b) { return tensor::add(a, b); }
Var operator-(const Var& a, const Var& b) { return tensor::sub(a, b); }
Var operator*(const Var& a, const Var& b) { return tensor::mul(a, b); }
Var operator/(const Var& a, const Var& b) { return tensor::true_div(a, b); }
Var operator%(const Var& a, const Var& b) { return tensor::mod(a, b); }
Var operator-(const Var& a) { return tensor::neg(a); }
Var operator<(const Var& a, const Var& b) { return tensor::lt(a, b); }
Var operator>(const Var& a, const Var& b) { return tensor::gt(a, b); }
Var operator<=(const Var& a, const Var& b) { return tensor::le(a, b); }
Var operator>=(const Var& a, const Var& b) { return tensor::ge(a, b); }
Var operator&(const Var& a, const Var& b) { return tensor::and_(a, b); }
Var operator|(const Var& a, const Var& b) { return tensor::or_(a, b); }
Var operator^(const Var& a, const Var& b) { return tensor::xor_(a, b); }
Var operator~(const Var& a) { return tensor::invert(a); }

}  // namespace theon
