// float16 as Theano has it: a storage dtype. Which nodes handle float16 values themselves
// (they only move or convert 2-byte elements) and which compute, and so run in float32 with
// casts around them (the float16 pass, rewrite/passes/float16.cpp). Backends ask the same
// question in supports(), so the answer is written once. docs/guide/float16.md.
#pragma once
#include "graph/node.hpp"

namespace theon::ops {

/// True when an input or an output of `node` is float16.
bool touches_float16(const graph::Apply& node);

/// True when `node` handles float16 elements as they are: a Cast (float16 <-> any dtype), a
/// view or metadata op (DimShuffle, Reshape, BroadcastTo, Subtensor, Shape, the gradient
/// blocks and transforms, Assert), a Transfer (a byte copy) or a Composite whose float16
/// values are only read or written by Cast instructions (a fused region that loads half,
/// computes in float and stores half), or a FusedReduce whose region is such a Composite and
/// whose result is not float16. Any other node touching float16 computes and needs
/// the float16 pass.
bool handles_float16(const graph::Apply& node);

}  // namespace theon::ops
