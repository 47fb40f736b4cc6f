// FunctionImpl: what a Function holds. It keeps the user's graph, the options read from
// config() when function() was called, and a cache of Programs keyed by input signature
// (dtypes and ranks are fixed by the inputs' types; the key is the pattern of size-1 dims),
// so one Function serves every shape and recompiles only for a new broadcast pattern.
#pragma once
#include "compile/program.hpp"
#include "exec/executor.hpp"
#include "graph/function_graph.hpp"

#include <theon/function.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace theon::detail {

class FunctionImpl {
 public:
  FunctionImpl(const std::vector<Var>& inputs, const std::vector<Var>& outputs, const FunctionOptions& options);

  std::vector<Array> call(const std::vector<Array>& inputs);
  std::string explain();
  std::string debugprint();
  std::vector<NodeInfo> nodes();
  const std::string& name() const { return name_; }
  /// The memory report of "the last call", written by every call without a lock: a seqlock
  /// whose writer never waits (a call that finds another one writing leaves the record to it:
  /// with calls running at once, "the last" is any of them) and skips an unchanged record.
  class StatsRecord {
   public:
    void publish(const MemoryStats& s);
    /// nullopt before the first publish.
    std::optional<MemoryStats> read() const;

   private:
    std::atomic<uint64_t> seq_{0};  // odd while being written; 0 before the first publish
    std::atomic<size_t> peak_bytes_{0};
    std::atomic<int> reused_{0}, allocated_{0}, inplace_{0};
  };
  struct Entry {
    const std::string* key = nullptr;  // the programs_ key it is stored under
    std::shared_ptr<compile::Program> program;
    // Execution states not in use: one in `spare` (taken and given back with one atomic
    // exchange: a warm call takes no lock), more in `idle` (guarded by mutex_) when calls
    // run at once.
    std::atomic<ExecState*> spare{nullptr};
    std::vector<std::unique_ptr<ExecState>> idle;
    StatsRecord last;                    // the last successful call of this program
    std::vector<size_t> transfer_bytes;  // per thunk: bytes a Transfer moved in the last call (mutex_)
    std::vector<Device> devices;         // the CUDA devices its thunks run on
    Entry() = default;
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;
    ~Entry() { delete spare.load(); }
  };
  /// The memory plan's report of the last successful call (of any program of this function);
  /// nullopt before the first call.
  std::optional<MemoryStats> memory_report();
  /// The same for the program of inputs with these shapes (nullopt if it never ran).
  std::optional<MemoryStats> memory_report(const std::vector<Array>& inputs);
  /// The program for inputs with these shapes (compiled on first use). Entries are never
  /// removed, so the reference stays valid.
  Entry& program_for(const std::vector<Array>& inputs);
  size_t num_programs();
  /// Calls `hook` around each node of every later call (null: none). Set before the first call.
  void set_node_hook(std::shared_ptr<NodeHook> hook) { node_hook_ = std::move(hook); }

 private:
  const std::string& label() const { return label_; }
  /// Adds `value` as the update of shared variable `target` (TypeError when it changes the
  /// dtype or rank).
  void add_update(const graph::VarPtr& target, const graph::VarPtr& value);
  /// Adds the default update of every shared variable the outputs and updates read (and their
  /// default updates read) that `updated` does not hold and options do not exclude.
  void add_default_updates(const FunctionOptions& options, std::unordered_set<const graph::SharedStorage*>& updated);
  /// Checks the GPUs the function asks for (the device flag's, and those of the contexts its
  /// graph pins: an unknown context name fails here, naming the variable) once, when it is
  /// compiled: a GPU index past the last device is a ConfigError; without a usable CUDA
  /// device on_fallback decides (raise, warn, ignore) and everything runs on the CPU. Returns
  /// whether any GPU was asked for.
  bool check_devices(Device requested, const graph::FunctionGraph& probe);
  /// Applies on_fallback to a program with nodes that could not run on the requested device.
  void report_fallbacks(const compile::Program& program);
  /// Moves the shared variables `program` reads on a device there (an explicit step after
  /// lowering; lowering itself changes no shared variable).
  void move_shared_variables(const compile::Program& program);
  /// Checks the inputs (count, rank, static dims, dtype) and returns the arrays to bind:
  /// `given` itself when every dtype matches (no copy), else `converted`, filled with the
  /// cast ones.
  const std::vector<Array>& bind_inputs(const std::vector<Array>& given, std::vector<Array>& converted) const;
  [[noreturn]] void input_error(const std::vector<Array>& given, size_t i) const;
  /// Placeholder arrays (no data) with the inputs' static shapes, for explain()/debugprint().
  std::vector<Array> generic_inputs() const;

  std::string name_;
  std::string label_;                        // "function 'name'" for messages, made once
  std::vector<graph::VarPtr> inputs_;        // the user's variables (names, types)
  std::vector<graph::VarPtr> outputs_;       // user outputs then update values
  std::vector<std::pair<graph::VarPtr, graph::VarPtr>> givens_;
  size_t num_user_outputs_ = 0;
  std::vector<std::shared_ptr<graph::SharedStorage>> update_targets_;
  std::vector<graph::SharedStorage*> update_lock_order_;  // update_targets_ sorted by address
  bool allow_input_downcast_ = false;
  bool outputs_on_device_ = false;
  bool check_device_errors_ = true;
  std::shared_ptr<NodeHook> node_hook_;  // FunctionOptions::monitor, adapted by api/function.cpp
  bool fallback_reported_ = false;  // guarded by mutex_: on_fallback=warn warns once per function
  compile::LowerOptions lower_options_;

  std::atomic<uint64_t> calls_{0};  // the observer's call index

  /// An execution state of `entry` (its spare, an idle one, or a new one) / back to the entry.
  std::unique_ptr<ExecState> take_state(Entry& entry);
  void give_state(Entry& entry, std::unique_ptr<ExecState> state);

  std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> programs_;  // key: which input dims have size 1
  // The entry of the last call's signature: a call with the same one finds its program
  // without the lock and the map (entries are never removed).
  std::atomic<Entry*> hot_{nullptr};
  StatsRecord last_memory_;  // the last successful call of any program
};

}  // namespace theon::detail
