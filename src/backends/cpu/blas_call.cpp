#include "backends/cpu/blas_call.hpp"
#include "graph/node.hpp"

#include <theon/error.hpp>

#ifdef THEON_HAVE_DNNL
#include <dnnl.h>
#endif
#ifdef THEON_HAVE_CBLAS
#include <cblas.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace theon::backends::cpu {

namespace {

// oneDNN's sgemm runs on omp_get_max_threads() threads. Below this many multiply-adds (about
// 50 us on one core) a second thread saves little and, on a loaded machine, can cost an OpenMP
// barrier waiting for a descheduled thread (W2 measured 3-20 ms a call instead of 0.1 ms):
// such products run on the calling thread only. The setting is the calling thread's own
// (nthreads-var), restored after the call.
constexpr int64_t kSerialGemmWork = int64_t(1) << 20;

// Up to this many multiply-adds (64x64x64) a float32 product goes to CBLAS (OpenBLAS) when
// the build has both: oneDNN's sgemm costs more per call there (64^3: 5.3 us against 4.6;
// 64x32x64: 2.8 against 2.4; 32^3: 0.85 against 0.62, one core of the Zen 4 machine), and
// OpenBLAS runs products this small on the calling thread whatever its thread count
// (interface/gemm.c: single-threaded up to SMP_THRESHOLD_MIN x GEMM_MULTITHREAD_THRESHOLD
// = 65536 x 4). Beyond it oneDNN is ahead (128^3: 36 us against 42 on one thread, 190 on
// OpenBLAS's two).
constexpr int64_t kCblasSmallWork = int64_t(1) << 18;

class SerialIfSmall {
 public:
  explicit SerialIfSmall(int64_t work) {
#ifdef _OPENMP
    if (work < kSerialGemmWork && !omp_in_parallel()) {
      saved_ = omp_get_max_threads();
      if (saved_ > 1) omp_set_num_threads(1);
      else saved_ = 0;
    }
#else
    (void)work;
#endif
  }
  ~SerialIfSmall() {
#ifdef _OPENMP
    if (saved_ > 0) omp_set_num_threads(saved_);
#endif
  }
  SerialIfSmall(const SerialIfSmall&) = delete;
  SerialIfSmall& operator=(const SerialIfSmall&) = delete;

 private:
  int saved_ = 0;
};

}  // namespace

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
#if defined(THEON_HAVE_DNNL) && defined(THEON_HAVE_CBLAS)
    if (m * n * k <= kCblasSmallWork) {
      cblas_sgemm(CblasRowMajor, oa.trans ? CblasTrans : CblasNoTrans, ob.trans ? CblasTrans : CblasNoTrans, m, n, k,
                  static_cast<float>(alpha), static_cast<const float*>(a), oa.ld, static_cast<const float*>(b), ob.ld,
                  static_cast<float>(beta), static_cast<float*>(out), n);
      return;
    }
#endif
#ifdef THEON_HAVE_DNNL
    const SerialIfSmall serial(m * n * k);
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
