// The standard passes in one table: name, tags (modes are tag queries, see pipeline.hpp) and
// position (passes run in increasing position). Why each runs where it does is at the top of
// its file; in short: merge and constant_fold first (each value once, constants folded), then
// the local rewrites (canonicalize, specialize) on plain nodes, then fusion (which hides
// Elemwise nodes inside Composites), then inplace on the final nodes, then merge again.
#include "rewrite/passes/passes.hpp"
#include "rewrite/pipeline.hpp"

#include <mutex>

namespace theon::rewrite {

void register_standard_passes() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::vector<Pass> standard = {
        // {name, tags, position, run}
        {"merge", {"fast_run", "fast_compile", "merge"}, 0, merge_pass},
        {"constant_fold", {"fast_run", "fast_compile", "canonicalize"}, 1, constant_fold_pass},
        {"canonicalize", {"fast_run", "canonicalize"}, 10, canonicalize_pass},
        {"specialize", {"fast_run", "specialize"}, 40, specialize_pass},
        {"fusion", {"fast_run", "fusion"}, 50, fusion_pass},
        {"inplace", {"fast_run", "inplace"}, 90, inplace_pass},
        {"merge_again", {"fast_run", "fast_compile", "merge"}, 100, merge_pass},
    };
    for (const Pass& p : standard) register_pass(p);
  });
}

}  // namespace theon::rewrite
