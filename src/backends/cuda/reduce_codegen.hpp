// Shared machinery of the reduction-shaped CUDA kernels (Reduce, SumTo, ArgMax and the
// row-wise nnet ops): splitting an operand's dims into "kept" and "reduced" groups (the
// reduced axes go innermost as strides, no copy) and collapsing each group, generating the
// NVRTC source of a reduction variant, and launching it.
//
// Reductions are deterministic: each output is combined in a fixed tree whose shape depends
// only on the operand's shape and strides (never on the grid or the device), so the same
// inputs give bit-identical results on every run.
#pragma once
#include "backends/cuda/cuda_kernel.hpp"

#include <theon/array.hpp>

#include <string>
#include <vector>

namespace theon::backends::cuda {

/// A group of dims after collapsing: its shape and, per operand, its strides (elements).
struct DimGroup {
  Shape shape;
  std::vector<Strides> strides;  // one per operand
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t size() const;
};

/// The dims of `shape` split into kept (outer, in order) and reduced (inner, in order)
/// groups, each with size-1 dims dropped and adjacent dims merged where every operand is
/// contiguous across them. Row-major order within each group is preserved, so a flat
/// index over the reduced group is the flat index over the original reduced axes.
struct LanePlan {
  DimGroup kept, reduced;
};
LanePlan plan_lanes(const Shape& shape, const std::vector<Strides>& operand_strides, const std::vector<bool>& reduced);

/// The reductions the generated kernels implement: Reduce's folding kinds first, in
/// ReduceKind's order (reduce_cuda.cpp converts by value), then ArgMax both ways. Each is
/// its functor of ops/scalar/reduce_ops.hpp (a row of kRKindRows in reduce_codegen.cpp).
enum class RKind { Sum, Prod, Max, Min, Any, All, Mean, ArgMax, ArgMin };

/// One compiled reduction variant: kind, dtypes and collapsed ranks (never sizes).
struct ReduceSpec {
  RKind kind = RKind::Sum;
  DType in = DType::Float32, out = DType::Float32;
  int kept_rank = 0, reduced_rank = 1;
  std::string name() const;  // also the kernel-cache signature
};

/// The accumulator's size in bytes: sizeof the functor's Acc for the input type (double for
/// float sums and means, int64 for integer sums and products, the input type for max/min,
/// bool for any/all, a (value, index) pair for argmax/argmin), as the CPU's reduce loop (backends/cpu/reduce_cpu.cpp).
size_t accumulator_bytes(const ReduceSpec& spec);

/// A fused elementwise region feeding the reduction (FusedReduce): `code` defines
/// `__device__ TI theon_region_value(const TheonRegionArgs& a, const long long* off)`, the
/// reduced value from the operands a.p[i] at element offsets off[i]; `key` identifies the
/// program and operand dtypes in kernel names.
struct RegionCode {
  std::string key;
  std::string code;
  int n_inputs = 0;
};
constexpr int kMaxRegionInputs = 8;

/// The NVRTC program of a variant. Kernels: reduce_inner_warp, reduce_inner_block,
/// reduce_outer (pass 1 or single pass) and reduce_inner_block_acc, reduce_inner_warp_acc,
/// reduce_outer_acc (pass 2 over partial accumulators); with a region also
/// reduce_region_inner_warp, reduce_region_inner_block and reduce_region_outer (pass 1).
KernelSource reduce_source(const ReduceSpec& spec, const RegionCode* region = nullptr);

/// Everything needed to run one reduction: the spec and the collapsed geometry of the input.
struct ReduceGeometry {
  ReduceSpec spec;
  DimGroup kept, reduced;  // strides per operand (the input, or a region's operands)
  int64_t n_out = 0, n_red = 0;
};
/// Plans operands of `shape` (one Strides each, 0 where broadcast) reduced over the axes
/// flagged in `reduced`; dims merge only where every operand allows it.
ReduceGeometry plan_reduce_operands(RKind kind, DType in_dtype, DType out_dtype, const Shape& shape,
                                    const std::vector<Strides>& operand_strides, const std::vector<bool>& reduced);
/// Plans `in` reduced over the axes flagged in `reduced` (which must have in.ndim() entries).
ReduceGeometry plan_reduce(RKind kind, DType in_dtype, DType out_dtype, const Shape& shape, const Strides& strides,
                           const std::vector<bool>& reduced);

/// How a planned reduction is launched (chosen from shapes and strides only).
struct ReduceLaunch {
  enum Strategy { InnerWarp, InnerBlock, Outer } strategy = InnerBlock;
  int block_y = 1;          // Outer: threads splitting each output's reduced range
  int64_t segments = 1;     // > 1: two passes through partial accumulators
  int64_t segment_len = 0;
};
ReduceLaunch choose_launch(const ReduceGeometry& g);

/// Runs a planned reduction of `in` into the contiguous `out` (n_out elements) on `device`,
/// issued on `stream` (the kernel's). `scale` multiplies the final accumulator for Mean (NaN
/// for an empty reduction); `fmad` is the plan's KernelOptions::fmad.
void run_reduce(const ReduceGeometry& g, const Array& in, Array& out, double scale, int device, cudaStream_t stream,
                bool fmad, const std::string& what);
/// The same over a region's operands (`inputs`, one per operand of the geometry).
void run_reduce(const ReduceGeometry& g, const std::vector<Array>& inputs, Array& out, double scale, int device,
                cudaStream_t stream, bool fmad, const std::string& what, const RegionCode* region);

/// The reduction functors of ops/scalar/reduce_ops.hpp as kernel text, pasted into every
/// kernel that folds with them (so the cache key covers them); it includes scalar_ops.hpp,
/// an NVRTC header.
const std::string& reduce_ops_text();

/// Source text shared by generated kernels: theon_roff<R> (offset of a flat index in a
/// collapsed group, cheap for ranks 0 and 1) and theon_shfl_down overloads for every type.
const char* reduce_device_helpers();

/// Packs a group's shape/strides (operand k) as kernel arguments.
DeviceShape device_shape(const DimGroup& g);
DeviceStrides device_strides(const DimGroup& g, int operand);

}  // namespace theon::backends::cuda
