// The standard rewrite passes. Each is a small function `bool pass(FunctionGraph&)` that
// returns whether it changed the graph; register_standard_passes() (register.cpp: one table)
// adds them to the pipeline with their positions and tags (modes are tag queries, see
// pipeline.hpp). The top of each pass's file says what must run before and after it.
#pragma once
#include "graph/function_graph.hpp"
#include "rewrite/pipeline.hpp"

namespace theon::rewrite {

/// Common-subexpression elimination: nodes with equal ops (equals()) and the same inputs
/// become one; equal constants (dtype, shape, bytes) become one. Impure ops never merge.
bool merge_pass(graph::FunctionGraph& fgraph);

/// Evaluates pure nodes whose inputs are all constants (up to a size limit) and replaces
/// them by constants. Shared variables are not constants.
/// Runs the CPU kernels with the target's frozen kernel options (never config()).
bool constant_fold_pass(graph::FunctionGraph& fgraph, const Target& target = {});

/// Elementwise fusion: maximal convex regions of Elemwise nodes become one Composite
/// (fusion.cpp); results used outside a region become extra outputs. On a CPU target, a
/// reduction also fuses with its elementwise producer (FusedReduce). Tags fast_run, fusion.
bool fusion_pass(graph::FunctionGraph& fgraph, const Target& target = {});

/// The shape (or size) of an expression read from an input of it where the op's shape rule
/// says they agree (shape_of.cpp): shape(x * 2) -> shape(x), so the expression is not
/// computed. Tags fast_run, fast_compile, shape_of.
bool shape_of_pass(graph::FunctionGraph& fgraph);

/// Local algebraic simplifications to a fixed point (canonicalize.cpp): x*1, x+0, x-0, x/1,
/// neg(neg x), log(exp x), log(sigmoid) -> -softplus(-x),
/// log(1 - sigmoid) -> -softplus, dimshuffle and reshape chains. Replacements keep exact types.
bool canonicalize_pass(graph::FunctionGraph& fgraph);

/// Numerical stabilization of softmax (stabilize.cpp): exp(z) / sum(exp(z)) -> softmax(z),
/// softmax(x - max(x)) -> softmax(x), log(softmax) -> log_softmax, and the gradients grad()
/// built for them -> stable forms (no division by an underflowing probability). Tags
/// fast_run, fast_compile, stabilize.
bool stabilize_pass(graph::FunctionGraph& fgraph);

/// dot(a, b) + c and alpha * dot(a, b) + beta * c -> one Gemm node (specialize.cpp).
bool specialize_pass(graph::FunctionGraph& fgraph);

/// conv2d(x, w) + b.dimshuffle('x', 0, 'x', 'x') and relu of either -> one Conv2d with an
/// epilogue (conv_epilogue.cpp), where the intermediate has no other client; also makes
/// relu's gradient mask read relu's output so the fold happens in training graphs. Tags
/// fast_run, conv_epilogue.
bool conv_epilogue_pass(graph::FunctionGraph& fgraph);
/// Gemm epilogues: a broadcast bias vector and a following relu folded into the Gemm
/// (gemm_epilogue.cpp). Tags fast_run, specialize, gemm_epilogue.
bool gemm_epilogue_pass(graph::FunctionGraph& fgraph);

/// Replaces nodes whose output 0 may overwrite an input buffer that nothing reads afterwards
/// by their op's inplace variant (Op::inplace_variant; inplace.cpp documents the exact rule).
/// Tags fast_run, inplace.
bool inplace_pass(graph::FunctionGraph& fgraph);

/// float16 computed in float32 (float16.cpp): every node computing on float16 values runs in
/// float32 between casts; casts, views and transfers keep float16. Required: runs in every
/// mode (no kernel computes in float16). Tag float16.
bool float16_pass(graph::FunctionGraph& fgraph);

/// Registers the passes above (idempotent). Called by the pipeline on first use.
void register_standard_passes();

}  // namespace theon::rewrite
