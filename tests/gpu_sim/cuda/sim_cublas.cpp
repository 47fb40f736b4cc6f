// The stand-in cuBLAS of the simulated device (docs/guide/testing.md): built as
// libcublas.so.13 with the real symbol version. Its GEMMs are a column-major reference
// computed in double and enqueued on the handle's stream; they enforce cuBLAS's argument
// contract, so Theon's row-major -> column-major mapping (ops, leading dimensions, batch
// strides, pointer arrays) is checked without a GPU:
//   m, n, k >= 0; lda >= max(1, rows of A's storage), ldb likewise, ldc >= max(1, m);
//   A, B, C of one supported type (R_32F, R_64F) with a matching compute type;
//   C is not read when beta == 0, A and B are not read when alpha == 0 or k == 0;
//   FAST_TF32 (or the TF32 math mode) rounds the inputs to TF32;
//   host pointer mode only; the workspace 256-byte aligned;
//   every matrix lies inside one device allocation (checked when the work runs for the
//   pointer arrays of the batched GEMM, which are read from device memory then).
#include <cublas_api.h>

#include "sim_internal.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <string>

namespace {

struct Handle {
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  cublasAtomicsMode_t atomics = CUBLAS_ATOMICS_NOT_ALLOWED;
  int device = 0;
};
std::mutex g_handles_mu;
std::set<const Handle*> g_handles;

Handle* handle_of(cublasHandle_t h) {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  auto* p = reinterpret_cast<Handle*>(h);
  return p && g_handles.count(p) ? p : nullptr;
}

cublasStatus_t complain(cublasStatus_t s, const char* fn, const std::string& why) {
  std::fprintf(stderr, "gpu_sim cuBLAS: %s: %s\n", fn, why.c_str());
  return s;
}

using gpu_sim_internal::enqueue_on;

using gpu_sim_internal::tf32;

struct Gemm {
  cublasOperation_t ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  cudaDataType type;
  bool tf32;
  double alpha, beta;
  const char* fn;
};

size_t elem(cudaDataType t) { return t == CUDA_R_64F ? 8 : 4; }
bool is_op(cublasOperation_t o) { return o == CUBLAS_OP_N || o == CUBLAS_OP_T || o == CUBLAS_OP_C; }

cublasStatus_t validate(const Gemm& g, cudaDataType at, cudaDataType bt, cudaDataType ct,
                        cublasComputeType_t compute) {
  const auto bad = [&](const std::string& why) { return complain(CUBLAS_STATUS_INVALID_VALUE, g.fn, why); };
  if (!is_op(g.ta) || !is_op(g.tb)) return bad("invalid transa/transb");
  if (g.m < 0 || g.n < 0 || g.k < 0)
    return bad("m, n, k must be >= 0 (m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
               " k=" + std::to_string(g.k) + ")");
  const int64_t arows = g.ta == CUBLAS_OP_N ? g.m : g.k, brows = g.tb == CUBLAS_OP_N ? g.k : g.n;
  if (g.lda < std::max<int64_t>(1, arows))
    return bad("lda=" + std::to_string(g.lda) + " < max(1, " + std::to_string(arows) + ")");
  if (g.ldb < std::max<int64_t>(1, brows))
    return bad("ldb=" + std::to_string(g.ldb) + " < max(1, " + std::to_string(brows) + ")");
  if (g.ldc < std::max<int64_t>(1, g.m))
    return bad("ldc=" + std::to_string(g.ldc) + " < max(1, " + std::to_string(g.m) + ")");
  const auto unsupported = [&](const std::string& why) { return complain(CUBLAS_STATUS_NOT_SUPPORTED, g.fn, why); };
  if (at != bt || at != ct) return unsupported("A, B and C types differ");
  if (at == CUDA_R_32F) {
    if (compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_PEDANTIC &&
        compute != CUBLAS_COMPUTE_32F_FAST_TF32)
      return unsupported("compute type does not fit CUDA_R_32F");
  } else if (at == CUDA_R_64F) {
    if (compute != CUBLAS_COMPUTE_64F && compute != CUBLAS_COMPUTE_64F_PEDANTIC)
      return unsupported("compute type does not fit CUDA_R_64F");
  } else {
    return unsupported("only CUDA_R_32F and CUDA_R_64F are simulated (all the backend uses)");
  }
  return CUBLAS_STATUS_SUCCESS;
}

// Element span of a column-major `rows` x `cols` matrix with leading dimension ld.
size_t span(int64_t rows, int64_t cols, int64_t ld, size_t e) {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<size_t>((cols - 1) * ld + rows) * e;
}

bool reads_ab(const Gemm& g) { return g.alpha != 0 && g.k != 0; }

// Which matrices lie outside device memory (empty when all are fine).
std::string misplaced(const Gemm& g, const void* A, const void* B, const void* C) {
  const size_t e = elem(g.type);
  std::string out;
  if (reads_ab(g)) {
    const int64_t ar = g.ta == CUBLAS_OP_N ? g.m : g.k, ac = g.ta == CUBLAS_OP_N ? g.k : g.m;
    const int64_t br = g.tb == CUBLAS_OP_N ? g.k : g.n, bc = g.tb == CUBLAS_OP_N ? g.n : g.k;
    if (span(ar, ac, g.lda, e) && theon_gpu_sim_device_range(A, span(ar, ac, g.lda, e)) < 0) out += " A";
    if (span(br, bc, g.ldb, e) && theon_gpu_sim_device_range(B, span(br, bc, g.ldb, e)) < 0) out += " B";
  }
  if (span(g.m, g.n, g.ldc, e) && theon_gpu_sim_device_range(C, span(g.m, g.n, g.ldc, e)) < 0) out += " C";
  return out;
}

template <class T>
void gemm_one(const Gemm& g, const T* A, const T* B, T* C) {
  for (int64_t j = 0; j < g.n; ++j)
    for (int64_t i = 0; i < g.m; ++i) {
      double acc = 0;
      if (reads_ab(g))
        for (int64_t p = 0; p < g.k; ++p) {
          double a = g.ta == CUBLAS_OP_N ? A[i + p * g.lda] : A[p + i * g.lda];
          double b = g.tb == CUBLAS_OP_N ? B[p + j * g.ldb] : B[j + p * g.ldb];
          if (g.tf32) a = tf32(static_cast<float>(a)), b = tf32(static_cast<float>(b));
          acc += a * b;
        }
      T& c = C[i + j * g.ldc];
      const double old = g.beta == 0 ? 0.0 : g.beta * static_cast<double>(c);  // C unread at beta 0
      c = static_cast<T>(g.alpha * acc + old);
    }
}

void gemm_any(const Gemm& g, const void* A, const void* B, void* C) {
  if (g.type == CUDA_R_32F)
    gemm_one(g, static_cast<const float*>(A), static_cast<const float*>(B), static_cast<float*>(C));
  else
    gemm_one(g, static_cast<const double*>(A), static_cast<const double*>(B), static_cast<double*>(C));
}

// Validates and builds a GEMM; alpha and beta are host scalars of the compute type's scale type.
cublasStatus_t make(const char* fn, Handle* h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                    int64_t k, const void* alpha, cudaDataType at, int64_t lda, cudaDataType bt, int64_t ldb,
                    const void* beta, cudaDataType ct, int64_t ldc, cublasComputeType_t compute, Gemm& g) {
  if (!h) return complain(CUBLAS_STATUS_NOT_INITIALIZED, fn, "not a handle from cublasCreate");
  if (h->pointer_mode != CUBLAS_POINTER_MODE_HOST)
    return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn, "device pointer mode is not simulated");
  if (!alpha || !beta) return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "alpha or beta is null");
  g = {ta, tb, m, n, k, lda, ldb, ldc, ct, false, 0, 0, fn};
  if (cublasStatus_t s = validate(g, at, bt, ct, compute); s != CUBLAS_STATUS_SUCCESS) return s;
  const bool dbl = ct == CUDA_R_64F;
  g.alpha = dbl ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  g.beta = dbl ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  g.tf32 = !dbl && compute != CUBLAS_COMPUTE_32F_PEDANTIC &&
           (compute == CUBLAS_COMPUTE_32F_FAST_TF32 || (h->math & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH);
  return CUBLAS_STATUS_SUCCESS;
}

[[noreturn]] void die(const Gemm& g, const std::string& why) {
  std::fprintf(stderr, "gpu_sim cuBLAS: %s (when it ran on the stream):%s\n", g.fn, why.c_str());
  std::abort();
}

}  // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* h) {
  if (!h) return CUBLAS_STATUS_INVALID_VALUE;
  auto* p = new Handle;
  p->device = theon_gpu_sim_current_device();
  std::lock_guard<std::mutex> lock(g_handles_mu);
  g_handles.insert(p);
  *h = reinterpret_cast<cublasHandle_t>(p);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
  Handle* p = handle_of(h);
  if (!p) return CUBLAS_STATUS_NOT_INITIALIZED;
  cudaStreamSynchronize(p->stream);  // as cuBLAS: pending work of the handle finishes
  std::lock_guard<std::mutex> lock(g_handles_mu);
  g_handles.erase(p);
  delete p;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) {
  Handle* p = handle_of(h);
  if (!p) return CUBLAS_STATUS_NOT_INITIALIZED;
  p->stream = s;
  p->workspace = nullptr;  // as cuBLAS: setting the stream resets the user workspace
  p->workspace_bytes = 0;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t* s) {
  Handle* p = handle_of(h);
  if (!p) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!s) return CUBLAS_STATUS_INVALID_VALUE;
  *s = p->stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) {
  Handle* p = handle_of(h);
  if (!p) return CUBLAS_STATUS_NOT_INITIALIZED;
  const unsigned base = unsigned(m) & 0xf;
  if (base != CUBLAS_DEFAULT_MATH && base != CUBLAS_TENSOR_OP_MATH && base != CUBLAS_PEDANTIC_MATH &&
      base != CUBLAS_TF32_TENSOR_OP_MATH)
    return CUBLAS_STATUS_INVALID_VALUE;
  p->math = m;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetAtomicsMode(cublasHandle_t h, cublasAtomicsMode_t m) {
  Handle* p = handle_of(h);
  if (!p) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m != CUBLAS_ATOMICS_NOT_ALLOWED && m != CUBLAS_ATOMICS_ALLOWED) return CUBLAS_STATUS_INVALID_VALUE;
  p->atomics = m;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t m) {
  Handle* p = handle_of(h);
  if (!p) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m == CUBLAS_POINTER_MODE_DEVICE)
    return complain(CUBLAS_STATUS_NOT_SUPPORTED, "cublasSetPointerMode", "device pointer mode is not simulated");
  if (m != CUBLAS_POINTER_MODE_HOST) return CUBLAS_STATUS_INVALID_VALUE;
  p->pointer_mode = m;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void* w, size_t bytes) {
  Handle* p = handle_of(h);
  if (!p) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (bytes && !w) return CUBLAS_STATUS_INVALID_VALUE;
  if (reinterpret_cast<uintptr_t>(w) % 256)
    return complain(CUBLAS_STATUS_INVALID_VALUE, "cublasSetWorkspace", "the workspace must be 256-byte aligned");
  if (bytes && theon_gpu_sim_device_range(w, bytes) < 0)
    return complain(CUBLAS_STATUS_INVALID_VALUE, "cublasSetWorkspace", "the workspace is not device memory");
  p->workspace = w;
  p->workspace_bytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}
const char* cublasGetStatusString(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED (not a cuBLAS handle)";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE (an argument breaks cuBLAS's contract: sizes, leading dimensions, "
             "pointers; gpu_sim printed which on stderr)";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED (a type, compute type or mode gpu_sim does not simulate, e.g. device "
             "pointer mode; gpu_sim printed which on stderr)";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_UNKNOWN (gpu_sim)";
  }
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                               int64_t k, const void* alpha, const void* A, cudaDataType at, int64_t lda,
                               const void* B, cudaDataType bt, int64_t ldb, const void* beta, void* C,
                               cudaDataType ct, int64_t ldc, cublasComputeType_t compute, cublasGemmAlgo_t) {
  Handle* h = handle_of(handle);
  Gemm g;
  if (cublasStatus_t s = make("cublasGemmEx_64", h, ta, tb, m, n, k, alpha, at, lda, bt, ldb, beta, ct, ldc, compute, g);
      s != CUBLAS_STATUS_SUCCESS)
    return s;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (const std::string bad = misplaced(g, A, B, C); !bad.empty())
    return complain(CUBLAS_STATUS_INVALID_VALUE, g.fn, "not (inside) device allocations:" + bad);
  enqueue_on(h->stream, [=] { gemm_any(g, A, B, C); });
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                                             int64_t m, int64_t n, int64_t k, const void* alpha, const void* A,
                                             cudaDataType at, int64_t lda, long long sa, const void* B,
                                             cudaDataType bt, int64_t ldb, long long sb, const void* beta, void* C,
                                             cudaDataType ct, int64_t ldc, long long sc, int64_t batch,
                                             cublasComputeType_t compute, cublasGemmAlgo_t) {
  Handle* h = handle_of(handle);
  Gemm g;
  if (cublasStatus_t s = make("cublasGemmStridedBatchedEx_64", h, ta, tb, m, n, k, alpha, at, lda, bt, ldb, beta, ct,
                              ldc, compute, g);
      s != CUBLAS_STATUS_SUCCESS)
    return s;
  if (batch < 0) return complain(CUBLAS_STATUS_INVALID_VALUE, g.fn, "batchCount < 0");
  if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
  const size_t e = elem(ct);
  for (int64_t b = 0; b < batch; b += std::max<int64_t>(batch - 1, 1))  // the first and the last matrix
    if (const std::string bad = misplaced(g, static_cast<const char*>(A) + b * sa * e,
                                          static_cast<const char*>(B) + b * sb * e,
                                          static_cast<const char*>(C) + b * sc * e);
        !bad.empty())
      return complain(CUBLAS_STATUS_INVALID_VALUE, g.fn,
                      "batch " + std::to_string(b) + " not (inside) device allocations:" + bad);
  enqueue_on(h->stream, [=] {
    for (int64_t b = 0; b < batch; ++b)
      gemm_any(g, static_cast<const char*>(A) + b * sa * e, static_cast<const char*>(B) + b * sb * e,
               static_cast<char*>(C) + b * sc * e);
  });
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                      int64_t n, int64_t k, const void* alpha, const void* const Aa[],
                                      cudaDataType at, int64_t lda, const void* const Ba[], cudaDataType bt,
                                      int64_t ldb, const void* beta, void* const Ca[], cudaDataType ct, int64_t ldc,
                                      int64_t batch, cublasComputeType_t compute, cublasGemmAlgo_t) {
  Handle* h = handle_of(handle);
  Gemm g;
  if (cublasStatus_t s = make("cublasGemmBatchedEx_64", h, ta, tb, m, n, k, alpha, at, lda, bt, ldb, beta, ct, ldc,
                              compute, g);
      s != CUBLAS_STATUS_SUCCESS)
    return s;
  if (batch < 0) return complain(CUBLAS_STATUS_INVALID_VALUE, g.fn, "batchCount < 0");
  if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
  const size_t arr = static_cast<size_t>(batch) * sizeof(void*);
  if (theon_gpu_sim_device_range(Aa, arr) < 0 || theon_gpu_sim_device_range(Ba, arr) < 0 ||
      theon_gpu_sim_device_range(Ca, arr) < 0)
    return complain(CUBLAS_STATUS_INVALID_VALUE, g.fn, "the pointer arrays must be in device memory");
  enqueue_on(h->stream, [=] {  // the pointer arrays are device memory, read when the work runs
    for (int64_t b = 0; b < batch; ++b) {
      if (const std::string bad = misplaced(g, Aa[b], Ba[b], Ca[b]); !bad.empty())
        die(g, " batch " + std::to_string(b) + ": not (inside) device allocations:" + bad);
      gemm_any(g, Aa[b], Ba[b], Ca[b]);
    }
  });
  return CUBLAS_STATUS_SUCCESS;
}

// Synchronous strided vector copies between host and device (the legacy default stream).
namespace {
cublasStatus_t vector_copy(int n, int elem_size, const void* x, int incx, void* y, int incy, bool to_device) {
  if (n < 0 || elem_size <= 0 || incx <= 0 || incy <= 0) return CUBLAS_STATUS_INVALID_VALUE;
  if (n == 0) return CUBLAS_STATUS_SUCCESS;
  const void* dev = to_device ? y : x;
  const int dinc = to_device ? incy : incx;
  if (theon_gpu_sim_device_range(dev, (static_cast<size_t>(n - 1) * dinc + 1) * elem_size) < 0)
    return CUBLAS_STATUS_MAPPING_ERROR;
  enqueue_on(nullptr, [=] {
    for (int i = 0; i < n; ++i)
      std::memcpy(static_cast<char*>(y) + static_cast<size_t>(i) * incy * elem_size,
                  static_cast<const char*>(x) + static_cast<size_t>(i) * incx * elem_size, elem_size);
  });
  cudaStreamSynchronize(nullptr);
  return CUBLAS_STATUS_SUCCESS;
}
}  // namespace

cublasStatus_t cublasSetVector(int n, int elem_size, const void* x, int incx, void* y, int incy) {
  return vector_copy(n, elem_size, x, incx, y, incy, true);
}
cublasStatus_t cublasGetVector(int n, int elem_size, const void* x, int incx, void* y, int incy) {
  return vector_copy(n, elem_size, x, incx, y, incy, false);
}

}  // extern "C"
