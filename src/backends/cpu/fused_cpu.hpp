// Fused CPU kernels: a Composite's program compiled to C++ by the system compiler (the
// plan's KernelOptions::cxx), loaded with dlopen and cached on disk under config().compiledir.
// All the kernels a lowered function needs go into one module, one compiler run
// (prepare_fused_kernels); a FusedReduce's region is such a kernel too, run a chunk at a time.
//
// A kernel is specialised on the program (with its dtypes), the collapsed rank of the
// iteration space (contiguous dims merged, at most 4), each operand's broadcast bitmask
// over the collapsed dims and whether its inner stride is 1 — never on sizes. Beyond rank 4,
// when the outputs have different shapes, without a compiler (cxx empty) or when compiling
// fails, the Composite's interpreter runs (one warning per process says why).
// Transcendentals use SLEEF's 1-ulp vector functions when sleef.h is installed (declared in the
// module with GCC vector types, so the module does not parse sleef.h / immintrin.h).
// The generated loop walks a range of blocks of 128 elements; the host runs the ranges (OpenMP,
// dynamic schedule in groups of about 16K elements, from 32K elements up), so modules are
// compiled without OpenMP. Instruction results live in scratch blocks reused once
// dead, and an output with unit inner stride is computed in place (no scratch + copy; for an
// inplace Composite only when no later instruction reads the destroyed input). No fast-math:
// -std=c++20 keeps -ffp-contract=off, so a*b + c is rounded twice as in the interpreter.
// Outputs of 4 MiB and more get MADV_HUGEPAGE before the kernel first touches them.
#pragma once
#include "backends/cpu/cpu_backend.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace theon::ops {
class Composite;
}

namespace theon::backends::cpu {

/// Registers the "Composite" and "FusedReduce" kernels.
void register_fused_kernels(CpuBackend& backend);

/// Compiles, in one go, the kernels the Composite nodes among `nodes` will most likely need
/// (the variant their static types predict: unknown dims not 1, contiguous operands, views
/// through DimShuffle followed), so that a lowered function pays the compiler once: every
/// kernel goes into one module (two, compiled by two processes at once, from 8 kernels on)
/// cached on disk under a hash of the whole module. Kernels this process already loaded are
/// left out. A variant seen at run time that was not foreseen is compiled alone when first
/// run. Compiles with options.cxx; does nothing when it is empty. CpuBackend::prepare_batch.
void prepare_fused_kernels(const std::vector<const graph::Apply*>& nodes, const KernelOptions& options);

/// Counters of this process: modules compiled (the compiler ran), modules loaded from the
/// disk cache, and variants that fell back to the interpreter because of a failure.
struct FusedStats {
  int64_t compiled = 0;
  int64_t loaded_from_disk = 0;
  int64_t interpreted_calls = 0;
};
FusedStats fused_stats();

/// The generated source of a variant as a standalone module (for tests, debugging and
/// bench/w5_kernel_probe): `theon_fused_kernel(shape, ptrs, strides)` runs every block, in
/// parallel when compiled with -fopenmp. Rank of the collapsed
/// iteration space, then per operand (outputs first, then inputs) a broadcast bitmask
/// (bit d: collapsed dim d has stride 0) and whether its inner stride is 1.
std::string fused_source(const ops::Composite& op, int rank, const std::vector<uint32_t>& masks,
                         const std::vector<bool>& unit);

/// The directory of the compiled-kernel cache (config().compiledir, else
/// $XDG_CACHE_HOME/theon, else ~/.cache/theon), with the "cpu" subfolder.
std::string fused_cache_dir();

}  // namespace theon::backends::cpu
