#include "exec/function_impl.hpp"

#include "exec/shared_commits.hpp"

#include "compile/placement.hpp"
#include "graph/default_updates.hpp"
#include "graph/print.hpp"
#include "runtime/observer.hpp"
#include "util/device_ops.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <sstream>
#include <string_view>
#include <thread>
#include <unordered_set>

namespace theon::detail {

namespace {

// The update locks of a call of a function with updates (SharedStorage::update_mutex of each
// variable it updates), held from before the call reads shared values until its updates are
// committed: calls updating a common variable serialise, so read-compute-commit cycles never
// interleave and no update is lost. Taken in one global order (by address; the list is sorted
// once) so that functions updating overlapping sets cannot deadlock; always before the commit
// lock, never while holding it.
class UpdateLocks {
 public:
  explicit UpdateLocks(const std::vector<graph::SharedStorage*>& order) : order_(order) {
    for (auto* s : order_) s->update_mutex.lock();
  }
  ~UpdateLocks() {
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) (*it)->update_mutex.unlock();
  }
  UpdateLocks(const UpdateLocks&) = delete;
  UpdateLocks& operator=(const UpdateLocks&) = delete;

 private:
  const std::vector<graph::SharedStorage*>& order_;
};

std::string names_of(const std::vector<graph::VarPtr>& vars) {
  std::string s;
  for (size_t i = 0; i < vars.size(); ++i) s += (i ? ", " : "") + vars[i]->label();
  return s;
}

Array pinned_host_copy(const Array& a) {
  DeviceOps& ops = require_device_ops("copy of an output to the host");
  if (!a.is_contiguous()) return a.to_host();
  Array host(ops.allocate_pinned(a.nbytes()), a.dtype(), a.shape(), contiguous_strides(a.shape()));
  if (a.size()) ops.copy(host.data(), Device::cpu(), a.data(), a.device(), a.nbytes());  // async: pinned
  return host;
}

// "dev0 (cuda0)", or the device alone for its own context ("cuda0").
std::string context_text(const runtime::Context& c) {
  return c.name == c.device.str() ? c.name : c.name + " (" + c.device.str() + ")";
}

Array device_copy(const Array& a) {
  DeviceOps& ops = require_device_ops("copy of a device output");
  Array out(ops.allocate(a.device(), a.nbytes()), a.dtype(), a.shape(), contiguous_strides(a.shape()));
  copy_array(a, out);
  return out;
}

void synchronize_device(Device device) {
  if (device.is_cuda()) require_device_ops("synchronize").synchronize(device);
}

}  // namespace

FunctionImpl::FunctionImpl(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                           const FunctionOptions& options)
    : name_(options.name),
      label_(name_.empty() ? "function" : "function '" + name_ + "'"),
      allow_input_downcast_(options.allow_input_downcast),
      outputs_on_device_(options.outputs_on_device) {
  const Config& cfg = config();  // read now, when the function is compiled
  lower_options_.mode = canonical_mode(options.mode.empty() ? cfg.mode : options.mode);
  lower_options_.device = cfg.device;
  lower_options_.on_fallback = cfg.on_fallback;
  lower_options_.optimizer_including = cfg.optimizer_including;
  lower_options_.optimizer_excluding = cfg.optimizer_excluding;
  lower_options_.optimizer_requiring = cfg.optimizer_requiring;
  lower_options_.function_name = name_;
  lower_options_.kernel_options = backends::KernelOptions::from_config();
  check_device_errors_ = cfg.check_device_errors;
  const Device requested = Device::parse(lower_options_.device);  // the one parse: a bad name fails now, quoting it
  {  // the process's map, resolved (and checked, and printed) at its first use
    const std::shared_ptr<const runtime::ContextMap> contexts = runtime::active_contexts();
    lower_options_.contexts = *contexts;
    lower_options_.context_threads = contexts->thread_budgets();
  }
  if (options.on_unused_input != "raise" && options.on_unused_input != "warn" && options.on_unused_input != "ignore")
    throw ValueError(label() + ": on_unused_input must be raise, warn or ignore, got '" + options.on_unused_input + "'");

  for (auto& v : inputs) {
    if (!v.defined()) throw ValueError(label() + ": an input Var is undefined");
    inputs_.push_back(v.node());
  }
  for (auto& v : outputs) {
    if (!v.defined()) throw ValueError(label() + ": an output Var is undefined");
    outputs_.push_back(v.node());
  }
  num_user_outputs_ = outputs_.size();
  std::unordered_set<const graph::SharedStorage*> updated;
  for (auto& [target, value] : options.updates) {
    if (!target.defined() || !value.defined()) throw ValueError(label() + ": an update has an undefined Var");
    const auto& t = target.node();
    const auto& v = value.node();
    if (t->kind != graph::VarKind::Shared)
      throw TypeError(label() + ": update target '" + t->label() + "' is not a shared variable");
    if (!updated.insert(t->storage.get()).second)
      throw ValueError(label() + ": shared variable '" + t->label() + "' is updated twice");
    add_update(t, v);
  }
  if (!options.no_default_updates) add_default_updates(options, updated);
  std::sort(update_lock_order_.begin(), update_lock_order_.end(), std::less<>());
  for (auto& [old_v, new_v] : options.givens) {
    if (!old_v.defined() || !new_v.defined()) throw ValueError(label() + ": a givens entry has an undefined Var");
    givens_.push_back({old_v.node(), new_v.node()});
  }

  // Build the graph once now so that missing inputs and bad givens fail at compile time.
  graph::FunctionGraph probe(inputs_, outputs_, givens_);
  if (options.on_unused_input != "ignore") {
    std::unordered_set<const graph::Variable*> used;
    for (auto& node : probe.nodes())
      for (auto& in : node->inputs()) used.insert(in.get());
    for (auto& o : probe.outputs()) used.insert(o.get());
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (!used.count(probe.inputs()[i].get())) {
        std::string msg = label() + ": input " + std::to_string(i) + " ('" + inputs_[i]->label() +
                          "') is not used to compute the outputs or updates (pass on_unused_input=\"ignore\" "
                          "or \"warn\" to allow this)";
        if (options.on_unused_input == "raise") throw ValueError(msg);
        std::cerr << "theon: warning: " << msg << "\n";
      }
  }
  const bool uses_gpu = check_devices(requested, probe);
  lower_options_.target = std::make_shared<const compile::LoweringTarget>(compile::resolve_target(lower_options_, requested));
  // On a GPU, place now: nodes that cannot run there are reported when the function is
  // compiled (on_fallback), not at its first call.
  if (uses_gpu && lower_options_.fallback_reason.empty()) program_for(generic_inputs());
}

bool FunctionImpl::check_devices(Device requested, const graph::FunctionGraph& probe) {
  // The GPUs asked for: the device flag's, and those of the contexts the graph pins.
  std::vector<std::pair<Device, std::string>> gpus;  // device, what asked for it
  if (requested.is_cuda()) gpus.push_back({requested, "device=" + lower_options_.device});
  std::unordered_set<std::string> names;
  auto pinned = [&](const graph::Variable& v) {
    const std::string& name = v.type.context;
    if (name.empty() || !names.insert(name).second) return;
    runtime::Context c;
    try {
      c = lower_options_.contexts.resolve(name);
    } catch (Error& e) {
      e.add_context(label() + ": " + v.label() + " is pinned to context '" + name + "'");
      throw;
    }
    if (c.device.is_cuda()) gpus.push_back({c.device, "context " + name + (name == c.device.str() ? "" : " (" + c.device.str() + ")")});
  };
  for (auto& in : probe.inputs()) pinned(*in);
  for (auto& node : probe.nodes()) {
    for (auto& in : node->inputs()) pinned(*in);
    for (int o = 0; o < node->num_outputs(); ++o) pinned(*node->output_raw(o));
  }
  if (gpus.empty()) return false;
  // No silent fallback: the user hears about an unavailable device now, not at a call.
  backends::Support cuda = backends::cuda_available();
  // A device that does not exist is a configuration error, not a fallback (`cuda`/`cuda0`
  // without any device follow on_fallback below, so a script runs unchanged on a laptop).
  const int found = cuda_status().device_count;
  for (auto& [device, what] : gpus)
    if (device.index > 0 && device.index >= found)
      throw ConfigError(label() + ": " + what + " does not exist: " + std::to_string(found) + " CUDA device(s) found" +
                        (found > 0 ? " (cuda0 to cuda" + std::to_string(found - 1) + ")" : " (" + cuda.reason + ")"));
  if (!cuda.ok) {
    const std::string msg = "no CUDA device available: " + cuda.reason;
    const std::string& what = gpus.front().second;
    if (lower_options_.on_fallback == "raise")
      throw DeviceError(label() + " asked for " + what + " but " + msg +
                        " (set on_fallback=warn to run on the CPU instead)");
    if (lower_options_.on_fallback == "warn")
      std::cerr << "theon: warning: " << label() << " asked for " << what << " but " << msg
                << "; every node runs on the CPU\n";
    lower_options_.fallback_reason = msg;
  }
  return true;
}

void FunctionImpl::add_update(const graph::VarPtr& t, const graph::VarPtr& v) {
  if (v->type.dtype != t->type.dtype || v->type.ndim() != t->type.ndim())
    throw TypeError(label() + ": the update of '" + t->label() + "' (" + t->type.str() + ") has type " +
                    v->type.str() + "; an update must keep the shared variable's dtype and rank (cast it)");
  outputs_.push_back(v);
  update_targets_.push_back(t->storage);
  update_lock_order_.push_back(t->storage.get());
}

void FunctionImpl::add_default_updates(const FunctionOptions& options,
                                       std::unordered_set<const graph::SharedStorage*>& updated) {
  for (const SharedVar& s : options.no_default_updates_of)
    if (s.defined() && s.node()->storage) updated.insert(s.node()->storage.get());
  // Walk everything the function computes; a default update added is walked too (it may read
  // other shared variables with default updates).
  std::unordered_set<const graph::Variable*> seen;
  std::vector<graph::VarPtr> stack(outputs_.begin(), outputs_.end());
  while (!stack.empty()) {
    const graph::VarPtr v = stack.back();
    stack.pop_back();
    if (!seen.insert(v.get()).second) continue;
    if (v->owner)
      for (const auto& in : v->owner->inputs()) stack.push_back(in);
    if (v->kind != graph::VarKind::Shared || updated.count(v->storage.get())) continue;
    graph::VarPtr update = v->default_update.lock();
    if (!update) {
      // The user's update is gone but kept over a placeholder (graph/default_updates.hpp): v
      // goes back in as a given.
      if (const std::optional<graph::DefaultUpdateTemplate> kept = graph::default_update_template(*v)) {
        update = kept->update;
        givens_.push_back({kept->placeholder, v});
      }
    }
    if (!update) continue;
    updated.insert(v->storage.get());
    add_update(v, update);
    stack.push_back(update);
  }
}

void FunctionImpl::report_fallbacks(const compile::Program& program) {
  if (program.num_fallbacks == 0 || lower_options_.on_fallback == "ignore") return;
  std::string list;
  for (auto& note : program.fallback_notes) list += "\n  - " + note;
  const std::string what = label() + " asked for device=" + lower_options_.device + " but " +
                           std::to_string(program.num_fallbacks) + " node(s) cannot run there:" + list;
  if (lower_options_.on_fallback == "raise")
    throw DeviceError(what + "\n(set on_fallback=warn to run them on the CPU instead)");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fallback_reported_) return;
    fallback_reported_ = true;
  }
  std::cerr << "theon: warning: " << what << "\n(they run on the CPU, with transfers shown by explain())\n";
}

// The checks run on every call, so the passing path builds no strings; input_error()
// re-checks input `i` and throws the message naming what is wrong.
const std::vector<Array>& FunctionImpl::bind_inputs(const std::vector<Array>& given,
                                                    std::vector<Array>& converted) const {
  if (given.size() != inputs_.size())
    throw TypeError(label() + ": expected " + std::to_string(inputs_.size()) + " input(s) (" + names_of(inputs_) +
                    "), got " + std::to_string(given.size()));
  for (size_t i = 0; i < given.size(); ++i) {
    const graph::TensorType& t = inputs_[i]->type;
    const Array& a = given[i];
    if (!a.defined() || a.ndim() != t.ndim() || !t.accepts(a.shape())) input_error(given, i);
    if (a.dtype() == t.dtype) {
      if (!converted.empty()) converted.push_back(a);
      continue;
    }
    if (!is_supported(a.dtype()) || (!can_cast_safely(a.dtype(), t.dtype) && !allow_input_downcast_))
      input_error(given, i);
    if (converted.empty()) converted.assign(given.begin(), given.begin() + static_cast<std::ptrdiff_t>(i));
    converted.push_back(a.astype(t.dtype));
  }
  return converted.empty() ? given : converted;
}

void FunctionImpl::input_error(const std::vector<Array>& given, size_t i) const {
  const graph::TensorType& t = inputs_[i]->type;
  const std::string what = label() + ", input " + std::to_string(i) + " ('" + inputs_[i]->label() + "', " +
                           t.str() + ")";
  const Array& a = given[i];
  if (!a.defined()) throw ValueError(what + ": got an undefined Array");
  if (a.ndim() != t.ndim())
    throw TypeError(what + ": expected rank " + std::to_string(t.ndim()) + ", got an array of shape " +
                    shape_str(a.shape()));
  if (!t.accepts(a.shape()))
    throw ShapeError(what + ": static shape does not accept an array of shape " + shape_str(a.shape()));
  if (!is_supported(a.dtype()))
    throw TypeError(what + ": got a " + std::string(dtype_name(a.dtype())) + " array, and dtype " +
                    std::string(dtype_name(a.dtype())) + " is not supported yet; convert it to " +
                    std::string(dtype_name(t.dtype)) + " first (numpy: a.astype('" + std::string(dtype_name(t.dtype)) +
                    "'))");
  throw TypeError(what + ": got a " + std::string(dtype_name(a.dtype())) + " array; converting it to " +
                  std::string(dtype_name(t.dtype)) +
                  " could lose information (cast it first, or set allow_input_downcast)");
}

namespace {

// The Program cache key (see programs_): per input one char per dim, '1' where it has size
// 1, '.' otherwise, then '|'. Made on every call, so in a stack buffer unless very long.
class SignatureKey {
 public:
  explicit SignatureKey(const std::vector<Array>& inputs) {
    size_t n = 0;
    for (auto& a : inputs) n += a.shape().size() + 2;
    char* p = inline_;
    if (n > sizeof inline_) {
      heap_.resize(n);
      p = heap_.data();
    }
    view_ = std::string_view(p, n);
    for (auto& a : inputs) {
      for (int64_t d : a.shape()) *p++ = d == 1 ? '1' : '.';
      // Where the input lives: 'h' (host) or the CUDA device index as a letter from 'A'.
      const Device dev = a.device();
      *p++ = dev.is_cpu() ? 'h' : static_cast<char>('A' + dev.index);
      *p++ = '|';
    }
  }
  SignatureKey(const SignatureKey&) = delete;
  SignatureKey& operator=(const SignatureKey&) = delete;
  std::string_view view() const { return view_; }

 private:
  char inline_[128];
  std::string heap_;
  std::string_view view_;
};

}  // namespace

FunctionImpl::Entry& FunctionImpl::program_for(const std::vector<Array>& inputs) {
  const SignatureKey key(inputs);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = programs_.find(key.view());
    if (it != programs_.end()) return it->second;
  }
  // Compile outside the lock: other signatures keep running meanwhile.
  auto fgraph = std::make_shared<graph::FunctionGraph>(inputs_, outputs_, givens_);
  compile::LowerOptions options = lower_options_;
  for (auto& a : inputs) {
    options.input_devices.push_back(a.device());
    options.input_shapes.push_back(a.shape());
  }
  const auto started = std::chrono::steady_clock::now();
  auto program = compile::lower(fgraph, options);
  if (runtime::Observer* o = runtime::observer()) {
    for (const rewrite::PassRecord& pass : program->passes) o->compile({"pass " + pass.name, pass.seconds, false, label()});
    o->compile({"lower", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), false,
                label()});
  }
  report_fallbacks(*program);
  move_shared_variables(*program);
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = programs_.try_emplace(std::string(key.view()));
  if (inserted) {
    it->second.key = &it->first;
    it->second.program = program;
    for (auto& t : program->thunks) {
      auto& devs = it->second.devices;
      if (t.dev.is_cuda() && std::find(devs.begin(), devs.end(), t.dev) == devs.end()) devs.push_back(t.dev);
    }
  }
  return it->second;
}

std::unique_ptr<ExecState> FunctionImpl::take_state(Entry& entry) {
  if (ExecState* s = entry.spare.exchange(nullptr, std::memory_order_acquire)) return std::unique_ptr<ExecState>(s);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!entry.idle.empty()) {
      std::unique_ptr<ExecState> s = std::move(entry.idle.back());
      entry.idle.pop_back();
      return s;
    }
  }
  return std::make_unique<ExecState>();
}

void FunctionImpl::give_state(Entry& entry, std::unique_ptr<ExecState> state) {
  ExecState* empty = nullptr;
  if (entry.spare.compare_exchange_strong(empty, state.get(), std::memory_order_release, std::memory_order_relaxed)) {
    state.release();  // now owned by entry.spare
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  entry.idle.push_back(std::move(state));
}

void FunctionImpl::StatsRecord::publish(const MemoryStats& s) {
  uint64_t q = seq_.load(std::memory_order_acquire);
  const bool same = q != 0 && (q & 1) == 0 && peak_bytes_.load(std::memory_order_relaxed) == s.peak_bytes &&
                    reused_.load(std::memory_order_relaxed) == s.reused &&
                    allocated_.load(std::memory_order_relaxed) == s.allocated &&
                    inplace_.load(std::memory_order_relaxed) == s.inplace;
  if (same) return;  // a warm call repeating the last one writes nothing
  if ((q & 1) || !seq_.compare_exchange_strong(q, q + 1, std::memory_order_acquire, std::memory_order_relaxed))
    return;  // another call is writing its report
  peak_bytes_.store(s.peak_bytes, std::memory_order_relaxed);
  reused_.store(s.reused, std::memory_order_relaxed);
  allocated_.store(s.allocated, std::memory_order_relaxed);
  inplace_.store(s.inplace, std::memory_order_relaxed);
  seq_.store(q + 2, std::memory_order_release);
}

std::optional<MemoryStats> FunctionImpl::StatsRecord::read() const {
  for (;;) {
    const uint64_t q = seq_.load(std::memory_order_acquire);
    if (q == 0) return std::nullopt;
    if (q & 1) {
      std::this_thread::yield();
      continue;
    }
    MemoryStats s;
    s.peak_bytes = peak_bytes_.load(std::memory_order_relaxed);
    s.reused = reused_.load(std::memory_order_relaxed);
    s.allocated = allocated_.load(std::memory_order_relaxed);
    s.inplace = inplace_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq_.load(std::memory_order_relaxed) == q) return s;
  }
}

// Shared variables live where the program reads them (DESIGN.md: they move to their device
// once and stay). A variable that cannot move stays where it is, and the error names it; a
// variable moved elsewhere later is copied per call by the executor (correct, not free).
void FunctionImpl::move_shared_variables(const compile::Program& program) {
  for (size_t k = 0; k < program.leaves.size(); ++k) {
    const graph::VarPtr& v = program.leaves[k].second;
    const Device home = program.leaf_device[k];
    if (v->kind != graph::VarKind::Shared || !home.is_cuda()) continue;
    const Array value = v->storage->get();
    if (!value.defined() || value.device() == home) continue;
    try {
      v->storage->set(to_device(value, home));
    } catch (Error& e) {
      e.add_context(label() + ": moving shared variable '" + v->label() + "' (" + shape_str(value.shape()) + ", " +
                    std::string(dtype_name(value.dtype())) + ") to " + home.str() +
                    ", where the program reads it; it stays on " + value.device().str());
      throw;
    }
  }
}

size_t FunctionImpl::num_programs() {
  std::lock_guard<std::mutex> lock(mutex_);
  return programs_.size();
}

std::vector<Array> FunctionImpl::call(const std::vector<Array>& given) {
  std::vector<Array> converted;
  const std::vector<Array>& inputs = bind_inputs(given, converted);
  Entry* hot = hot_.load(std::memory_order_acquire);
  if (!hot || *hot->key != SignatureKey(inputs).view()) {
    hot = &program_for(inputs);
    hot_.store(hot, std::memory_order_release);
  }
  Entry& entry = *hot;
  std::unique_ptr<ExecState> state = take_state(entry);

  // A function with updates: this call's read-compute-commit is serialised with every other
  // call updating one of its variables (released on return or on an error).
  std::optional<UpdateLocks> update_locks;
  if (!update_lock_order_.empty()) update_locks.emplace(update_lock_order_);
  std::vector<Array> results;
  runtime::CallEvent event{name_.empty() ? std::string_view(label_) : std::string_view(name_), calls_++};
  runtime::Observer* const watcher = runtime::observer();
  if (watcher) watcher->call_begin(event);
  // Reports the end of the call however it ends (an error leaves `succeeded` false).
  struct CallEnd {
    runtime::Observer* watcher;
    runtime::CallEvent& event;
    ~CallEnd() {
      if (watcher) watcher->call_end(event);
    }
  } call_end{watcher, event};
  event.succeeded = false;
  try {
    // Shared values are read as one snapshot of the commits without a lock (SharedCommits).
    results = execute(*entry.program, *state, inputs, label(), node_hook_.get());
  } catch (...) {
    state->end_call();
    throw;  // nothing was committed: shared variables are unchanged; the state is dropped
  }
  // Hand out only buffers this call made, each once: outputs never alias internal
  // buffers, inputs, constants or shared values. (results[0..i) hold the buffers handed
  // out so far; outputs are few, so a quadratic scan beats a set.)
  // Device results: user outputs go to the host (unless outputs_on_device) as async copies
  // into pinned blocks, issued after all of the call's device work and waited for once.
  try {
    // The devices this call issued work to: those of its device nodes and transfers, and
    // those its output copies read (a pass-through output, a shared value or constant on a
    // device runs no node, but its copy to the host is still in flight).
    std::vector<Device> touched = entry.devices;
    for (size_t i = 0; i < results.size(); ++i) {
      Array& r = results[i];
      bool seen = false;
      for (size_t j = 0; j < i && !seen; ++j) seen = results[j].buffer() == r.buffer();
      if (!r.on_host()) {
        const Device d = r.device();
        if (i < num_user_outputs_ && !outputs_on_device_) r = pinned_host_copy(r);
        else if (seen || !state->owned(r)) r = device_copy(r);
        if (std::find(touched.begin(), touched.end(), d) == touched.end()) touched.push_back(d);
        continue;
      }
      if (seen || !state->owned(r)) r = r.copy();
    }
    // One wait per device: for the host copies, and (check_device_errors) so that an error
    // the device finds surfaces before updates commit.
    if (!outputs_on_device_ || check_device_errors_ || !update_targets_.empty())
      for (const Device& d : touched) synchronize_device(d);
  } catch (...) {
    state->end_call();
    throw;  // nothing was committed
  }
  state->end_call();
  const MemoryStats stats = state->stats();
  entry.last.publish(stats);
  last_memory_.publish(stats);
  if (entry.program->device_work) {
    std::lock_guard<std::mutex> lock(mutex_);
    entry.transfer_bytes = state->transfer_bytes;
  }
  give_state(entry, std::move(state));
  if (!update_targets_.empty()) {
    SharedCommits::Commit commit(SharedCommits::instance());
    for (size_t u = 0; u < update_targets_.size(); ++u) update_targets_[u]->set(results[num_user_outputs_ + u]);
  }
  results.resize(num_user_outputs_);
  event.succeeded = true;
  return results;
}

std::optional<MemoryStats> FunctionImpl::memory_report() { return last_memory_.read(); }

std::optional<MemoryStats> FunctionImpl::memory_report(const std::vector<Array>& inputs) {
  std::vector<Array> converted;
  return program_for(bind_inputs(inputs, converted)).last.read();
}

std::vector<Array> FunctionImpl::generic_inputs() const {
  std::vector<Array> generic;  // shapes only matter: size-1 dims where static, else 2
  for (auto& in : inputs_) {
    Shape s;
    for (int64_t d : in->type.dims) s.push_back(d < 0 ? 2 : d);
    generic.push_back(Array(nullptr, in->type.dtype, s, contiguous_strides(s)));
  }
  return generic;
}

std::string FunctionImpl::explain() {
  Entry& entry = program_for(generic_inputs());
  auto program = entry.program;
  std::vector<size_t> bytes;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    bytes = entry.transfer_bytes;
  }
  std::ostringstream os;
  int on_device = 0, transfers = 0;
  bool named = false;  // some context is a user's name, not a device's own
  for (auto& t : program->thunks) {
    on_device += t.dev.is_cuda() && !t.is_transfer;
    transfers += t.is_transfer;
  }
  for (auto& c : program->contexts) named = named || c.name != c.device.str();
  const size_t computing = program->thunks.size() - static_cast<size_t>(transfers);
  os << label() << ": " << computing << " nodes";
  if (named) {
    std::vector<int> per(program->contexts.size(), 0);
    for (auto& t : program->thunks) per[t.context_index] += !t.is_transfer;
    for (size_t k = 0, shown = 0; k < program->contexts.size(); ++k)
      if (per[k] > 0) os << (shown++ ? ", " : ": ") << per[k] << " on " << context_text(program->contexts[k]);
  } else if (program->device == "cpu" && on_device == 0) {
    os << " on cpu";
  } else {
    os << ", " << on_device << " on " << program->device << ", " << computing - on_device << " on cpu";
  }
  os << ", mode " << lower_options_.mode << ", " << num_programs() << " compiled program(s)\n";
  if (named || program->contexts.size() > 1) {
    os << "  contexts:";
    for (size_t k = 0; k < program->contexts.size(); ++k) {
      const runtime::Context& c = program->contexts[k];
      os << (k ? "; " : " ") << c.name << " -> " << c.device.str() << (k == 0 ? " (default)" : "") << ", "
         << program->context_thunks[k] << " thunk(s)";
      if (c.device.is_cpu() && program->cpu_contexts > 1)
        for (auto& t : program->thunks)
          if (t.context_index == static_cast<int>(k)) {
            os << ", " << t.exec.threads << " thread(s)";
            break;
          }
    }
    os << (program->cpu_contexts > 1 ? "; each cpu context on its own thread" : "") << "\n";
  }
  for (auto& note : program->fallback_notes) os << "  fallback: " << note << "\n";
  for (size_t i = 0; i < program->thunks.size(); ++i) {
    auto& t = program->thunks[i];
    const std::string where = t.exec.context.device == t.dev ? context_text(t.exec.context) : t.device;
    os << "  " << i << "  " << t.node->describe() << " -> " << t.node->output_raw(0)->type.str() << "  [" << where
       << ", kernel " << t.kernel->name() << "] " << t.reason;
    if (!t.after.empty()) {
      os << "; after";
      for (int p : t.after) os << " " << p << " (" << program->thunks[p].exec.context.name << ")";
    }
    os << "\n";
  }
  if (transfers == 0) {
    os << "  transfers: none\n";
  } else {
    const bool called = entry.last.read().has_value();
    os << "  transfers: " << transfers << " per call\n";
    for (size_t i = 0; i < program->thunks.size(); ++i) {
      auto& t = program->thunks[i];
      if (!t.is_transfer) continue;
      const graph::Variable* from = t.node->input(0).get();
      const Device source = program->slot_device[t.inputs[0]];
      os << "    " << i << "  " << from->label() << " -> " << context_text(t.exec.context) << ", ";
      if (source == t.dev) os << "handover on " << source.str() << " (no copy)";
      else os << runtime::transfer_direction_name(runtime::transfer_direction(source, t.dev)) << " (" << source.str()
              << " to " << t.dev.str() << ")";
      if (source != t.dev) {
        bool known = true;
        for (int64_t d : from->type.dims) known = known && d >= 0;
        if (called && i < bytes.size()) os << ", " << bytes[i] << " bytes per call (the last call)";
        else if (known) os << ", " << static_cast<size_t>(shape_size(from->type.dims)) * itemsize(from->type.dtype) << " bytes per call";
        else os << ", " << from->type.str() << " per call (no call yet)";
      }
      os << "; " << t.reason << "\n";
    }
  }
  if (program->device_work) {
    std::vector<Device> devices;  // of the outputs copied to the host: the host waits once for each
    for (size_t o = 0; o < num_user_outputs_; ++o)
      if (const Device d = program->slot_device[program->output_slots[o]]; d.is_cuda()) devices.push_back(d);
    const size_t to_host = devices.size();
    std::sort(devices.begin(), devices.end(), [](Device a, Device b) { return a.index < b.index; });
    devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
    if (outputs_on_device_) os << "  outputs: kept on the device\n";
    else if (to_host > 0)
      os << "  outputs: " << to_host << " copied to the host after the call's device work, "
         << (devices.size() == 1 ? std::string("one wait") : std::to_string(devices.size()) + " waits (one per device)")
         << "\n";
  }
  if (auto m = memory_report())
    os << "  memory: peak " << m->peak_bytes << " bytes in the last call, " << m->reused << " buffers reused, "
       << m->allocated << " allocated, " << m->inplace << " inplace (" << program->num_inplace
       << " node(s) planned inplace)\n";
  else
    os << "  memory: no call yet (" << program->num_inplace << " node(s) planned inplace)\n";
  if (program->device != "cpu" && cuda_status().ok) {
    const DeviceMemoryStats d = memory_stats(Device::parse(program->device));
    os << "  device memory (" << program->device << "): " << d.in_use << " bytes in use, " << d.cached << " cached, peak "
       << d.peak << "\n";
  }
  for (auto& p : program->passes) os << "  pass " << p.name << (p.changed ? " (changed)" : "") << "\n";
  return os.str();
}

std::vector<NodeInfo> FunctionImpl::nodes() {
  auto program = program_for(generic_inputs()).program;
  std::vector<NodeInfo> out;
  for (auto& t : program->thunks) {
    NodeInfo n;
    n.op = t.node->op().display();
    for (auto& in : t.node->inputs()) n.inputs.push_back(in->label());
    n.output_type = t.node->output_raw(0)->type.str();
    n.device = t.device;
    n.kernel = t.kernel->name();
    n.reason = t.reason;
    out.push_back(std::move(n));
  }
  return out;
}

std::string FunctionImpl::debugprint() {
  auto program = program_for(generic_inputs()).program;
  return graph::debugprint(program->fgraph->outputs());
}

}  // namespace theon::detail
