// function(): compiles a graph into a callable.
//
//   Function f = function({x}, {y});
//   std::vector<Array> out = f({Array::randn({100, 10}, 3)});
//   Function g = function({x}, {y}, {.updates = {{b, b + 1.0}}, .mode = "fast_run"});
//
// Calls check the inputs (count, dtype: no lossy downcast, rank, static dims), run, and only
// then commit updates, all at once: a call that throws leaves every shared variable as it
// was. Outputs never alias the function's internal buffers, its inputs or shared values.
// A Function may be called from several threads at once: each call runs in its own
// execution state (taken from a pool) and updates commit under one lock per call.
#pragma once
#include <theon/array.hpp>
#include <theon/graph.hpp>
#include <theon/var.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace theon {

namespace detail {
class FunctionImpl;
}

/// Theano's MonitorMode: functions called around each node of the compiled program, in the
/// order it runs them, with the node (its op and the optimized graph's variables) and its
/// values. `index` is the node's position (as in nodes() and explain()). The arrays are on
/// the node's device and valid only during the call; `after`'s inputs may have been
/// overwritten by an inplace output. An exception either throws fails the call, which then
/// commits no update.
///
///   FunctionOptions o;
///   o.monitor.after = [](size_t i, const ApplyInfo& node, const std::vector<Array>&,
///                        const std::vector<Array>& outs) { ... check outs for NaN ... };
struct NodeMonitor {
  std::function<void(size_t index, const ApplyInfo& node, const std::vector<Array>& inputs)> before;
  std::function<void(size_t index, const ApplyInfo& node, const std::vector<Array>& inputs,
                     const std::vector<Array>& outputs)>
      after;
  bool active() const { return before || after; }
};

struct FunctionOptions {
  /// (shared variable, new value expression): applied after the outputs are computed.
  std::vector<std::pair<SharedVar, Var>> updates = {};
  /// (variable, replacement): e.g. {x, X[i*B:(i+1)*B]} for Theano's minibatch idiom.
  std::vector<std::pair<Var, Var>> givens = {};
  std::string mode = "";  // "" = config().mode
  std::string name = "";
  std::string on_unused_input = "raise";  // raise | warn | ignore
  bool allow_input_downcast = false;      // accept lossy casts of inputs
  /// On a GPU: return outputs as device arrays (no copy to the host; Array::to_host()
  /// copies when needed). Host outputs are otherwise copied after all of a call's GPU
  /// work, into pinned blocks, and waited for once.
  bool outputs_on_device = false;
  /// Theano's default updates: a shared variable the graph reads that has a default update
  /// (a random stream's state) gets it unless `updates` names the variable, or
  /// no_default_updates is set, or it is listed in no_default_updates_of.
  bool no_default_updates = false;
  std::vector<SharedVar> no_default_updates_of = {};
  /// Called around each node of every call (see NodeMonitor); none by default.
  NodeMonitor monitor = {};
};

/// One node of a compiled program, as explain() prints it.
struct NodeInfo {
  std::string op;                   // "Elemwise{add}", "Dot", "Composite{...}"
  std::vector<std::string> inputs;  // the inputs' labels (user names where there are)
  std::string output_type;          // "float32 (?, 5)" (first output)
  std::string device;               // "cpu", "cuda0", ...
  std::string kernel;               // "reference", "onednn/cblas", "fused_cpu", ...
  std::string reason;               // why it runs there
};

class Function {
 public:
  Function() = default;
  explicit Function(std::shared_ptr<detail::FunctionImpl> impl) : impl_(std::move(impl)) {}

  std::vector<Array> operator()(const std::vector<Array>& inputs = {}) const;
  const std::string& name() const;
  /// Every node of the compiled program with its device and why it was placed there.
  std::string explain() const;
  /// The optimized graph, as debugprint prints it.
  std::string debugprint() const;
  /// The compiled program's nodes in execution order (for inputs of the declared static
  /// shapes): what explain() prints, as data.
  std::vector<NodeInfo> nodes() const;
  const std::shared_ptr<detail::FunctionImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<detail::FunctionImpl> impl_;
};

Function function(const std::vector<Var>& inputs, const std::vector<Var>& outputs, const FunctionOptions& options = {});

}  // namespace theon
