// How a strided 2-d view maps onto a row-major BLAS operand (shared by the CPU matrix-product
// kernels).
#pragma once
#include <algorithm>
#include <cstdint>

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

}  // namespace theon::backends::cpu
