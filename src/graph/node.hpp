// Variable and Apply: the nodes of a symbolic graph.
//
// An Apply owns its output Variables; a VarPtr to an output is an aliasing shared_ptr that
// keeps the Apply (and so, through its inputs, the whole upstream graph) alive. There are
// no ownership cycles: graphs are freed when the last VarPtr into them dies.
#pragma once
#include "graph/type.hpp"

#include <theon/array.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace theon::graph {

class Op;
class Apply;
class Variable;
using VarPtr = std::shared_ptr<Variable>;
using ApplyPtr = std::shared_ptr<Apply>;

/// The value behind a shared variable: one per user-visible SharedVar, shared by every
/// graph and function that uses it. Replaced whole (never written into) by updates.
struct SharedStorage {
  std::mutex mutex;  // guards `value` (brief: a get or a set)
  /// Bumped by every set() (after the value changes): a reader that cached the value it
  /// loaded at one version may use it again without the mutex while the version is the same
  /// (the executor's warm-call load, exec/executor.cpp).
  std::atomic<uint64_t> version{0};
  /// Held by a call of a function that updates this variable from before it reads the value
  /// until its update is committed, so such calls serialise (exec/function_impl.cpp takes
  /// several in one global order: by address).
  std::mutex update_mutex;
  Array value;
  Array get() {
    std::lock_guard<std::mutex> lock(mutex);
    return value;
  }
  /// The value copied into `dst` (reusing dst's shape/stride storage: no allocation when
  /// dst had the rank before; the executor's per-call load of a shared variable).
  void get_into(Array& dst) {
    std::lock_guard<std::mutex> lock(mutex);
    dst = value;
  }
  void set(Array v) {
    std::lock_guard<std::mutex> lock(mutex);
    value = std::move(v);
    version.fetch_add(1, std::memory_order_release);
  }
};

enum class VarKind { Input, Output, Constant, Shared };

class Variable {
 public:
  TensorType type;
  std::string name;
  VarKind kind = VarKind::Input;
  Apply* owner = nullptr;                  // the producing node, for outputs
  int index = 0;                           // which output of `owner`
  Array constant;                          // the value, for constants
  bool weak = false;                       // a literal: weak in type promotion (NEP 50)
  std::shared_ptr<SharedStorage> storage;  // for shared variables
  /// For a shared variable: the update function() applies when the caller gives none
  /// (Theano's default_update; a random state's next state). Weak, since the update's graph
  /// holds this variable: it lives as long as a graph that reads the variable through it.
  std::weak_ptr<Variable> default_update;
  uint64_t id = next_id();                 // creation order, for stable printing

  /// Name for messages: the user's name, else a generated one ("<float32 matrix #12>").
  std::string label() const;
  /// The owning Apply as a shared_ptr (null for inputs, constants, shared variables).
  ApplyPtr owner_ptr() const;

  static VarPtr make_input(TensorType type, std::string name = "");
  static VarPtr make_constant(Array value, bool weak = false, std::string name = "");
  static VarPtr make_shared(std::shared_ptr<SharedStorage> storage, TensorType type, std::string name);

 private:
  static uint64_t next_id() {
    static std::atomic<uint64_t> counter{0};
    return ++counter;
  }
};

class Apply : public std::enable_shared_from_this<Apply> {
 public:
  /// Releases upstream nodes iteratively: freeing a long chain must not recurse once per node.
  ~Apply();
  /// Creates the node and its outputs (one per type).
  static ApplyPtr make(std::shared_ptr<const Op> op, std::vector<VarPtr> inputs, std::vector<TensorType> output_types);

  const Op& op() const { return *op_; }
  const std::shared_ptr<const Op>& op_ptr() const { return op_; }
  const std::vector<VarPtr>& inputs() const { return inputs_; }
  VarPtr input(int i) const { return inputs_[i]; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  /// Output `i`, as a VarPtr that keeps this node alive.
  VarPtr output(int i) const;
  Variable* output_raw(int i) const { return outputs_[i].get(); }
  std::vector<VarPtr> outputs() const;

  /// Replaces input `i` (used by FunctionGraph::replace on cloned graphs only).
  void set_input(int i, VarPtr v) { inputs_[i] = std::move(v); }
  /// "add(x, w)": the op's display name and its inputs' labels, for error messages.
  std::string describe() const;

 private:
  Apply() = default;
  std::shared_ptr<const Op> op_;
  std::vector<VarPtr> inputs_;
  std::vector<std::unique_ptr<Variable>> outputs_;
};

/// The context a scope pins the outputs of new nodes to on this thread ("" = none); set and
/// restored by theon::ContextScope (api). Apply::make reads it; a Transfer keeps its target.
const std::string& context_scope();
void set_context_scope(std::string context_name);

/// The single output of a one-output node (the common case for builders).
VarPtr make_output(std::shared_ptr<const Op> op, std::vector<VarPtr> inputs, TensorType type);

}  // namespace theon::graph
