#include "exec/function_impl.hpp"

#include "graph/print.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

#include <algorithm>
#include <iostream>
#include <shared_mutex>
#include <sstream>
#include <unordered_set>

namespace theon::detail {

namespace {

// Reads of shared values (at call start) share this lock; commits of updates take it
// exclusively, so a call sees either all or none of another call's updates.
std::shared_mutex& commit_lock() {
  static std::shared_mutex m;
  return m;
}

std::string names_of(const std::vector<graph::VarPtr>& vars) {
  std::string s;
  for (size_t i = 0; i < vars.size(); ++i) s += (i ? ", " : "") + vars[i]->label();
  return s;
}

}  // namespace

FunctionImpl::FunctionImpl(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                           const FunctionOptions& options)
    : name_(options.name), allow_input_downcast_(options.allow_input_downcast) {
  const Config& cfg = config();  // read now, when the function is compiled
  lower_options_.mode = canonical_mode(options.mode.empty() ? cfg.mode : options.mode);
  lower_options_.device = cfg.device;
  lower_options_.on_fallback = cfg.on_fallback;
  lower_options_.optimizer_including = cfg.optimizer_including;
  lower_options_.optimizer_excluding = cfg.optimizer_excluding;
  lower_options_.function_name = name_;
  if (lower_options_.device != "cpu") {
    // No silent fallback: the user hears about an unavailable device now, not at a call.
    backends::Support cuda = backends::cuda_available();
    if (!cuda.ok) {
      const std::string msg = "no CUDA device available: " + cuda.reason;
      if (lower_options_.on_fallback == "raise")
        throw DeviceError(label() + " asked for device=" + lower_options_.device + " but " + msg +
                          " (set on_fallback=warn to run on the CPU instead)");
      if (lower_options_.on_fallback == "warn")
        std::cerr << "theon: warning: " << label() << " asked for device=" << lower_options_.device << " but " << msg
                  << "; every node runs on the CPU\n";
      lower_options_.fallback_reason = msg;
    }
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
    if (v->type.dtype != t->type.dtype || v->type.ndim() != t->type.ndim())
      throw TypeError(label() + ": the update of '" + t->label() + "' (" + t->type.str() + ") has type " +
                      v->type.str() + "; an update must keep the shared variable's dtype and rank (cast it)");
    outputs_.push_back(v);
    update_targets_.push_back(t->storage);
  }
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
}

std::vector<Array> FunctionImpl::check_inputs(const std::vector<Array>& given) const {
  if (given.size() != inputs_.size())
    throw TypeError(label() + ": expected " + std::to_string(inputs_.size()) + " input(s) (" + names_of(inputs_) +
                    "), got " + std::to_string(given.size()));
  std::vector<Array> bound;
  for (size_t i = 0; i < given.size(); ++i) {
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
    if (a.dtype() == t.dtype) {
      bound.push_back(a);
    } else if (can_cast_safely(a.dtype(), t.dtype) || allow_input_downcast_) {
      bound.push_back(a.astype(t.dtype));
    } else {
      throw TypeError(what + ": got a " + std::string(dtype_name(a.dtype())) + " array; converting it to " +
                      std::string(dtype_name(t.dtype)) +
                      " could lose information (cast it first, or set allow_input_downcast)");
    }
  }
  return bound;
}

FunctionImpl::Entry& FunctionImpl::program_for(const std::vector<Array>& inputs) {
  std::string key;
  for (auto& a : inputs) {
    for (int64_t n : a.shape()) key += n == 1 ? '1' : '.';
    key += '|';
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = programs_.find(key);
    if (it != programs_.end()) return it->second;
  }
  // Compile outside the lock: other signatures keep running meanwhile.
  auto fgraph = std::make_shared<graph::FunctionGraph>(inputs_, outputs_, givens_);
  auto program = compile::lower(fgraph, lower_options_);
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = programs_.try_emplace(key);
  if (inserted) it->second.program = program;
  return it->second;
}

size_t FunctionImpl::num_programs() {
  std::lock_guard<std::mutex> lock(mutex_);
  return programs_.size();
}

std::vector<Array> FunctionImpl::call(const std::vector<Array>& given) {
  std::vector<Array> inputs = check_inputs(given);
  Entry& entry = program_for(inputs);
  std::unique_ptr<ExecState> state;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!entry.idle.empty()) {
      state = std::move(entry.idle.back());
      entry.idle.pop_back();
    }
  }
  if (!state) state = std::make_unique<ExecState>();

  std::vector<Array> results;
  try {
    std::shared_lock<std::shared_mutex> read(commit_lock());
    results = execute(*entry.program, *state, inputs, label());
  } catch (...) {
    state->pool.end_call();
    throw;  // nothing was committed: shared variables are unchanged
  }
  // Hand out only buffers this call made, each once: outputs never alias internal
  // buffers, inputs, constants or shared values.
  std::vector<const Buffer*> handed;
  for (auto& r : results) {
    bool seen = std::find(handed.begin(), handed.end(), r.buffer().get()) != handed.end();
    if (seen || !state->pool.owned(r)) r = r.copy();
    handed.push_back(r.buffer().get());
  }
  state->pool.end_call();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entry.last = state->pool.stats();
    entry.called = true;
    last_memory_ = entry.last;
    entry.idle.push_back(std::move(state));
  }
  if (!update_targets_.empty()) {
    std::unique_lock<std::shared_mutex> write(commit_lock());
    for (size_t u = 0; u < update_targets_.size(); ++u) update_targets_[u]->set(results[num_user_outputs_ + u]);
  }
  results.resize(num_user_outputs_);
  return results;
}

std::optional<MemoryStats> FunctionImpl::memory_report() {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_memory_;
}

std::optional<MemoryStats> FunctionImpl::memory_report(const std::vector<Array>& inputs) {
  Entry& entry = program_for(check_inputs(inputs));
  std::lock_guard<std::mutex> lock(mutex_);
  if (!entry.called) return std::nullopt;
  return entry.last;
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
  auto program = program_for(generic_inputs()).program;
  std::ostringstream os;
  os << label() << ": " << program->thunks.size() << " nodes on " << program->device << ", mode "
     << lower_options_.mode << ", " << num_programs() << " compiled program(s)\n";
  for (auto& note : program->fallback_notes) os << "  fallback: " << note << "\n";
  for (size_t i = 0; i < program->thunks.size(); ++i) {
    auto& t = program->thunks[i];
    os << "  " << i << "  " << t.node->describe() << " -> " << t.node->output_raw(0)->type.str() << "  [" << t.device
       << ", kernel " << t.kernel->name() << "] " << t.reason << "\n";
  }
  os << "  transfers: none\n";
  if (auto m = memory_report())
    os << "  memory: peak " << m->peak_bytes << " bytes in the last call, " << m->reused << " buffers reused, "
       << m->allocated << " allocated, " << m->inplace << " inplace (" << program->num_inplace
       << " node(s) planned inplace)\n";
  else
    os << "  memory: no call yet (" << program->num_inplace << " node(s) planned inplace)\n";
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
