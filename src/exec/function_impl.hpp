// FunctionImpl: what a Function holds. It keeps the user's graph, the options read from
// config() when function() was called, and a cache of Programs keyed by input signature
// (dtypes and ranks are fixed by the inputs' types; the key is the pattern of size-1 dims),
// so one Function serves every shape and recompiles only for a new broadcast pattern.
#pragma once
#include "compile/program.hpp"
#include "exec/executor.hpp"
#include "graph/function_graph.hpp"

#include <theon/function.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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
  struct Entry {
    std::shared_ptr<compile::Program> program;
    std::vector<std::unique_ptr<ExecState>> idle;  // execution states not in use (guarded by mutex_)
    MemoryStats last;                              // the last successful call of this program
    bool called = false;
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

 private:
  std::string label() const { return name_.empty() ? "function" : "function '" + name_ + "'"; }
  std::vector<Array> check_inputs(const std::vector<Array>& inputs) const;
  /// Placeholder arrays (no data) with the inputs' static shapes, for explain()/debugprint().
  std::vector<Array> generic_inputs() const;

  std::string name_;
  std::vector<graph::VarPtr> inputs_;        // the user's variables (names, types)
  std::vector<graph::VarPtr> outputs_;       // user outputs then update values
  std::vector<std::pair<graph::VarPtr, graph::VarPtr>> givens_;
  size_t num_user_outputs_ = 0;
  std::vector<std::shared_ptr<graph::SharedStorage>> update_targets_;
  bool allow_input_downcast_ = false;
  compile::LowerOptions lower_options_;

  std::mutex mutex_;
  std::map<std::string, Entry> programs_;  // key: which input dims have size 1
  std::optional<MemoryStats> last_memory_;  // guarded by mutex_
};

}  // namespace theon::detail
