// The stand-in cuBLASLt of the simulated device (docs/guide/testing.md): built as
// libcublasLt.so.13 with the real symbol version. It implements the calls the backend makes
// (src/backends/cuda/blas_cuda.cpp: a GEMM with a bias epilogue) and nothing else; its
// matmul is a column-major reference computed in double and enqueued on the given stream,
// and it enforces cuBLASLt's argument contract so Theon's row-major -> column-major mapping
// (ops, layouts, the bias's orientation) is checked without a GPU:
//   descriptors and layouts only from their Create calls; attributes of the exact size;
//   A, B, C, D of one type (R_32F, R_64F) with a matching compute and scale type;
//   layouts: ld >= max(1, rows); op(A) (m, k), op(B) (k, n), C and D (m, n);
//   C is not read when beta == 0; C == D needs identical layouts;
//   epilogues DEFAULT, BIAS, RELU, RELU_BIAS (relu as documented, x := max(x, 0): a NaN
//   becomes 0, as fmax gives; Theon keeps its relu out of cuBLASLt for that reason); the
//   bias is packed, of D's type, one element per row of D, inside a device allocation;
//   host pointer mode only; the workspace inside a device allocation and no larger than the
//   preference allowed; the algo from cublasLtMatmulAlgoGetHeuristic (or null);
//   every matrix lies inside one device allocation.
// Anything else (other attributes, types, epilogues, batched layouts) is refused with
// CUBLAS_STATUS_NOT_SUPPORTED and a line on stderr naming it. Simulator-only export:
// theon_gpu_sim_cublaslt_matmuls(), the matmuls accepted so far (tests check which path a
// Gemm took). SIM_CUBLASLT_NO_ALGO=1 (read at each heuristic call) makes the heuristic find
// no algorithm (NOT_SUPPORTED, 0 results), as real cuBLASLt may for a configuration: the
// backend's fallback path is then tested too.
#include <cublasLt.h>

#include "sim_internal.hpp"

#include <algorithm>
#include <atomic>
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

constexpr uint64_t kAlgoMagic = 0x7468656f6e4c7421ull;  // "theonLt!": an algo this simulator handed out

struct LtHandle {
  int device = 0;
};
struct Desc {
  cublasComputeType_t compute;
  cudaDataType_t scale;
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  int32_t bias_type = -1;  // -1: D's type
};
struct Layout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld;
};
struct Pref {
  uint64_t max_workspace = 0;
};

std::mutex g_mu;
std::set<const void*> g_objects;
std::atomic<long long> g_matmuls{0};  // every live handle, descriptor, layout and preference

template <class T>
T* live(const void* p) {
  std::lock_guard<std::mutex> lock(g_mu);
  return p && g_objects.count(p) ? static_cast<T*>(const_cast<void*>(p)) : nullptr;
}
template <class T, class Out>
cublasStatus_t create(Out* out, T* obj) {
  if (!out) {
    delete obj;
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_objects.insert(obj);
  *out = reinterpret_cast<Out>(obj);
  return CUBLAS_STATUS_SUCCESS;
}
template <class T>
cublasStatus_t destroy(const void* p) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!p) return CUBLAS_STATUS_SUCCESS;  // as cuBLASLt: destroying null is fine
  if (!g_objects.erase(p)) return CUBLAS_STATUS_INVALID_VALUE;
  delete static_cast<const T*>(p);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t complain(cublasStatus_t s, const char* fn, const std::string& why) {
  std::fprintf(stderr, "gpu_sim cuBLASLt: %s: %s\n", fn, why.c_str());
  return s;
}

using gpu_sim_internal::enqueue_on;

using gpu_sim_internal::tf32;

size_t elem(cudaDataType t) { return t == CUDA_R_64F ? 8 : 4; }
size_t span(uint64_t rows, uint64_t cols, int64_t ld, size_t e) {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<size_t>((cols - 1) * ld + rows) * e;
}
bool has_bias(uint32_t epi) { return epi == CUBLASLT_EPILOGUE_BIAS || epi == CUBLASLT_EPILOGUE_RELU_BIAS; }
bool has_relu(uint32_t epi) { return epi == CUBLASLT_EPILOGUE_RELU || epi == CUBLASLT_EPILOGUE_RELU_BIAS; }

// The GEMM as validated: D(m, n) = epilogue(alpha * op(A) op(B) + beta * C).
struct Problem {
  cublasOperation_t ta, tb;
  int64_t m, n, k, lda, ldb, ldc, ldd;
  cudaDataType type;
  bool tf32;
  uint32_t epilogue;
  const void* bias;
};

// Checks the descriptor and the layouts (everything but pointers and scalars).
cublasStatus_t validate(const char* fn, const Desc* d, const Layout* a, const Layout* b, const Layout* c,
                        const Layout* dd, Problem& p) {
  if (!d || !a || !b || !c || !dd) return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "a descriptor or layout is not from its Create call");
  const auto unsupported = [&](const std::string& why) { return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn, why); };
  const auto bad = [&](const std::string& why) { return complain(CUBLAS_STATUS_INVALID_VALUE, fn, why); };
  const cudaDataType t = dd->type;
  if (a->type != t || b->type != t || c->type != t) return unsupported("A, B, C and D types differ");
  if (t == CUDA_R_32F) {
    if (d->compute != CUBLAS_COMPUTE_32F && d->compute != CUBLAS_COMPUTE_32F_PEDANTIC &&
        d->compute != CUBLAS_COMPUTE_32F_FAST_TF32)
      return unsupported("compute type does not fit CUDA_R_32F");
    if (d->scale != CUDA_R_32F) return unsupported("scale type must be CUDA_R_32F for CUDA_R_32F data");
  } else if (t == CUDA_R_64F) {
    if (d->compute != CUBLAS_COMPUTE_64F && d->compute != CUBLAS_COMPUTE_64F_PEDANTIC)
      return unsupported("compute type does not fit CUDA_R_64F");
    if (d->scale != CUDA_R_64F) return unsupported("scale type must be CUDA_R_64F for CUDA_R_64F data");
  } else {
    return unsupported("only CUDA_R_32F and CUDA_R_64F are simulated (all the backend uses)");
  }
  for (const Layout* l : {a, b, c, dd})
    if (l->ld < std::max<int64_t>(1, static_cast<int64_t>(l->rows)))
      return bad("a layout has ld=" + std::to_string(l->ld) + " < max(1, rows=" + std::to_string(l->rows) + ")");
  const uint64_t m = dd->rows, n = dd->cols;
  const uint64_t am = d->ta == CUBLAS_OP_N ? a->rows : a->cols, ak = d->ta == CUBLAS_OP_N ? a->cols : a->rows;
  const uint64_t bk = d->tb == CUBLAS_OP_N ? b->rows : b->cols, bn = d->tb == CUBLAS_OP_N ? b->cols : b->rows;
  if (am != m || bn != n || ak != bk || c->rows != m || c->cols != n)
    return bad("shapes do not chain: op(A) " + std::to_string(am) + "x" + std::to_string(ak) + ", op(B) " +
               std::to_string(bk) + "x" + std::to_string(bn) + ", C " + std::to_string(c->rows) + "x" +
               std::to_string(c->cols) + ", D " + std::to_string(m) + "x" + std::to_string(n));
  const uint32_t e = d->epilogue;
  if (e != CUBLASLT_EPILOGUE_DEFAULT && e != CUBLASLT_EPILOGUE_BIAS && e != CUBLASLT_EPILOGUE_RELU &&
      e != CUBLASLT_EPILOGUE_RELU_BIAS)
    return unsupported("epilogue " + std::to_string(e) + " is not simulated (DEFAULT, BIAS, RELU, RELU_BIAS are)");
  if (has_bias(e)) {
    if (!d->bias) return bad("a bias epilogue without CUBLASLT_MATMUL_DESC_BIAS_POINTER");
    if (d->bias_type != -1 && d->bias_type != static_cast<int32_t>(t))
      return unsupported("bias data type differs from D's (only D's type is simulated)");
  }
  p = {d->ta, d->tb, static_cast<int64_t>(m), static_cast<int64_t>(n), static_cast<int64_t>(ak), a->ld, b->ld, c->ld,
       dd->ld, t, t == CUDA_R_32F && d->compute == CUBLAS_COMPUTE_32F_FAST_TF32, e, d->bias};
  return CUBLAS_STATUS_SUCCESS;
}

template <class T>
void matmul_one(const Problem& p, double alpha, double beta, const T* A, const T* B, const T* C, T* D) {
  const T* bias = static_cast<const T*>(p.bias);
  for (int64_t j = 0; j < p.n; ++j)
    for (int64_t i = 0; i < p.m; ++i) {
      double acc = 0;
      if (alpha != 0)
        for (int64_t q = 0; q < p.k; ++q) {
          double a = p.ta == CUBLAS_OP_N ? A[i + q * p.lda] : A[q + i * p.lda];
          double b = p.tb == CUBLAS_OP_N ? B[q + j * p.ldb] : B[j + q * p.ldb];
          if (p.tf32) a = tf32(static_cast<float>(a)), b = tf32(static_cast<float>(b));
          acc += a * b;
        }
      double v = alpha * acc + (beta == 0 ? 0.0 : beta * static_cast<double>(C[i + j * p.ldc]));
      if (has_bias(p.epilogue)) v += static_cast<double>(bias[i]);  // one bias element per row of D
      if (has_relu(p.epilogue)) v = std::fmax(v, 0.0);             // max(x, 0): NaN -> 0
      D[i + j * p.ldd] = static_cast<T>(v);
    }
}

}  // namespace

extern "C" {

long long theon_gpu_sim_cublaslt_matmuls(void) { return g_matmuls.load(); }

cublasStatus_t cublasLtCreate(cublasLtHandle_t* h) {
  auto* p = new LtHandle;
  p->device = theon_gpu_sim_current_device();
  return create(h, p);
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
  if (!live<LtHandle>(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  return destroy<LtHandle>(h);
}
const char* cublasLtGetStatusString(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED (not a cuBLASLt handle)";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE (an argument breaks cuBLASLt's contract; gpu_sim printed which on stderr)";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED (something gpu_sim's cuBLASLt does not simulate; it printed which on "
             "stderr)";
    default: return "CUBLAS_STATUS (gpu_sim cuBLASLt: other)";
  }
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t compute, cudaDataType_t scale) {
  auto* p = new Desc;
  p->compute = compute;
  p->scale = scale;
  return create(d, p);
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) { return destroy<Desc>(d); }
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
  static const char* fn = "cublasLtMatmulDescSetAttribute";
  Desc* d = live<Desc>(desc);
  if (!d) return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "not a descriptor from cublasLtMatmulDescCreate");
  if (!buf) return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "buf is null");
  auto sized = [&](size_t want) {
    return size == want ? CUBLAS_STATUS_SUCCESS
                        : complain(CUBLAS_STATUS_INVALID_VALUE, fn,
                                   "attribute " + std::to_string(attr) + ": sizeInBytes " + std::to_string(size) +
                                       " != " + std::to_string(want));
  };
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB: {
      if (cublasStatus_t s = sized(sizeof(int32_t)); s != CUBLAS_STATUS_SUCCESS) return s;
      int32_t op;
      std::memcpy(&op, buf, sizeof op);
      if (op != CUBLAS_OP_N && op != CUBLAS_OP_T) return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn, "only ops N and T are simulated");
      (attr == CUBLASLT_MATMUL_DESC_TRANSA ? d->ta : d->tb) = static_cast<cublasOperation_t>(op);
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      if (cublasStatus_t s = sized(sizeof(uint32_t)); s != CUBLAS_STATUS_SUCCESS) return s;
      std::memcpy(&d->epilogue, buf, sizeof d->epilogue);
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      if (cublasStatus_t s = sized(sizeof(void*)); s != CUBLAS_STATUS_SUCCESS) return s;
      std::memcpy(&d->bias, buf, sizeof d->bias);
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
      if (cublasStatus_t s = sized(sizeof(int32_t)); s != CUBLAS_STATUS_SUCCESS) return s;
      std::memcpy(&d->bias_type, buf, sizeof d->bias_type);
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: {
      if (cublasStatus_t s = sized(sizeof(int32_t)); s != CUBLAS_STATUS_SUCCESS) return s;
      int32_t mode;
      std::memcpy(&mode, buf, sizeof mode);
      if (mode != CUBLASLT_POINTER_MODE_HOST)
        return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn, "only host pointer mode is simulated");
      return CUBLAS_STATUS_SUCCESS;
    }
    default:
      return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn,
                      "attribute " + std::to_string(attr) +
                          " is not simulated (TRANSA, TRANSB, EPILOGUE, BIAS_POINTER, BIAS_DATA_TYPE, POINTER_MODE are)");
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType type, uint64_t rows, uint64_t cols,
                                          int64_t ld) {
  return create(l, new Layout{type, rows, cols, ld});
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) { return destroy<Layout>(l); }

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) { return create(p, new Pref); }
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) { return destroy<Pref>(p); }
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t size) {
  static const char* fn = "cublasLtMatmulPreferenceSetAttribute";
  Pref* p = live<Pref>(pref);
  if (!p) return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "not a preference from cublasLtMatmulPreferenceCreate");
  if (!buf) return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "buf is null");
  if (attr != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES)
    return complain(CUBLAS_STATUS_NOT_SUPPORTED, fn, "attribute " + std::to_string(attr) + " is not simulated (MAX_WORKSPACE_BYTES is)");
  if (size != sizeof(uint64_t)) return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "MAX_WORKSPACE_BYTES is a uint64_t");
  std::memcpy(&p->max_workspace, buf, sizeof p->max_workspace);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
  static const char* fn = "cublasLtMatmulAlgoGetHeuristic";
  if (!live<LtHandle>(handle)) return complain(CUBLAS_STATUS_NOT_INITIALIZED, fn, "not a handle from cublasLtCreate");
  if (!live<Pref>(pref)) return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "not a preference from cublasLtMatmulPreferenceCreate");
  if (requested <= 0 || !results || !returned) return complain(CUBLAS_STATUS_INVALID_VALUE, fn, "no room for results");
  Problem p;
  if (cublasStatus_t s = validate(fn, live<Desc>(desc), live<Layout>(a), live<Layout>(b), live<Layout>(c),
                                  live<Layout>(d), p);
      s != CUBLAS_STATUS_SUCCESS)
    return s;
  if (const char* e = std::getenv("SIM_CUBLASLT_NO_ALGO"); e && std::string(e) == "1") {
    *returned = 0;
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  std::memset(&results[0], 0, sizeof results[0]);
  results[0].algo.data[0] = kAlgoMagic;
  results[0].workspaceSize = 0;  // the reference needs none
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                              cublasLtMatrixLayout_t adesc, const void* B, cublasLtMatrixLayout_t bdesc,
                              const void* beta, const void* C, cublasLtMatrixLayout_t cdesc, void* D,
                              cublasLtMatrixLayout_t ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
                              size_t workspace_bytes, cudaStream_t stream) {
  static const char* fn = "cublasLtMatmul";
  if (!live<LtHandle>(handle)) return complain(CUBLAS_STATUS_NOT_INITIALIZED, fn, "not a handle from cublasLtCreate");
  Problem p;
  const Layout* cl = live<Layout>(cdesc);
  const Layout* dl = live<Layout>(ddesc);
  if (cublasStatus_t s = validate(fn, live<Desc>(desc), live<Layout>(adesc), live<Layout>(bdesc), cl, dl, p);
      s != CUBLAS_STATUS_SUCCESS)
    return s;
  const auto bad = [&](const std::string& why) { return complain(CUBLAS_STATUS_INVALID_VALUE, fn, why); };
  if (!alpha || !beta) return bad("alpha or beta is null");
  if (algo && algo->data[0] != kAlgoMagic) return bad("algo is not one cublasLtMatmulAlgoGetHeuristic returned");
  if (workspace_bytes && (!workspace || theon_gpu_sim_device_range(workspace, workspace_bytes) < 0))
    return bad("the workspace is not (inside) a device allocation");
  if (C == D && (cl->rows != dl->rows || cl->cols != dl->cols || cl->ld != dl->ld))
    return bad("C == D (in place) needs Cdesc == Ddesc");
  const bool dbl = p.type == CUDA_R_64F;
  const double al = dbl ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  const double be = dbl ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  if (p.m == 0 || p.n == 0) return CUBLAS_STATUS_SUCCESS;
  const size_t e = elem(p.type);
  std::string out;
  if (al != 0 && p.k != 0) {
    const int64_t ar = p.ta == CUBLAS_OP_N ? p.m : p.k, ac = p.ta == CUBLAS_OP_N ? p.k : p.m;
    const int64_t br = p.tb == CUBLAS_OP_N ? p.k : p.n, bc = p.tb == CUBLAS_OP_N ? p.n : p.k;
    if (theon_gpu_sim_device_range(A, span(ar, ac, p.lda, e)) < 0) out += " A";
    if (theon_gpu_sim_device_range(B, span(br, bc, p.ldb, e)) < 0) out += " B";
  }
  if (be != 0 && theon_gpu_sim_device_range(C, span(p.m, p.n, p.ldc, e)) < 0) out += " C";
  if (theon_gpu_sim_device_range(D, span(p.m, p.n, p.ldd, e)) < 0) out += " D";
  if (has_bias(p.epilogue) && theon_gpu_sim_device_range(p.bias, static_cast<size_t>(p.m) * e) < 0)
    out += " bias (one packed element per row of D)";
  if (!out.empty()) return bad("not (inside) device allocations:" + out);
  ++g_matmuls;
  enqueue_on(stream, [=] {
    if (dbl)
      matmul_one(p, al, be, static_cast<const double*>(A), static_cast<const double*>(B), static_cast<const double*>(C),
                 static_cast<double*>(D));
    else
      matmul_one(p, al, be, static_cast<const float*>(A), static_cast<const float*>(B), static_cast<const float*>(C),
                 static_cast<float*>(D));
  });
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
