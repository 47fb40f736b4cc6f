// BLIS side of blas_probe.cpp, in its own translation unit: blis.h declares its own CBLAS,
// which would clash with OpenBLAS's cblas.h in blas_probe.cpp.
#include <cstdint>
#include <string>

extern "C" {
#include <blis.h>
}

std::string probe_blis_info() {
  return std::string("BLIS ") + bli_info_get_version_str() + "; arch " + bli_arch_string(bli_arch_query_id());
}

void probe_blis_threads(int n) { bli_thread_set_num_threads(n); }

void probe_blis_sgemm(int64_t n, const float* A, const float* B, float* C) {
  float one = 1.0f, zero = 0.0f;
  bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, const_cast<float*>(A), n, 1,
            const_cast<float*>(B), n, 1, &zero, C, n, 1);
}

void probe_blis_dgemm(int64_t n, const double* A, const double* B, double* C) {
  double one = 1.0, zero = 0.0;
  bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, const_cast<double*>(A), n, 1,
            const_cast<double*>(B), n, 1, &zero, C, n, 1);
}
