// The one renderer of scalar programs (a fused elementwise region: ops::Composite's
// instruction list, or an Elemwise node as a one-instruction program) as source text, with a
// dialect for each code generator that pastes it:
//   - Dialect::Cpu: C++ for the CPU backend's modules (backends/cpu/fused_cpu.cpp: Composite
//     and FusedReduce regions), <cstdint> type names;
//   - Dialect::Cuda: CUDA C++ for NVRTC (backends/cuda/elemwise_cuda.cpp: Elemwise and
//     Composite; reduce_cuda.cpp: FusedReduce regions), the builtin type names.
// Both call the scalar functors of ops/scalar/scalar_ops.hpp (pasted into every generated
// program, `using namespace theon::scalar`), so every backend computes an instruction with the
// same definition the interpreter uses. What differs is only spelling: type names, and CUDA's
// explicit conversion of a functor's result to the instruction's dtype. Where a value comes
// from (a load) and where a result goes (a store, a scratch block) is the caller's.
//
// Part of libtheon (plain text work, no backend code): libtheon_cuda links it.
#pragma once
#include "ops/composite.hpp"

#include <theon/dtype.hpp>

#include <functional>
#include <string>
#include <vector>

namespace theon::backends {

enum class Dialect { Cpu, Cuda };

/// The C type of `t` in dialect `d`: Cpu "int8_t", "int64_t", "float"; Cuda "signed char",
/// "long long", "float"; float16 is "theon::half" in both (theon/half.hpp, pasted before the
/// scalar functors: a storage type that only Cast instructions convert). Throws
/// NotImplementedError for bfloat16, naming the dialect.
const char* scalar_type(DType t, Dialect d);

/// A scalar program: inputs (value ids [0, n_inputs)), instructions (value n_inputs + k is
/// instruction k's result) and outputs (value ids). A Composite's, or an Elemwise node's.
struct ScalarProgram {
  std::vector<DType> input_dtypes;
  std::vector<ops::CompositeInstr> instrs;
  std::vector<int> outputs;

  static ScalarProgram of(const ops::Composite& c);
  int num_inputs() const { return static_cast<int>(input_dtypes.size()); }
  int num_values() const { return num_inputs() + static_cast<int>(instrs.size()); }
  DType value_dtype(int v) const;
  /// Which values (inputs included) the listed outputs (indexes into `outputs`) depend on.
  std::vector<bool> needed(const std::vector<int>& outs) const;
};

/// The name of value `v` in straight-line code: "v<v>".
std::string value_name(int v);

/// The expression of instruction `in` over its arguments' texts (one per in.args):
/// "Cast().convert<T>(a)" for a Cast, else "Functor{}(a, b)" (Cpu: the destination converts)
/// or "(T)Functor{}(a, b)" (Cuda).
std::string instruction_expr(const ops::CompositeInstr& in, const std::vector<std::string>& args, Dialect d);

/// The statement defining value `v` (of dtype `t`) as `expr`: "const T v<v> = <expr>;".
std::string value_statement(int v, DType t, const std::string& expr, Dialect d);

/// Straight-line code computing the needed values of `p`, one value_statement per line (each
/// line starts with `indent`): the needed inputs, from `load(i)` (an expression reading input
/// i), then the needed instructions in program order, each over value_name() of its arguments.
std::string render_values(const ScalarProgram& p, const std::vector<bool>& need, Dialect d,
                          const std::function<std::string(int input)>& load, const std::string& indent);

}  // namespace theon::backends
