// The CPU backend's loops, by op family: what each op computes, written for the host. Ops
// declare semantics (src/ops/); these files implement them (elemwise_cpu: Elemwise and the
// Composite interpreter; reduce_cpu: Reduce, SumTo, ArgMax, FusedReduce; blas_reference:
// Dot, Gemm, BatchedMatmul loops; shape_cpu: Join, Alloc, indexing, set/inc, Transfer and
// the views; nnet_cpu: softmax and the crossentropy family; random_cpu: RandomDraw). The faster kernels beside them
// (BLAS, generated fused modules) fall back to these loops. The op harness compares them
// with float64 references of its own (tests/cpp/op_harness), never with these.
#pragma once
#include "backends/backend.hpp"
#include "ops/composite.hpp"
#include "ops/fused_reduce.hpp"
#include "ops/scalar/scalar_op_id.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace theon::backends::cpu {

class CpuBackend;

/// A loop: outputs arrive allocated (contiguous, infer_shape's shapes) except views, which it sets.
using LoopFn = void (*)(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs);

/// A kernel running `fn`, named `name` in explain() and the profiler.
class LoopKernel final : public Kernel {
 public:
  LoopKernel(std::string name, LoopFn fn) : name_(std::move(name)), fn_(fn) {}
  std::string name() const override { return name_; }
  void run(const KernelPlan*, const ExecContext&, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    fn_(node, inputs, outputs);
  }

 private:
  std::string name_;
  LoopFn fn_;
};

/// Registers `fn` as the "reference" kernel of `kind`.
void register_loop(CpuBackend& backend, graph::OpKind kind, LoopFn fn);

void register_elemwise_loops(CpuBackend& backend);
void register_reduce_loops(CpuBackend& backend);
void register_shape_loops(CpuBackend& backend);
void register_nnet_loops(CpuBackend& backend);
void register_random_loops(CpuBackend& backend);
void register_pool_loops(CpuBackend& backend);

/// Runs scalar op `op` elementwise over `inputs` into `out` (strided, broadcasting).
void run_elemwise(ops::ScalarOpId op, const std::vector<Array>& inputs, Array& out);
/// Runs a Composite's program over `outputs` (infer_shape's shapes, any strides): the block
/// interpreter, also the fused kernels' fallback when no compiler is available.
void run_composite(const ops::Composite& op, const graph::Apply& node, const std::vector<Array>& inputs,
                   std::vector<Array>& outputs);

/// Computes the region's value for one chunk: `inputs` are views of the node's inputs over the
/// chunk, `out` is a contiguous array of the chunk's shape and the region's output dtype.
using RegionChunkFn = std::function<void(const std::vector<Array>& inputs, Array& out)>;
/// Runs a FusedReduce over `outputs[0]` (allocated with infer_shape's shape), computing the
/// region a chunk of rows at a time with `chunk` (the interpreter, or the generated kernel).
void run_fused_reduce(const ops::FusedReduce& op, const graph::Apply& node, const std::vector<Array>& inputs,
                      std::vector<Array>& outputs, const RegionChunkFn& chunk);

/// Walks every 1-d lane of `shape` along `axis`: fn(offsets) gets each operand's offset of
/// the lane's first element. `strides` holds one Strides per operand in `shape`'s dims (0
/// along `axis` for an operand without it); the lane itself is left to the caller, whose
/// loop runs shape[axis] steps of strides[k][axis]. Shared by argmax and softmax.
void for_each_lane(const Shape& shape, int axis, const std::vector<Strides>& strides,
                   const std::function<void(const std::vector<int64_t>& offsets)>& fn);

/// The exact loops of the matrix products (double accumulation for floats, wrapping uint64
/// for integers): what the BLAS kernels fall back to.
void dot_loop(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs);
void gemm_loop(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs);
void matmul_loop(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs);

}  // namespace theon::backends::cpu
