// lower(): the recipe. Each step is a function in its own file, with its own tests
// (tests/cpp/compile): what it reads and writes is its signature.
#include "backends/cpu/thread_budget.hpp"
#include "compile/dependencies.hpp"
#include "compile/memory_plan.hpp"
#include "compile/placement.hpp"
#include "compile/program.hpp"
#include "compile/thunks.hpp"
#include "compile/transfers.hpp"

namespace theon::compile {

std::shared_ptr<Program> lower(std::shared_ptr<graph::FunctionGraph> fgraph, const LowerOptions& options) {
  auto prog = std::make_shared<Program>();
  prog->fgraph = fgraph;
  prog->options = options.kernel_options;
  const LoweringTarget target = options.target ? *options.target : resolve_target(options);
  prog->device = target.device.str();
  if (!target.fallback_reason.empty()) prog->fallback_notes.push_back(target.fallback_reason);

  rewrite::Target passes = target.passes();
  passes.kernel_options = options.kernel_options;
  prog->passes = rewrite::optimize(*fgraph, options.mode, options.optimizer_including, options.optimizer_excluding,
                                   passes, options.optimizer_requiring);
  Placement placement = place(*fgraph, target);
  const Homes homes = place_leaves(*fgraph, placement, options.input_devices);
  insert_transfers(*fgraph, placement, homes);
  remove_redundant_transfers(*fgraph, placement, homes);
  build_thunks(*prog, placement, homes);
  list_contexts(*prog, target.default_context());
  set_thread_budgets(*prog, options.context_threads, backends::cpu::process_threads());
  plan_dependencies(*prog);
  if (!options.plan_only) bind_streams(*prog);
  if (!options.plan_only) copy_constants_to_devices(*prog);
  prepare_kernels(*prog, options.input_shapes, options.plan_only);
  plan_memory(*prog);
  plan_inplace(*prog);
  return prog;
}

}  // namespace theon::compile
