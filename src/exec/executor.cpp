#include "exec/executor.hpp"

#include <theon/error.hpp>

#include <algorithm>

namespace theon::detail {

Array BufferPool::allocate(const Shape& shape, DType dtype) {
  const size_t bytes = static_cast<size_t>(shape_size(shape)) * itemsize(dtype);
  std::shared_ptr<Buffer> buf;
  // Reuse a free buffer of at least the size, but not a much larger one.
  auto it = free_.lower_bound(bytes);
  if (it != free_.end() && it->first <= bytes * 2 + 64) {
    buf = std::move(it->second);
    free_bytes_ -= it->first;
    free_.erase(it);
    ++stats_.reused;
  } else {
    buf = Buffer::allocate_host(bytes);
    ++stats_.allocated;
  }
  owned_.insert(buf.get());
  live_bytes_ += buf->bytes();
  stats_.peak_bytes = std::max(stats_.peak_bytes, live_bytes_);
  return Array(std::move(buf), dtype, shape, contiguous_strides(shape));
}

void BufferPool::recycle(Array& a) {
  const std::shared_ptr<Buffer>& buf = a.buffer();
  if (!buf || buf.use_count() != 1 || !owned_.count(buf.get())) return;
  owned_.erase(buf.get());
  live_bytes_ -= buf->bytes();
  free_bytes_ += buf->bytes();
  free_.emplace(buf->bytes(), buf);
  a = Array();
}

namespace {

std::string input_shapes(const graph::Apply& node, const std::vector<Array>& ins) {
  std::string s;
  for (size_t i = 0; i < ins.size(); ++i)
    s += (i ? ", " : "") + node.input(static_cast<int>(i))->label() + " " + shape_str(ins[i].shape());
  return s;
}

// The input array `a` (slot `slot`, read at the positions of `th.inputs` equal to it) may be
// overwritten by an output of `shape` and `dtype`: its buffer was made by this call, nothing
// but the slot and `ins` holds it (no view, no other slot), and it is a plain contiguous
// array of exactly that shape and dtype.
bool can_overwrite(const BufferPool& pool, const compile::Thunk& th, int slot, const Array& a, const Shape& shape,
                   DType dtype) {
  if (!a.defined() || !pool.owned(a) || a.dtype() != dtype || a.shape() != shape || a.offset() != 0 ||
      !a.is_contiguous())
    return false;
  long holders = 1;  // the slot
  for (int s : th.inputs) holders += s == slot;  // each copy in `ins`
  return a.buffer().use_count() == holders;
}

}  // namespace

std::vector<Array> execute(const compile::Program& program, ExecState& state, const std::vector<Array>& inputs,
                           const std::string& function_label) {
  auto& slots = state.slots;
  slots.assign(program.num_slots, Array());
  for (size_t i = 0; i < program.input_slots.size(); ++i) slots[program.input_slots[i]] = inputs[i];
  for (auto& [slot, var] : program.leaves)
    slots[slot] = var->kind == graph::VarKind::Constant ? var->constant : var->storage->get();

  state.pool.begin_call();
  std::vector<Array> ins, outs;
  std::vector<int> overwritten;
  for (size_t t = 0; t < program.thunks.size(); ++t) {
    const compile::Thunk& th = program.thunks[t];
    const graph::Apply& node = *th.node;
    ins.clear();
    for (int s : th.inputs) ins.push_back(slots[s]);
    try {
      std::vector<Shape> shapes = node.op().infer_shape(node, ins);
      outs.assign(th.outputs.size(), Array());
      overwritten.clear();
      for (size_t o = 0; o < th.outputs.size(); ++o) {
        if (th.output_is_view[o]) continue;
        const DType dtype = node.output_raw(static_cast<int>(o))->type.dtype;
        if (const int i = o < th.destroy.size() ? th.destroy[o] : -1; i >= 0) {
          // Every output must have the destroyed input's shape: a kernel running outputs of
          // different shapes in separate passes could read the input after overwriting it.
          bool same = true;
          for (auto& sh : shapes) same = same && sh == shapes[o];
          const int s = th.inputs[i];
          if (same && std::find(overwritten.begin(), overwritten.end(), s) == overwritten.end() &&
              can_overwrite(state.pool, th, s, ins[i], shapes[o], dtype)) {
            outs[o] = Array(ins[i].buffer(), dtype, shapes[o], contiguous_strides(shapes[o]));
            overwritten.push_back(s);
            state.pool.count_inplace();
            continue;
          }
        }
        outs[o] = state.pool.allocate(shapes[o], dtype);
      }
      th.kernel->run(nullptr, node, ins, outs);
      for (size_t o = 0; o < th.outputs.size(); ++o) {
        if (!outs[o].defined() || outs[o].shape() != shapes[o])
          throw InternalError(node.describe() + ": kernel '" + th.kernel->name() + "' produced output " +
                              std::to_string(o) + " with shape " +
                              (outs[o].defined() ? shape_str(outs[o].shape()) : "<none>") + ", expected " +
                              shape_str(shapes[o]));
        slots[th.outputs[o]] = std::move(outs[o]);
      }
    } catch (Error& e) {
      e.add_context("in node " + std::to_string(t) + " of " + function_label + ": " + node.describe() +
                    " on " + th.device + "; input shapes: " + input_shapes(node, ins));
      throw;
    }
    ins.clear();
    for (int s : overwritten) slots[s] = Array();  // dead; its buffer now lives in the output slot
    overwritten.clear();
    for (int s : th.release) state.pool.recycle(slots[s]);
  }
  std::vector<Array> results;
  for (int s : program.output_slots) results.push_back(slots[s]);
  slots.assign(program.num_slots, Array());
  return results;
}

}  // namespace theon::detail
