// The one place the CPU backend calls BLAS: how a strided 2-d view maps onto a row-major
// BLAS operand, and a GEMM that picks oneDNN (float32) or CBLAS (float64) as this build has
// them. Shared by the Dot, BatchedMatmul and Gemm kernels.
#pragma once
#include <theon/dtype.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace theon::graph {
class Apply;
}

namespace theon::backends::cpu {

// A 2-d operand as BLAS sees it: row-major with leading dimension `ld`, or transposed.
struct BlasOperand {
  bool trans = false;
  int64_t ld = 0;
  bool ok = false;
};

// Expresses a (rows, cols) view with element strides (rs, cs) as a row-major BLAS operand,
// transposed when its memory is column-major; ok=false when BLAS cannot express it
// (negative or two non-unit strides). Strides of size-1 dims do not matter.
inline BlasOperand as_blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  const bool row1 = rows <= 1, col1 = cols <= 1;
  const int64_t r = std::max<int64_t>(rows, 1), c = std::max<int64_t>(cols, 1);
  if ((col1 || cs == 1) && (row1 || rs >= c)) return {false, row1 ? c : rs, true};
  if ((row1 || rs == 1) && (col1 || cs >= r)) return {true, col1 ? r : cs, true};
  return {};
}

/// Whether this build has a BLAS for `t` (float32: oneDNN or CBLAS; float64: CBLAS).
bool have_blas(DType t);
/// "onednn/cblas", "cblas" or "none": for explain().
const char* blas_name();

/// out(m, n) = alpha * op(a) . op(b) + beta * out, out contiguous with leading dimension n
/// (float32 products up to 2^18 multiply-adds through CBLAS when the build has it, else and
/// beyond through oneDNN, under 2^20 on the calling thread only: blas_call.cpp);
/// `a`, `b`, `out` point at elements of dtype `t` (float32 or float64, have_blas(t) true).
/// `node` is named in a library error (described only then: this runs on every call).
void blas_gemm(DType t, const BlasOperand& oa, const BlasOperand& ob, int64_t m, int64_t n, int64_t k, double alpha,
               const void* a, const void* b, double beta, void* out, const graph::Apply& node);

}  // namespace theon::backends::cpu
