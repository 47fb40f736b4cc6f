#include "backends/cpu/blas_call.hpp"
#include "graph/node.hpp"

#include <theon/error.hpp>

#ifdef THEON_HAVE_DNNL
#include <dnnl.h>
#endif
#ifdef THEON_HAVE_CBLAS
#include <cblas.h>
#endif

namespace theon::backends::cpu {

bool have_blas(DType t) {
#if defined(THEON_HAVE_DNNL) || defined(THEON_HAVE_CBLAS)
  if (t == DType::Float32) return true;
#endif
#ifdef THEON_HAVE_CBLAS
  if (t == DType::Float64) return true;
#endif
  (void)t;
  return false;
}

const char* blas_name() {
#if defined(THEON_HAVE_DNNL) && defined(THEON_HAVE_CBLAS)
  return "onednn/cblas";
#elif defined(THEON_HAVE_DNNL)
  return "onednn";
#elif defined(THEON_HAVE_CBLAS)
  return "cblas";
#else
  return "none";
#endif
}

void blas_gemm(DType t, const BlasOperand& oa, const BlasOperand& ob, int64_t m, int64_t n, int64_t k, double alpha,
               const void* a, const void* b, double beta, void* out, const graph::Apply& node) {
  if (t == DType::Float32) {
#ifdef THEON_HAVE_DNNL
    dnnl_status_t st = dnnl_sgemm(oa.trans ? 'T' : 'N', ob.trans ? 'T' : 'N', m, n, k, static_cast<float>(alpha),
                                  static_cast<const float*>(a), oa.ld, static_cast<const float*>(b), ob.ld,
                                  static_cast<float>(beta), static_cast<float*>(out), n);
    if (st != dnnl_success) throw InternalError(node.describe() + ": oneDNN sgemm failed with status " + std::to_string(st));
    return;
#elif defined(THEON_HAVE_CBLAS)
    cblas_sgemm(CblasRowMajor, oa.trans ? CblasTrans : CblasNoTrans, ob.trans ? CblasTrans : CblasNoTrans, m, n, k,
                static_cast<float>(alpha), static_cast<const float*>(a), oa.ld, static_cast<const float*>(b), ob.ld,
                static_cast<float>(beta), static_cast<float*>(out), n);
    return;
#endif
  }
  if (t == DType::Float64) {
#ifdef THEON_HAVE_CBLAS
    cblas_dgemm(CblasRowMajor, oa.trans ? CblasTrans : CblasNoTrans, ob.trans ? CblasTrans : CblasNoTrans, m, n, k,
                alpha, static_cast<const double*>(a), oa.ld, static_cast<const double*>(b), ob.ld, beta,
                static_cast<double*>(out), n);
    return;
#endif
  }
  throw InternalError(node.describe() + ": no BLAS for dtype " + std::string(dtype_name(t)) + " in this build");
}

}  // namespace theon::backends::cpu
