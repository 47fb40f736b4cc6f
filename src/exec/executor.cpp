#include "exec/executor.hpp"

#include "exec/shared_commits.hpp"

#include "backends/cpu/thread_budget.hpp"
#include "compile/placement.hpp"

#include "graph/user_names.hpp"
#include "runtime/observer.hpp"
#include "util/checked_size.hpp"
#include "util/device_ops.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

namespace theon::detail {

// Befriended by Array (include/theon/array.hpp): lets the executor empty an Array while
// keeping its shape/stride vectors' storage, and refill it in place. Copy-assigning into
// such an Array then allocates nothing, which is most of what a warm call used to spend.
struct ArrayAccess {
  static void drop(Array& a) { a.buffer_.reset(); }
  static void set_buffer(Array& a, std::shared_ptr<Buffer> buf) { a.buffer_ = std::move(buf); }
  static std::shared_ptr<Buffer> take_buffer(Array& a) { return std::move(a.buffer_); }
  /// `a` becomes a contiguous array of `shape` and `dtype` on `buf` (as Array's constructor
  /// with contiguous_strides(shape), without allocating when `a` had the rank before).
  static void assign_contiguous(Array& a, std::shared_ptr<Buffer> buf, DType dtype, const Shape& shape) {
    a.buffer_ = std::move(buf);
    a.dtype_ = dtype;
    a.shape_ = shape;
    a.strides_.resize(shape.size());
    int64_t acc = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      a.strides_[d] = acc;
      acc *= std::max<int64_t>(shape[d], 1);
    }
    a.offset_ = 0;
  }
};

Array BufferPool::allocate(const Shape& shape, DType dtype) {
  Array a;
  allocate_into(a, shape, dtype);
  return a;
}

void BufferPool::allocate_into(Array& dst, const Shape& shape, DType dtype, Device device, void* stream) {
  ArrayAccess::assign_contiguous(dst, take(checked_nbytes(shape, dtype, "allocating an output"), device, stream), dtype,
                                 shape);
}

std::shared_ptr<Buffer> BufferPool::take(size_t bytes, Device device, void* stream) {
  std::shared_ptr<Buffer> buf;
  bool reused = false;
  if (device.is_cuda()) {
    // Device memory: the device's caching allocator reuses blocks in the order of the stream
    // the thunk writes on, the block's home (whether it did is its own affair, so the observer
    // hears of a new buffer).
    buf = require_device_ops("executor").allocate_on(device, bytes, stream);
  } else {
    // Reuse a free buffer of at least the size, but not a much larger one.
    auto it = std::lower_bound(free_.begin(), free_.end(), bytes,
                               [](const auto& e, size_t b) { return e.first < b; });
    reused = it != free_.end() && it->first <= bytes * 2 + 64;
    if (reused) {
      buf = std::move(it->second);
      free_bytes_ -= it->first;
      free_.erase(it);
    } else {
      buf = Buffer::allocate_host(bytes);
    }
  }
  ++(reused ? stats_.reused : stats_.allocated);
  owned_.push_back(buf.get());
  live_bytes_ += buf->bytes();
  stats_.peak_bytes = std::max(stats_.peak_bytes, live_bytes_);
  if (runtime::Observer* o = runtime::observer()) o->allocation({device, buf->bytes(), reused});
  return buf;
}

bool BufferPool::owned(const Array& a) const {
  return a.buffer() && std::find(owned_.begin(), owned_.end(), a.buffer().get()) != owned_.end();
}

void BufferPool::recycle(Array& a) {
  const std::shared_ptr<Buffer>& buf = a.buffer();
  if (!buf || buf.use_count() != 1) return;
  auto own = std::find(owned_.begin(), owned_.end(), buf.get());
  if (own == owned_.end()) return;
  *own = owned_.back();
  owned_.pop_back();
  const size_t bytes = buf->bytes();
  live_bytes_ -= bytes;
  if (buf->device().is_cuda()) {  // back to the device's caching allocator
    ArrayAccess::drop(a);
    return;
  }
  free_bytes_ += bytes;
  auto at = std::upper_bound(free_.begin(), free_.end(), bytes, [](size_t b, const auto& e) { return b < e.first; });
  free_.insert(at, {bytes, ArrayAccess::take_buffer(a)});
}

namespace {

// "x (3, 5), y (4,) as (1, 4)": the node's inputs as the user wrote them, and the shapes
// the node saw where those differ.
std::string input_shapes(const graph::Apply& node, const std::vector<Array>& ins) {
  std::string s;
  for (size_t i = 0; i < ins.size(); ++i)
    s += (i ? ", " : "") + graph::user_value(*node.input(static_cast<int>(i)), ins[i].shape(), true);
  return s;
}

// "dev0 (cpu)", or the device alone for its own context ("cuda0").
std::string context_text(const runtime::Context& c) {
  return c.name == c.device.str() ? c.name : c.name + " (" + c.device.str() + ")";
}

std::string node_context(const compile::Program& program, size_t t, const std::string& function_label,
                         const std::vector<Array>& ins) {
  const compile::Thunk& th = program.thunks[t];
  return "in node " + std::to_string(t) + " of " + function_label + ": " + graph::user_describe(*th.node) + " on " +
         (th.exec.context.device == th.dev ? context_text(th.exec.context) : th.device) +
         "; input shapes: " + input_shapes(*th.node, ins);
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

size_t total_bytes(const std::vector<Array>& arrays) {
  size_t n = 0;
  for (const Array& a : arrays) n += a.defined() ? a.nbytes() : 0;
  return n;
}

runtime::ThunkEvent thunk_event(const compile::Thunk& th, size_t index, const std::vector<Array>& ins,
                                const std::vector<Array>* outs) {
  runtime::ThunkEvent e;
  e.thunk_index = index;
  e.op = th.op;
  e.kind = th.is_transfer ? std::string_view("transfer") : std::string_view(th.kernel_name);
  e.context = th.exec.context.name;
  e.device = th.dev;
  e.bytes_in = total_bytes(ins);
  e.bytes_out = outs ? total_bytes(*outs) : 0;
  e.provenance = &th.provenance;
  return e;
}

void report_thunk_end(runtime::Observer& watcher, const compile::Thunk& th, size_t index,
                      const std::vector<Array>& ins, const std::vector<Array>& outs) {
  watcher.thunk_end(thunk_event(th, index, ins, &outs));
  if (!th.is_transfer) return;
  const Device from = ins[0].device();
  if (from != th.dev)
    watcher.transfer({from, th.dev, ins[0].nbytes(), runtime::transfer_direction(from, th.dev),
                      th.node->input(0)->label()});
}

// Sizes `state` for `program` (once per state: a state serves one Program).
void prepare_state(const compile::Program& program, ExecState& state) {
  if (state.ins.size() == program.thunks.size() && state.slots.size() == static_cast<size_t>(program.num_slots) &&
      state.shared_cache.size() == program.leaves.size() && state.pools.size() == program.contexts.size())
    return;
  state.slots.assign(program.num_slots, Array());
  state.ins.resize(program.thunks.size());
  state.outs.resize(program.thunks.size());
  state.transfer_bytes.assign(program.thunks.size(), 0);
  state.shared_cache.assign(program.leaves.size(), SharedLeafCache());
  for (size_t t = 0; t < program.thunks.size(); ++t) {
    state.ins[t].assign(program.thunks[t].inputs.size(), Array());
    state.outs[t].assign(program.thunks[t].outputs.size(), Array());
  }
  const size_t contexts = std::max<size_t>(program.contexts.size(), 1);
  state.pools = std::vector<BufferPool>(contexts);
  state.overwritten.assign(contexts, {});
  state.lanes.assign(contexts, {});
  state.lane_threads.assign(contexts, 0);
  state.events.clear();
  state.events.resize(program.thunks.size());
  for (size_t t = 0; t < program.thunks.size(); ++t) {
    const compile::Thunk& th = program.thunks[t];
    state.lanes[th.context_index].push_back(static_cast<int>(t));
    if (th.exec.context.device.is_cpu() && state.lane_threads[th.context_index] == 0)
      state.lane_threads[th.context_index] = th.exec.threads;
    if (th.signals && th.dev.is_cuda()) state.events[t] = std::make_unique<runtime::Event>(th.dev);
  }
  state.context_done.clear();
  state.context_done.resize(contexts);
  state.copy_done.clear();
  state.copy_done.resize(contexts);
  state.named_gpu_contexts = false;
  for (size_t k = 0; k < program.contexts.size(); ++k) {
    const runtime::Context& c = program.contexts[k];
    if (c.device.is_cuda() && c.name != c.device.str() && !state.lanes[k].empty()) {
      state.context_done[k] = std::make_unique<runtime::Event>(c.device);
      state.named_gpu_contexts = true;
    }
  }
  for (const compile::Thunk& th : program.thunks)
    if (th.on_copy_stream && !state.copy_done[th.context_index]) {
      state.copy_done[th.context_index] = std::make_unique<runtime::Event>(th.dev);
      state.named_gpu_contexts = true;
    }
  state.sequential_threads = 0;
  for (int threads : state.lane_threads) state.sequential_threads = std::max(state.sequential_threads, threads);
}

// One shared variable's value into `dst`. While the variable's version is the one `cache`
// saw, the value is the buffer `cache` remembers (values are replaced whole, never written
// into), so a warm call takes no lock; the cache holds the buffer weakly, so an idle state
// keeps no replaced value alive.
void load_shared(graph::SharedStorage& storage, SharedLeafCache& cache, Array& dst) {
  if (cache.storage == &storage && cache.version == storage.version.load(std::memory_order_acquire)) {
    if (std::shared_ptr<Buffer> buf = cache.buffer.lock()) {
      dst = cache.view;  // copy-assigned: the slot's vectors are reused
      ArrayAccess::set_buffer(dst, std::move(buf));
      return;
    }
  }
  std::lock_guard<std::mutex> lock(storage.mutex);
  dst = storage.value;
  cache.storage = &storage;
  cache.version = storage.version.load(std::memory_order_relaxed);
  cache.buffer = dst.buffer();
  cache.view = dst;
  ArrayAccess::drop(cache.view);
}

// The constants and shared values into their slots. Shared values are read as one snapshot
// of the functions' commits (SharedCommits): loaded again if a commit ran meanwhile.
void load_leaves(const compile::Program& program, ExecState& state) {
  auto& slots = state.slots;
  bool reads_shared = false;
  for (size_t k = 0; k < program.leaves.size(); ++k) {
    const auto& [slot, var] = program.leaves[k];
    if (k < program.leaf_values.size() && program.leaf_values[k].defined())
      slots[slot] = program.leaf_values[k];  // a constant copied to its device at compile time
    else if (var->kind == graph::VarKind::Constant) slots[slot] = var->constant;
    else reads_shared = true;
  }
  if (!reads_shared) return;
  const SharedCommits& commits = SharedCommits::instance();
  for (;;) {
    const uint64_t seq = commits.begin_read();
    for (size_t k = 0; k < program.leaves.size(); ++k) {
      const auto& [slot, var] = program.leaves[k];
      if (var->kind == graph::VarKind::Shared && !(k < program.leaf_values.size() && program.leaf_values[k].defined()))
        load_shared(*var->storage, state.shared_cache[k], slots[slot]);
    }
    if (commits.still(seq)) return;
  }
}

}  // namespace

MemoryStats ExecState::summed_stats() const {
  MemoryStats s;
  for (const BufferPool& p : pools) {
    const MemoryStats& c = p.stats();
    s.peak_bytes += c.peak_bytes;  // exact with one context; at most the sum with several
    s.reused += c.reused;
    s.allocated += c.allocated;
    s.inplace += c.inplace;
  }
  return s;
}

namespace {

// What one call's thunks share (a Program of one CPU context: the caller's thread only).
struct Call {
  const compile::Program& program;
  ExecState& state;
  const std::string& function_label;
  NodeHook* hook;
  runtime::Observer* watcher;
  int host_waits = 0;  // on the caller's thread (sequential calls)
  struct Lanes* lanes = nullptr;  // the lanes' shared state, in a multi-lane call
};

// What the lanes of one multi-lane call share (kept out of Call: a one-context call builds
// no mutex, condition variable or flags).
struct Lanes {
  std::unique_ptr<std::atomic<bool>[]> finished;  // per thunk: done (CPU) or issued (GPU)
  std::atomic<int> host_waits{0};
  std::mutex mutex;
  std::condition_variable changed;
  bool stop = false;         // a lane failed (mutex)
  std::exception_ptr error;  // the first failure (mutex)
  int running = 0;           // lanes not yet returned (mutex)
};

// The ordering of the edges into thunk `t` from other contexts (dependencies.hpp). In a
// multi-lane call the producers have been waited for (finished or issued) before this.
void wait_edges(Call& call, const compile::Thunk& th) {
  if (compile::keeps_on_host(*th.node)) return;  // metadata only: the slot is filled, no data read
  for (int p : th.after) {
    const compile::Thunk& producer = call.program.thunks[p];
    if (!producer.dev.is_cuda()) continue;  // a CPU producer has finished
    const runtime::Event& done = *call.state.events[p];
    if (th.dev.is_cuda()) {
      th.exec.stream.wait(done);
    } else {
      done.synchronize();
      if (call.lanes) call.lanes->host_waits.fetch_add(1, std::memory_order_relaxed);
      else ++call.host_waits;
    }
  }
}

// Runs thunk `t` (its kernel, or its hand-over) with its context's pool.
void run_thunk(Call& call, size_t t) {
  const compile::Program& program = call.program;
  ExecState& state = call.state;
  const compile::Thunk& th = program.thunks[t];
  const graph::Apply& node = *th.node;
  auto& slots = state.slots;
  BufferPool& pool = state.pools[th.context_index];
  std::vector<int>& overwritten = state.overwritten[th.context_index];
  std::vector<Array>& ins = state.ins[t];
  std::vector<Array>& outs = state.outs[t];  // empty (no buffers) here
  for (size_t k = 0; k < ins.size(); ++k) ins[k] = slots[th.inputs[k]];
  try {
    if (!th.after.empty()) wait_edges(call, th);
    std::vector<Shape> shapes = node.op().infer_shape(node, ins);
    overwritten.clear();
    // The op is the identity when its pass-through inputs already have the outputs' shapes
    // (SumTo of a gradient that broadcast nothing): every output is that input's array, no
    // copy and no kernel. All outputs or none: a kernel never sees a handed-over output.
    bool handed_over = !th.pass_through.empty();
    for (size_t o = 0; o < th.outputs.size() && handed_over; ++o) {
      const int i = o < th.pass_through.size() ? th.pass_through[o] : -1;
      handed_over = i >= 0 && ins[i].defined() && ins[i].dtype() == node.output_raw(static_cast<int>(o))->type.dtype &&
                    ins[i].shape() == shapes[o];
    }
    for (size_t o = 0; o < th.outputs.size(); ++o) {
      if (th.output_is_view[o]) continue;
      const DType dtype = node.output_raw(static_cast<int>(o))->type.dtype;
      if (handed_over) {
        outs[o] = ins[th.pass_through[o]];
        continue;
      }
      if (const int i = o < th.destroy.size() ? th.destroy[o] : -1; i >= 0) {
        // Every output must have the destroyed input's shape: a kernel running outputs of
        // different shapes in separate passes could read the input after overwriting it.
        bool same = true;
        for (auto& sh : shapes) same = same && sh == shapes[o];
        const int s = th.inputs[i];
        if (same && std::find(overwritten.begin(), overwritten.end(), s) == overwritten.end() &&
            can_overwrite(pool, th, s, ins[i], shapes[o], dtype)) {
          ArrayAccess::assign_contiguous(outs[o], ins[i].buffer(), dtype, shapes[o]);
          overwritten.push_back(s);
          pool.count_inplace();
          continue;
        }
      }
      pool.allocate_into(outs[o], shapes[o], dtype, th.dev, th.exec.stream.handle);
    }
    if (call.watcher) call.watcher->thunk_begin(thunk_event(th, t, ins, nullptr));
    if (call.hook) call.hook->before(t, node, ins);
    if (!handed_over) th.kernel->run(th.plan.get(), th.exec, node, ins, outs);
    // A device value of another context (a handover, or a transfer's source) is used on this
    // thunk's stream from now on: the allocator must not reuse its block before that work ran.
    if (!th.after.empty() && th.exec.stream.handle)
      for (const Array& in : ins)
        if (in.defined() && in.device().is_cuda()) require_device_ops("executor").record_use(*in.buffer(), th.exec.stream.handle);
    if (th.is_transfer) state.transfer_bytes[t] = handed_over ? 0 : ins[0].nbytes();
    if (call.watcher) report_thunk_end(*call.watcher, th, t, ins, outs);
    if (call.hook) call.hook->after(t, node, ins, outs);
    for (size_t o = 0; o < th.outputs.size(); ++o) {
      if (!outs[o].defined() || outs[o].shape() != shapes[o])
        throw InternalError(node.describe() + ": kernel '" + th.kernel->name() + "' produced output " +
                            std::to_string(o) + " with shape " +
                            (outs[o].defined() ? shape_str(outs[o].shape()) : "<none>") + ", expected " +
                            shape_str(shapes[o]));
      std::swap(slots[th.outputs[o]], outs[o]);  // the slot was empty: `outs[o]` is empty again
    }
    if (th.signals && th.dev.is_cuda()) state.events[t]->record(th.exec.stream);
  } catch (Error& e) {
    e.add_context(node_context(program, t, call.function_label, ins));
    throw;
  } catch (const std::bad_alloc&) {  // from a kernel's own scratch (a std::vector, ...)
    MemoryError e("out of memory on " + th.dev.str() + " in a kernel (std::bad_alloc)", 0, th.dev.str());
    e.add_context(node_context(program, t, call.function_label, ins));
    throw e;
  }
  for (Array& a : ins) ArrayAccess::drop(a);
  for (int s : overwritten) ArrayAccess::drop(slots[s]);  // dead; its buffer now lives in the output slot
  overwritten.clear();
  for (int s : th.release) pool.recycle(slots[s]);
}

// Persistent worker threads for the lanes of multi-context calls, process-wide. A task is
// started at once: on an idle worker, else on a new one (which then stays): lanes of one call
// wait for each other, so a task must never queue behind another call's lanes.
class Workers {
 public:
  static Workers& instance() {
    static Workers* workers = new Workers;  // never destroyed: idle workers outlive main()
    return *workers;
  }
  void start(std::function<void()> task) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      Worker* w = idle_.back();
      idle_.pop_back();
      w->task = std::move(task);
      lock.unlock();
      w->wake.notify_one();
      return;
    }
    auto w = std::make_unique<Worker>();
    w->task = std::move(task);
    Worker* raw = w.get();
    all_.push_back(std::move(w));
    std::thread([this, raw] { loop(raw); }).detach();
  }

 private:
  struct Worker {
    std::function<void()> task;
    std::condition_variable wake;
  };
  void loop(Worker* w) {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        w->wake.wait(lock, [&] { return static_cast<bool>(w->task); });
        task = std::move(w->task);
        w->task = nullptr;
      }
      task();  // never throws (run_lane catches)
      std::lock_guard<std::mutex> lock(mutex_);
      idle_.push_back(w);
    }
  }
  std::mutex mutex_;
  std::vector<Worker*> idle_;
  std::vector<std::unique_ptr<Worker>> all_;
};

// Waits until thunk `p` of another lane has finished (CPU) or been issued (GPU); false when
// the call stopped meanwhile.
bool wait_for(Lanes& lanes, int p) {
  if (lanes.finished[p].load(std::memory_order_acquire)) return true;
  std::unique_lock<std::mutex> lock(lanes.mutex);
  lanes.changed.wait(lock, [&] { return lanes.stop || lanes.finished[p].load(std::memory_order_acquire); });
  return !lanes.stop;
}

void run_lane(Call& call, size_t lane) {
  Lanes& lanes = *call.lanes;
  try {
    const compile::Program& program = call.program;
    const bool on_cpu = program.contexts[lane].device.is_cpu();
    std::optional<backends::cpu::LoopBudgetScope> budget;
    if (on_cpu) budget.emplace(backends::cpu::LoopBudget{program.options.openmp_elemwise_minsize,
                                                         call.state.lane_threads[lane]});
    for (int t : call.state.lanes[lane]) {
      const compile::Thunk& th = program.thunks[t];
      for (int p : th.after)
        if (!wait_for(lanes, p)) return;
      {
        std::lock_guard<std::mutex> lock(lanes.mutex);
        if (lanes.stop) return;
      }
      run_thunk(call, static_cast<size_t>(t));
      if (th.signals) {
        lanes.finished[t].store(true, std::memory_order_release);
        std::lock_guard<std::mutex> lock(lanes.mutex);  // no reader misses the notification
        lanes.changed.notify_all();
      }
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(lanes.mutex);
    if (!lanes.error) lanes.error = std::current_exception();
    lanes.stop = true;
    lanes.changed.notify_all();
  }
}

void run_lanes(Call& call) {
  const compile::Program& program = call.program;
  backends::cpu::OpenBlasSingleThread one_blas_thread;  // the lanes are the parallelism
  Lanes lanes;
  call.lanes = &lanes;
  lanes.finished = std::make_unique<std::atomic<bool>[]>(program.thunks.size());
  for (size_t t = 0; t < program.thunks.size(); ++t) lanes.finished[t].store(false, std::memory_order_relaxed);
  std::vector<size_t> order;
  for (size_t k = 0; k < call.state.lanes.size(); ++k)
    if (!call.state.lanes[k].empty()) order.push_back(k);
  lanes.running = static_cast<int>(order.size());
  auto lane_done = [&lanes] {
    std::lock_guard<std::mutex> lock(lanes.mutex);
    --lanes.running;
    lanes.changed.notify_all();
  };
  for (size_t i = 1; i < order.size(); ++i)
    Workers::instance().start([&call, lane = order[i], lane_done] {
      run_lane(call, lane);
      lane_done();
    });
  if (!order.empty()) {
    run_lane(call, order[0]);
    lane_done();
  }
  std::unique_lock<std::mutex> lock(lanes.mutex);
  lanes.changed.wait(lock, [&] { return lanes.running == 0; });
  call.host_waits = lanes.host_waits.load(std::memory_order_relaxed);
  if (lanes.error) std::rethrow_exception(lanes.error);
}

}  // namespace

std::vector<Array> execute(const compile::Program& program, ExecState& state, const std::vector<Array>& inputs,
                           const std::string& function_label, NodeHook* hook) {
  prepare_state(program, state);
  auto& slots = state.slots;  // every slot is empty (no buffer) between calls
  for (size_t i = 0; i < program.input_slots.size(); ++i) slots[program.input_slots[i]] = inputs[i];
  load_leaves(program, state);
  for (size_t k = 0; k < program.leaves.size(); ++k) {
    const auto& [slot, var] = program.leaves[k];
    // A shared variable moved to another device since compilation: copied per call.
    if (k < program.leaf_device.size() && slots[slot].defined() && slots[slot].device() != program.leaf_device[k]) {
      const Device from = slots[slot].device(), to = program.leaf_device[k];
      slots[slot] = to_device(slots[slot], to);
      if (runtime::Observer* o = runtime::observer())
        o->transfer({from, to, slots[slot].nbytes(), runtime::transfer_direction(from, to), var->label()});
    }
  }

  state.begin_call();
  Call call{program, state, function_label, hook, runtime::observer()};  // one branch per thunk when nobody watches
  if (program.cpu_contexts > 1) {
    run_lanes(call);
  } else {
    // The frozen loop threshold for the CPU loops and the budget of the one CPU context (0:
    // the thread's own count, unless context_threads set one). With the defaults (what a
    // thread outside any scope has) nothing is set: the per-call cost stays as before.
    std::optional<backends::cpu::LoopBudgetScope> budget;
    if (program.options.openmp_elemwise_minsize != backends::cpu::LoopBudget().minsize || state.sequential_threads > 0)
      budget.emplace(backends::cpu::LoopBudget{program.options.openmp_elemwise_minsize, state.sequential_threads});
    for (size_t t = 0; t < program.thunks.size(); ++t) run_thunk(call, t);
  }
  // Each named GPU context's work is ordered before what the device's own stream does next
  // (the outputs' copies to the host), on the device: no host wait.
  if (state.named_gpu_contexts)
    for (size_t k = 0; k < state.context_done.size(); ++k) {
      const runtime::Context& c = program.contexts[k];
      if (state.context_done[k]) {
        state.context_done[k]->record(runtime::streams_of(c).compute);
        runtime::Stream::of(c.device, runtime::StreamKind::Compute).wait(*state.context_done[k]);
      }
      if (state.copy_done[k]) {  // the context's copies between devices, likewise
        state.copy_done[k]->record(runtime::streams_of(c).copy);
        runtime::Stream::of(c.device, runtime::StreamKind::Compute).wait(*state.copy_done[k]);
      }
    }
  state.host_waits = call.host_waits;
  std::vector<Array> results;
  results.reserve(program.output_slots.size());
  for (int s : program.output_slots) results.push_back(slots[s]);
  for (Array& a : slots) ArrayAccess::drop(a);
  return results;
}

}  // namespace theon::detail
