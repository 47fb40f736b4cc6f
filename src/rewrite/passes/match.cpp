#include "rewrite/passes/match.hpp"

#include "graph/op.hpp"
#include "ops/elemwise.hpp"
#include "ops/nnet.hpp"
#include "ops/nnet_fused.hpp"
#include "util/dispatch.hpp"

#include <algorithm>
#include <functional>
#include <map>

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
  return detail::visit_storage_dtype(a.dtype(), [&]<class T>() {  // float16 constants too
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

/// A client that reads only the shape of its input `idx`: SumTo's `like`, Shape.
bool shape_only(const Apply& client, int idx) {
  const graph::OpKind k = client.op().kind();
  return (k == graph::OpKind::SumTo && idx == 1) || k == graph::OpKind::Shape;
}

/// Used by `user` only (and not a graph output), apart from clients that read its shape?
/// Those are returned in `shape_clients`: the fold rebuilds them on the fused value (same
/// run-time shape). Gradient graphs have them: an add's gradient is sum_to(g, like=operand).
bool single_use(const graph::FunctionGraph& fg, const VarPtr& v, const Apply& user, std::vector<Apply*>* shape_clients) {
  if (std::find(fg.outputs().begin(), fg.outputs().end(), v) != fg.outputs().end()) return false;
  int users = 0;
  for (const auto& [client, idx] : fg.clients(v.get())) {
    if (client == &user) {
      ++users;
    } else if (shape_clients && client && shape_only(*client, idx)) {
      if (std::find(shape_clients->begin(), shape_clients->end(), client) == shape_clients->end())
        shape_clients->push_back(client);
    } else {
      return false;
    }
  }
  return users == 1;
}

/// (old, new) pairs: `node`'s output 0 becomes `fused`, and each shape client of `old` is
/// rebuilt (same op, same output types) reading `fused` instead; a shape client reading
/// another one (sum_to(sum_to(g, z), z)) reads that one's rebuilt node.
Replacements with_shape_clients(Apply& node, const VarPtr& old, const VarPtr& fused,
                                const std::vector<Apply*>& shape_clients) {
  if (fused->type != node.output_raw(0)->type) return {};
  Replacements r = {{node.output(0), fused}};
  std::map<const Apply*, graph::ApplyPtr> rebuilt;
  std::function<graph::ApplyPtr(Apply*)> rebuild = [&](Apply* c) -> graph::ApplyPtr {
    if (auto it = rebuilt.find(c); it != rebuilt.end()) return it->second;
    std::vector<VarPtr> ins = c->inputs();
    for (VarPtr& in : ins) {
      if (in == old) {
        in = fused;
      } else if (in->owner && std::find(shape_clients.begin(), shape_clients.end(), in->owner) != shape_clients.end()) {
        Apply* producer = in->owner;
        for (int i = 0; i < producer->num_outputs(); ++i)
          if (producer->output_raw(i) == in.get()) in = rebuild(producer)->output(i);
      }
    }
    std::vector<graph::TensorType> types;
    for (int i = 0; i < c->num_outputs(); ++i) types.push_back(c->output_raw(i)->type);
    return rebuilt[c] = Apply::make(c->op_ptr(), ins, types);
  };
  for (Apply* c : shape_clients) {
    const graph::ApplyPtr n = rebuild(c);
    for (int i = 0; i < c->num_outputs(); ++i) r.emplace_back(c->output(i), n->output(i));
  }
  return r;
}

Replacements softmax_crossentropy_fusion(graph::FunctionGraph&, Apply& xent) {
  const VarPtr &p = xent.input(0), &labels = xent.input(1);
  if (!p->owner || p->owner->op().kind() != graph::OpKind::Softmax || p->owner->num_outputs() != 1) return {};
  const auto& sm_op = static_cast<const ops::Softmax&>(p->owner->op());
  const VarPtr& x = p->owner->input(0);
  if (sm_op.axis() != 1 || x->type.ndim() != 2 || !is_float(x->type.dtype)) return {};
  if (labels->type.ndim() != 1 || !is_integer(labels->type.dtype)) return {};
  std::vector<VarPtr> fused = ops::softmax_crossentropy(x, labels);
  const VarPtr loss = xent.output(0);
  if (fused[0]->type != loss->type || fused[1]->type != p->type) return {};
  return {{loss, fused[0]}, {p, fused[1]}};  // replace_all carries the user's names over
}

}  // namespace theon::rewrite
