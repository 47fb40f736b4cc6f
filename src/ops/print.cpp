#include "ops/print.hpp"
#include "ops/make_op.hpp"

#include <iostream>
#include <mutex>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

namespace {

struct PrintRegistry {
  std::mutex mutex;
  std::vector<PrintFn> fns;  // by key; an empty one (and an unknown key) prints on stdout
};

PrintRegistry& registry() {
  static PrintRegistry* r = new PrintRegistry;  // never destroyed: ops may outlive statics
  return *r;
}

PrintFn lookup(int64_t key) {
  PrintRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return key >= 0 && static_cast<size_t>(key) < r.fns.size() ? r.fns[key] : PrintFn{};
}

}  // namespace

int64_t register_print_fn(PrintFn fn) {
  PrintRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.fns.push_back(std::move(fn));
  return static_cast<int64_t>(r.fns.size()) - 1;
}

std::vector<Shape> Print::infer_shape(const Apply&, const std::vector<Array>& inputs) const {
  return {inputs[0].shape()};
}

void Print::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  // A copy: the callee may keep it while later (inplace) nodes overwrite x.
  Array value = inputs[0].to_host().copy();
  if (PrintFn fn = lookup(key_)) {
    fn(message_, value);
  } else {
    std::cout << message_ << " __str__ = " << value << std::endl;
  }
  outputs[0] = inputs[0];
}

std::vector<VarPtr> Print::L_op(const Apply&, const std::vector<VarPtr>& output_grads) const {
  return {output_grads[0]};
}

VarPtr print_op(const VarPtr& x, const std::string& message, int64_t key) {
  return graph::make_output(std::make_shared<Print>(message, key), {x}, x->type);
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Print>(PropReader& p) {
  return std::make_shared<const Print>(p.text("message"), p.integer("key"));
}

}  // namespace theon::ops
