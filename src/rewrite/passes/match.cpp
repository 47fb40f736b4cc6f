#include "rewrite/passes/match.hpp"

#include "graph/op.hpp"
#include "ops/elemwise.hpp"
#include "util/dispatch.hpp"

#include <algorithm>

namespace theon::rewrite {

using graph::Apply;
using graph::VarPtr;
using ops::ScalarOpId;

const ops::Elemwise* elemwise_is(const Apply& node, ScalarOpId id) {
  const auto* op = graph::op_if<ops::Elemwise>(node.op());
  return op && op->scalar() == id ? op : nullptr;
}

const Apply* elemwise_owner(const VarPtr& v, ScalarOpId id) {
  return v->owner && elemwise_is(*v->owner, id) ? v->owner : nullptr;
}

const Array* constant_through(const VarPtr& v) {
  auto passthrough = [](const Apply* a) {
    if (a->inputs().size() != 1) return false;
    return a->op().kind() == graph::OpKind::DimShuffle || elemwise_is(*a, ScalarOpId::Cast);
  };
  const graph::Variable* p = v.get();
  while (p->owner && passthrough(p->owner)) p = p->owner->input(0).get();
  return p->kind == graph::VarKind::Constant ? &p->constant : nullptr;
}

bool single_use(const graph::FunctionGraph& fg, const VarPtr& v) {
  if (fg.clients(v.get()).size() != 1) return false;
  return std::find(fg.outputs().begin(), fg.outputs().end(), v) == fg.outputs().end();
}

bool is_constant_all(const VarPtr& v, double value) {
  const Array* c = constant_through(v);
  if (!c || c->size() == 0) return false;
  Array a = c->contiguous();
  return detail::visit_dtype(a.dtype(), [&]<class T>() {
    const T* p = a.data<T>();
    for (int64_t i = 0; i < a.size(); ++i)
      if (static_cast<double>(p[i]) != value) return false;
    return true;
  });
}

VarPtr relu_mask_from_output(graph::FunctionGraph& fg, Apply& node, const std::function<bool(const VarPtr&)>& foldable) {
  if (!elemwise_is(node, ScalarOpId::Gt) || !is_constant_all(node.input(1), 0)) return nullptr;
  const VarPtr& z = node.input(0);
  if (!foldable(z)) return nullptr;
  for (const auto& [client, idx] : fg.clients(z.get())) {
    (void)idx;
    if (!client || client == &node || !elemwise_is(*client, ScalarOpId::Relu)) continue;
    const VarPtr r = client->output(0);
    if (r->type != z->type) continue;
    VarPtr mask = ops::elemwise(ScalarOpId::Gt, {r, node.input(1)});
    return mask->type == node.output_raw(0)->type ? mask : nullptr;
  }
  return nullptr;
}

}  // namespace theon::rewrite
