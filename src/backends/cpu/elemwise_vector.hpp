// Vector loops for a lone float32 transcendental (an Elemwise node the fusion pass left alone,
// e.g. theon.function([x], T.tanh(x))): SLEEF's 1-ulp vector functions (tanh: the generated
// modules' own, tanh_f32_vector.inc, 0.51 ulp), AVX-512 or AVX2+FMA chosen at run time, over
// contiguous arrays. The scalar loop (elemwise_cpu.cpp) is the
// reference and runs everywhere else: strided or broadcast operands, other dtypes, a build
// without SLEEF or a CPU without AVX2. Fused loops have their own (generated) code.
#pragma once
#include "ops/scalar/scalar_op_id.hpp"

#include <cstdint>

namespace theon::backends::cpu {

/// Whether `op` has a float32 vector loop in this build and on this CPU.
bool has_vector_unary_f32(ops::ScalarOpId op);

/// y[i] = op(x[i]) for i < n with the vector loop (split over threads past
/// openmp_elemwise_minsize); false, having written nothing, when has_vector_unary_f32(op) is
/// false. x and y may be the same array (element i is read before it is written).
bool vector_unary_f32(ops::ScalarOpId op, const float* x, float* y, int64_t n);

/// For tests: false makes a CPU with AVX-512 take the AVX2 loop too (process-wide).
void elemwise_vector_avx512(bool enabled);

}  // namespace theon::backends::cpu
