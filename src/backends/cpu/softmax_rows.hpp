// Softmax, log_softmax and the fused softmax + crossentropy of contiguous float32 rows: the
// CPU's fast path (W7). Each row: its
// maximum, exp(x - max) once per element (SLEEF's 1-ulp vector expf, 16 lanes on AVX-512 or 8
// on AVX2, when libtheon was built with SLEEF and the CPU has it, else std::exp), the sum in double, then a scale by the
// reciprocal (softmax) or a shift by log(sum) (log_softmax). Rows are split across threads
// when the work is large enough to pay for a team. As the reference loop (ops/scalar/nnet_ops.hpp,
// in double) and NumPy: NaN or +inf anywhere in a row, or a row all -inf, makes the row NaN; a
// lane whose x - max is -inf (x = -inf, or a spread beyond FLT_MAX) has probability 0.
#pragma once
#include <cstdint>

namespace theon::backends::cpu {

/// rows x n values, row i at x + i * x_row (y + i * y_row), unit stride within a row.
/// `vector` false takes the scalar path even where the vector one runs (for its tests).
void softmax_rows_f32(const float* x, int64_t x_row, float* y, int64_t y_row, int64_t rows, int64_t n, bool log,
                      bool vector = true);

/// The fused softmax + crossentropy (SoftmaxCrossentropy) of contiguous float32 rows: row i
/// of x at x + i * x_row (unit stride), its softmax into sm + i * n, and its loss
/// -log(softmax(x)[labels[i]]) = max + log(sum) - x[label] into loss[i], the same row
/// arithmetic as softmax. Labels are already checked against n.
void softmax_xent_rows_f32(const float* x, int64_t x_row, const int64_t* labels, float* loss, float* sm, int64_t rows,
                           int64_t n, bool vector = true);

/// Tests: `allow` false makes the vector path use AVX2 even where AVX-512 is present (process-wide);
/// returns whether the AVX-512 rows run when allowed.
bool softmax_rows_avx512(bool allow);

/// Whether the vector path (SLEEF on AVX2) is in use on this machine: for the docs/bench.
bool softmax_rows_vectorised();

}  // namespace theon::backends::cpu
