// function(), Function and debugprint: the public face of exec/ and graph/print.
#include <theon/function.hpp>
#include <theon/printing.hpp>

#include "api/apply_info.hpp"
#include "api/contexts_internal.hpp"
#include "exec/function_impl.hpp"
#include "graph/print.hpp"

#include <theon/error.hpp>

namespace theon {

namespace {
// FunctionOptions::monitor as the executor's hook: the node in the user's terms.
class MonitorHook final : public detail::NodeHook {
 public:
  explicit MonitorHook(NodeMonitor monitor) : monitor_(std::move(monitor)) {}
  void before(size_t thunk, const graph::Apply& node, const std::vector<Array>& ins) override {
    if (monitor_.before) monitor_.before(thunk, detail::apply_info(node, 0), ins);
  }
  void after(size_t thunk, const graph::Apply& node, const std::vector<Array>& ins,
             const std::vector<Array>& outs) override {
    if (monitor_.after) monitor_.after(thunk, detail::apply_info(node, 0), ins, outs);
  }

 private:
  NodeMonitor monitor_;
};
}  // namespace

Function function(const std::vector<Var>& inputs, const std::vector<Var>& outputs, const FunctionOptions& options) {
  runtime::active_contexts();  // the contexts map is checked (and printed) where first used
  const detail::NoContextScope compile_outside_scopes;
  auto impl = std::make_shared<detail::FunctionImpl>(inputs, outputs, options);
  if (options.monitor.active()) impl->set_node_hook(std::make_shared<MonitorHook>(options.monitor));
  return Function(std::move(impl));
}

namespace {
detail::FunctionImpl& need(const std::shared_ptr<detail::FunctionImpl>& impl) {
  if (!impl) throw ValueError("use of an empty Function (made by Function() rather than function())");
  return *impl;
}
}  // namespace

std::vector<Array> Function::operator()(const std::vector<Array>& inputs) const { return need(impl_).call(inputs); }
const std::string& Function::name() const { return need(impl_).name(); }
std::string Function::explain() const { return need(impl_).explain(); }
std::string Function::debugprint() const { return need(impl_).debugprint(); }
std::vector<NodeInfo> Function::nodes() const { return need(impl_).nodes(); }

std::string debugprint(const Var& var) { return debugprint(std::vector<Var>{var}); }
std::string debugprint(const std::vector<Var>& vars) {
  std::vector<graph::VarPtr> nodes;
  for (auto& v : vars) {
    if (!v.defined()) throw ValueError("debugprint: undefined Var");
    nodes.push_back(v.node());
  }
  return graph::debugprint(nodes);
}
std::string debugprint(const Function& f) { return f.debugprint(); }

}  // namespace theon
