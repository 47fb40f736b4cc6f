// Matrix products on CUDA devices: Dot, Gemm (alpha * a.b + beta * c, formed by the
// specialize pass) and BatchedMatmul (numpy.matmul).
//
// float32 / float64 run through cuBLAS (cublasGemmEx / GemmStridedBatchedEx / GemmBatchedEx,
// 64-bit-size variants). Theon's arrays are row-major and cuBLAS is column-major, so every
// product is issued as C^T = B^T . A^T: a row-major (m, n) output is a column-major (n, m)
// matrix with ld n, and each operand's strides pick op N or T and its leading dimension, so
// transposed views cost nothing. Operands cuBLAS cannot describe (two non-unit strides,
// negative or broadcast strides inside a matrix) are first made contiguous on the device by
// the shared strided copy (copy_codegen.hpp). Batch dims are collapsed where both operands'
// strides chain; one remaining dim becomes a strided batch (broadcast dims are stride 0),
// several become a pointer-array batch whose pointers a tiny kernel writes on the device.
//
// Precision: float32 uses CUBLAS_COMPUTE_32F (IEEE FP32 multiply-adds, no TF32), unless
// the plan's allow_tf32, which selects CUBLAS_COMPUTE_32F_FAST_TF32. The compute type is
// chosen per call (not as the handle's math mode), so the shared handle is never mutated.
// cuBLAS is bitwise reproducible on one stream with a fixed workspace (cublas_handles.hpp).
//
// Integer dtypes (cuBLAS has none) run an NVRTC tiled kernel: 64x64 output tiles, 16-deep k
// tiles in shared memory, 16x16 threads with 4x4 register accumulators, uint64 accumulation
// and a truncating store: exactly the CPU reference's NumPy wrap-around. Each thread sums
// its k in order, so results never depend on the launch shape.
//
// Gemm with a row bias (one element per output column, b in relu(x.W + b)), no relu and
// beta 1 runs as one cuBLASLt matmul with CUBLASLT_EPILOGUE_BIAS: no broadcast copy of the
// bias, no second pass (cuBLASLt below for what it takes and why the rest stays). Any other
// Gemm broadcasts c (a matrix, or a row / col bias vector viewed as one) into the output
// (copy_strided) and lets cuBLAS add alpha * a.b with beta; with a relu epilogue, when the
// product itself broadcasts (m or n is 1 against a larger c), k == 0, or alpha or beta is 0
// (cuBLAS would skip the operand, losing NaN * 0), the product goes to a temporary and one
// NVRTC elementwise kernel forms act(alpha * p + beta * c) in double (nnet::gemm_epilogue,
// ops/scalar/nnet_ops.hpp, the CPU's definition). Integer Gemm applies relu at its store.
// A Gemm with no addend (relu(dot(a, b)): inputs (a, b)) takes the same paths with c absent:
// cuBLAS writes alpha * a.b into the output directly without relu, else the epilogue kernel
// reads no c (it adds -0, which leaves every value as it is).
//
// Size 0: empty outputs do nothing; k == 0 gives zeros (beta * c for Gemm). No op here has
// data-dependent errors, so nothing is checked on the device.
#include "backends/cuda/embedded_headers.hpp"
#include "backends/cuda/copy_codegen.hpp"
#include "backends/cuda/cublas_handles.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_runtime.hpp"
#include "ops/blas.hpp"
#include "ops/gemm.hpp"
#include "ops/matmul.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace theon::backends::cuda {
namespace {

// ---- generated sources -------------------------------------------------------------

constexpr const char* kPointerKernel = "theon_blas_batch_pointers";

// Pointer arrays for cublasGemmBatchedEx: matrix i of the (row-major) batch starts at
// a + offset_a(i), b + offset_b(i), c + i * c_step (byte offsets; broadcast dims stride 0).
KernelSource pointer_source() {
  std::string code = R"(#include "theon_device.cuh"
extern "C" __global__ void theon_blas_batch_pointers(const char* a, const char* b, char* c, int rank,
    TheonShape shape, TheonStrides sa, TheonStrides sb, long long c_step, long long count,
    const void** pa, const void** pb, void** pc) {
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
    long long rest = i, oa = 0, ob = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const long long n = shape.d[d], q = rest % n;
      oa += q * sa.s[d];
      ob += q * sb.s[d];
      rest /= n;
    }
    pa[i] = a + oa;
    pb[i] = b + ob;
    pc[i] = c + i * c_step;
  }
}
)";
  return {"blas_batch_pointers", code, {kPointerKernel}};
}

std::string epilogue_kernel_name(DType t) { return std::string("theon_gemm_epilogue_") + dtype_tag(t); }

// The shared per-element definitions (ops/scalar/nnet_ops.hpp, embedded at build time).
const std::string& nnet_ops_text() {
  static const std::string text = pasteable(detail::kNnetOpsHeader);
  return text;
}

// Gemm's general case: out(rows, cols) = act(alpha * p + beta * c), p and c read through
// strides (0 where they broadcast); p == nullptr means an empty product (k == 0), c ==
// nullptr no addend (-0 is added: x + -0 == x for every x); act 1 is relu. Computed in double
// like the CPU reference, then rounded once.
KernelSource epilogue_source(DType t) {
  const std::string name = epilogue_kernel_name(t);
  const std::string ty = cuda_type(t);
  std::string code = "#include \"theon_device.cuh\"\n" + nnet_ops_text() + "extern \"C\" __global__ void " + name + "(const " + ty + "* __restrict__ p, const " + ty +
                     "* __restrict__ c, " + ty +
                     "* __restrict__ out, long long rows, long long cols, long long p_rs, long long p_cs,\n"
                     "    long long c_rs, long long c_cs, double alpha, double beta, int act) {\n"
                     "  const long long n = rows * cols, step = (long long)gridDim.x * blockDim.x;\n"
                     "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {\n"
                     "    const long long r = i / cols, k = i - r * cols;\n"
                     "    const double prod = p ? (double)p[r * p_rs + k * p_cs] : 0.0;\n"
                     "    const double addend = c ? beta * (double)c[r * c_rs + k * c_cs] : -0.0;\n"
                     "    out[i] = (" + ty + ")theon::nnet::gemm_epilogue<double>(alpha * prod, addend, act);\n"
                     "  }\n"
                     "}\n";
  return {"gemm_epilogue_" + std::string(dtype_tag(t)), code, {name}};
}

constexpr int kIntTile = 64;    // output rows and columns per block
constexpr int kIntThreads = 16; // threads per block side (each computes 4x4 outputs)
constexpr int kMaxBatchRank = kMaxRank - 2;

std::string int_kernel_name(DType t) { return std::string("theon_imatmul_") + dtype_tag(t); }

// out[b](M, N) = A[b](M, K) . B[b](K, N) for integer dtypes, with an optional Gemm epilogue
// (out = alpha * prod, plus beta * c where c != nullptr; Dot passes alpha 1). Sums of products in uint64 wrap exactly as
// the CPU reference's; the store truncates to the element type (NumPy's wrap-around).
// Grid: x over column tiles, y over row tiles, z over the batch, each a grid-stride loop.
// The batch rank is a run-time argument: offsets are computed once per matrix, not per element.
KernelSource int_source(DType t) {
  const std::string name = int_kernel_name(t);
  std::string code = "#include \"theon_device.cuh\"\ntypedef " + std::string(cuda_type(t)) + " elem_t;\n";
  code += R"(#define TM 64
#define TN 64
#define TK 16
typedef unsigned long long u64;
extern "C" __global__ void __launch_bounds__(256) KERNEL_NAME(
    const elem_t* __restrict__ a, const elem_t* __restrict__ b, const elem_t* __restrict__ c,
    elem_t* __restrict__ out, long long M, long long N, long long K,
    long long a_rs, long long a_cs, long long b_rs, long long b_cs, long long c_rs, long long c_cs,
    long long batch, int batch_rank, TheonShape bshape, TheonStrides a_bs, TheonStrides b_bs, u64 alpha, u64 beta,
    int act) {
  __shared__ long long As[TK][TM + 1];  // (k, row): the compute loop reads a column of it
  __shared__ long long Bs[TK][TN];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const long long tiles_m = (M + TM - 1) / TM, tiles_n = (N + TN - 1) / TN;
  for (long long bi = blockIdx.z; bi < batch; bi += gridDim.z) {
    long long oa = 0, ob = 0, rest = bi;
#pragma unroll
    for (int d = THEON_MAX_RANK - 1; d >= 0; --d) {  // constant indices: the shapes stay in parameter space
      if (d >= batch_rank) continue;
      const long long n = bshape.d[d], q = rest % n;
      oa += q * a_bs.s[d];
      ob += q * b_bs.s[d];
      rest /= n;
    }
    const elem_t* A = a + oa;
    const elem_t* B = b + ob;
    elem_t* O = out + bi * M * N;
    for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y)
      for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
        const long long row0 = tm * TM, col0 = tn * TN;
        u64 acc[4][4];
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
          for (int s = 0; s < 4; ++s) acc[r][s] = 0;
        for (long long k0 = 0; k0 < K; k0 += TK) {
          // Consecutive threads take consecutive k of a row of A and consecutive columns
          // of a row of B: coalesced for row-major operands.
          for (int e = tid; e < TM * TK; e += 256) {
            const int kk = e % TK, ii = e / TK;
            const long long i = row0 + ii, p = k0 + kk;
            As[kk][ii] = (i < M && p < K) ? (long long)A[i * a_rs + p * a_cs] : 0;
          }
          for (int e = tid; e < TK * TN; e += 256) {
            const int jj = e % TN, kk = e / TN;
            const long long j = col0 + jj, p = k0 + kk;
            Bs[kk][jj] = (j < N && p < K) ? (long long)B[p * b_rs + j * b_cs] : 0;
          }
          __syncthreads();
#pragma unroll
          for (int kk = 0; kk < TK; ++kk) {
            u64 av[4], bv[4];
#pragma unroll
            for (int r = 0; r < 4; ++r) av[r] = (u64)As[kk][ty + 16 * r];
#pragma unroll
            for (int s = 0; s < 4; ++s) bv[s] = (u64)Bs[kk][tx + 16 * s];
#pragma unroll
            for (int r = 0; r < 4; ++r)
#pragma unroll
              for (int s = 0; s < 4; ++s) acc[r][s] += av[r] * bv[s];
          }
          __syncthreads();
        }
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
          for (int s = 0; s < 4; ++s) {
            const long long i = row0 + ty + 16 * r, j = col0 + tx + 16 * s;
            if (i >= M || j >= N) continue;
            u64 v = acc[r][s];
            v *= alpha;
            if (c) v += beta * (u64)(long long)c[i * c_rs + j * c_cs];
            const elem_t e = (elem_t)v;
            O[i * N + j] = act == 1 && !(e > (elem_t)0) ? (elem_t)0 : e;  // relu epilogue (Gemm)
          }
      }
  }
}
)";
  const std::string macro = "KERNEL_NAME";
  code.replace(code.find(macro), macro.size(), name);
  return {"imatmul_" + std::string(dtype_tag(t)), code, {name}};
}

// ---- helpers -------------------------------------------------------------------------

bool is_blas_float(DType t) { return t == DType::Float32 || t == DType::Float64; }

bool is_int_dtype(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64 || t == DType::UInt8;
}

struct Ctx {
  const graph::Apply& node;
  int device;
  cudaStream_t stream;
  const KernelOptions& options;  // the plan's
  std::string what() const { return node.describe(); }
};

// Operand copies use the shape family's strided copy (copy_codegen.hpp): it collapses and
// widens the layout and transposes through shared memory, so a column-major operand is
// gathered with coalesced reads and writes.
Array contiguous(const Ctx& ctx, const Array& x) { return contiguous_on_device(x, ctx.device, ctx.stream, ctx.what()); }

void zero_fill(const Ctx& ctx, Array& out) {
  if (out.size() > 0) THEON_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, out.nbytes(), ctx.stream));
}

// A row-major (rows, cols) view with element strides (rs, cs) as an operand of the
// column-major product C^T = B^T . A^T: op(X) must be the view's transpose. Row-major memory
// (cs == 1) is the column-major transpose already (op N, ld rs); column-major memory
// (rs == 1) needs op T (ld cs). ok=false when neither holds (copy first). Strides of
// size-1 dims do not matter; ld is at least the stored matrix's row count, as cuBLAS wants.
struct CuOperand {
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 1;
  bool ok = false;
};

CuOperand as_cublas(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  const bool row1 = rows <= 1, col1 = cols <= 1;
  const int64_t r = std::max<int64_t>(rows, 1), c = std::max<int64_t>(cols, 1);
  if ((col1 || cs == 1) && (row1 || rs >= c)) return {CUBLAS_OP_N, row1 ? c : rs, true};
  if ((row1 || rs == 1) && (col1 || cs >= r)) return {CUBLAS_OP_T, col1 ? r : cs, true};
  return {};
}

// Batch dims with each operand's element strides (0 where it broadcasts); the contiguous
// output is implied. Size-1 dims dropped, chained neighbours merged.
struct BatchLayout {
  Shape shape;
  Strides sa, sb;
  int64_t count() const { return shape_size(shape); }
};

Strides batch_strides_of(const Array& x, const Shape& batch) {
  Strides s(batch.size(), 0);
  const int bx = std::max(x.ndim() - 2, 0), lead = static_cast<int>(batch.size()) - bx;
  for (int d = 0; d < bx; ++d) s[lead + d] = x.shape()[d] == 1 ? 0 : x.strides()[d];
  return s;
}

BatchLayout collapse_batch(const Shape& batch, const Strides& sa, const Strides& sb) {
  BatchLayout out;
  for (size_t d = 0; d < batch.size(); ++d) {
    if (batch[d] == 1) continue;
    if (!out.shape.empty() && out.sa.back() == sa[d] * batch[d] && out.sb.back() == sb[d] * batch[d]) {
      out.shape.back() *= batch[d];
      out.sa.back() = sa[d];
      out.sb.back() = sb[d];
      continue;
    }
    out.shape.push_back(batch[d]);
    out.sa.push_back(sa[d]);
    out.sb.push_back(sb[d]);
  }
  return out;
}

BatchLayout matmul_batch(const ops::MatmulShape& g, const Array& a, const Array& b) {
  return collapse_batch(g.batch, batch_strides_of(a, g.batch), batch_strides_of(b, g.batch));
}

// A strided batch needs one dim with non-negative strides (a reversed batch view gives a
// negative one); anything else goes through device-written pointer arrays.
bool needs_pointer_batch(const BatchLayout& b) {
  return b.shape.size() > 1 || (b.shape.size() == 1 && (b.sa[0] < 0 || b.sb[0] < 0));
}

void cublas_check(cublasStatus_t s, const Ctx& ctx, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw DeviceError(ctx.what() + ": " + call + " failed: " + cublasGetStatusString(s));
}

// One row-major GEMM (or a batch of them): out = alpha * a . b + beta * out, out contiguous
// (m, n) matrices m * n elements apart. `batch` empty: one product; one dim: a strided
// batch; more (or a negative batch stride): a pointer-array batch.
struct GemmArgs {
  DType dtype = DType::Float32;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  CuOperand oa;
  const void* b = nullptr;
  CuOperand ob;
  void* out = nullptr;
  double alpha = 1, beta = 0;
  BatchLayout batch = {};
};

void cublas_gemm(const Ctx& ctx, const GemmArgs& g) {
  cublasHandle_t h = cublas_handle(ctx.device, ctx.stream);
  const cudaDataType_t type = cublas_data_type(g.dtype);
  const cublasComputeType_t compute = gemm_compute_type(g.dtype, ctx.options.allow_tf32);
  // Host scalars in the compute type's precision (read by cuBLAS during the call).
  const float af = static_cast<float>(g.alpha), bf = static_cast<float>(g.beta);
  const double ad = g.alpha, bd = g.beta;
  const void* alpha = g.dtype == DType::Float64 ? static_cast<const void*>(&ad) : &af;
  const void* beta = g.dtype == DType::Float64 ? static_cast<const void*>(&bd) : &bf;
  const int64_t ldc = std::max<int64_t>(g.n, 1);
  // C^T (n, m) = op(B) (n, k) . op(A) (k, m)
  if (g.batch.shape.empty()) {
    cublas_check(cublasGemmEx_64(h, g.ob.op, g.oa.op, g.n, g.m, g.k, alpha, g.b, type, g.ob.ld, g.a, type, g.oa.ld,
                                 beta, g.out, type, ldc, compute, CUBLAS_GEMM_DEFAULT),
                 ctx, "cublasGemmEx");
    return;
  }
  if (!g.batch.shape.empty() && !needs_pointer_batch(g.batch)) {
    cublas_check(cublasGemmStridedBatchedEx_64(h, g.ob.op, g.oa.op, g.n, g.m, g.k, alpha, g.b, type, g.ob.ld,
                                               g.batch.sb[0], g.a, type, g.oa.ld, g.batch.sa[0], beta, g.out, type,
                                               ldc, g.m * g.n, g.batch.shape[0], compute, CUBLAS_GEMM_DEFAULT),
                 ctx, "cublasGemmStridedBatchedEx");
    return;
  }
  // Batch dims that do not collapse: pointer arrays written on the device (no host sync;
  // the temporary is stream-ordered, so releasing it after the call is safe).
  const int64_t count = g.batch.count();
  const int rank = static_cast<int>(g.batch.shape.size());
  Array ptrs = device_empty({3, count}, DType::Int64, ctx.device, ctx.stream);
  const size_t item = itemsize(g.dtype);
  DeviceShape shape;
  DeviceStrides sa, sb;
  for (int d = 0; d < rank; ++d) {
    shape.d[d] = g.batch.shape[d];
    sa.s[d] = g.batch.sa[d] * static_cast<int64_t>(item);
    sb.s[d] = g.batch.sb[d] * static_cast<int64_t>(item);
  }
  cudaKernel_t k = cached_kernel("blas_pointers", ctx.device, ctx.options.fmad, pointer_source, kPointerKernel);
  const void* pa = g.a;
  const void* pb = g.b;
  void* pc = g.out;
  long long c_step = g.m * g.n * static_cast<int64_t>(item), n = count;
  void** base = static_cast<void**>(ptrs.data());
  void* arr_a = base;
  void* arr_b = base + count;
  void* arr_c = base + 2 * count;
  int r = rank;
  void* args[] = {&pa, &pb, &pc, &r, &shape, &sa, &sb, &c_step, &n, &arr_a, &arr_b, &arr_c};
  constexpr unsigned kBlock = 256;
  launch(k, dim3(grid_for(count, kBlock, ctx.device)), dim3(kBlock), args, 0, ctx.stream, ctx.what());
  cublas_check(cublasGemmBatchedEx_64(h, g.ob.op, g.oa.op, g.n, g.m, g.k, alpha, static_cast<const void* const*>(arr_b),
                                      type, g.ob.ld, static_cast<const void* const*>(arr_a), type, g.oa.ld, beta,
                                      static_cast<void* const*>(arr_c), type, ldc, count, compute, CUBLAS_GEMM_DEFAULT),
               ctx, "cublasGemmBatchedEx");
}

// Matrix strides of Dot's operands as (m, k) and (k, n) views (vectors: the size-1 dim 0).
ops::MatrixStrides dot_lhs(const Array& a) { return {a.ndim() == 2 ? a.strides()[0] : 0, a.strides().back()}; }
ops::MatrixStrides dot_rhs(const Array& b) { return {b.strides()[0], b.ndim() == 2 ? b.strides()[1] : 0}; }

struct IntLaunch {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;  // Gemm's addend, or none
  void* out = nullptr;
  int64_t M = 0, N = 0, K = 0;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0, c_rs = 0, c_cs = 0;
  BatchLayout batch = {};
  uint64_t alpha = 1, beta = 0;
  int act = 0;  // Gemm's relu epilogue: 1
};

void int_matmul(const Ctx& ctx, DType t, const IntLaunch& p) {
  const int rank = static_cast<int>(p.batch.shape.size());
  if (rank > kMaxBatchRank)
    throw NotImplementedError(ctx.what() + ": " + std::to_string(rank) + " batch dims (at most " +
                              std::to_string(kMaxBatchRank) + " on CUDA)");
  cudaKernel_t k = cached_kernel("blas_int|" + std::string(dtype_tag(t)), ctx.device, ctx.options.fmad,
                                 [&] { return int_source(t); }, int_kernel_name(t));
  DeviceShape bshape;
  DeviceStrides sa, sb;
  for (int d = 0; d < rank; ++d) {
    bshape.d[d] = p.batch.shape[d];
    sa.s[d] = p.batch.sa[d];
    sb.s[d] = p.batch.sb[d];
  }
  const void* a = p.a;
  const void* b = p.b;
  const void* c = p.c;
  void* out = p.out;
  long long M = p.M, N = p.N, K = p.K, a_rs = p.a_rs, a_cs = p.a_cs, b_rs = p.b_rs, b_cs = p.b_cs, c_rs = p.c_rs,
            c_cs = p.c_cs, batch = p.batch.count();
  int batch_rank = rank;
  unsigned long long alpha = p.alpha, beta = p.beta;
  int act = p.act;
  void* args[] = {&a, &b, &c, &out, &M, &N, &K, &a_rs, &a_cs, &b_rs, &b_cs, &c_rs, &c_cs, &batch, &batch_rank, &bshape, &sa, &sb,
                  &alpha, &beta, &act};
  const int64_t tiles_m = (p.M + kIntTile - 1) / kIntTile, tiles_n = (p.N + kIntTile - 1) / kIntTile;
  // Every tile its own block up to the grid limits (the loops stride past them).
  dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles_n, 1 << 20)), static_cast<unsigned>(std::min<int64_t>(tiles_m, 65535)),
            static_cast<unsigned>(std::min<int64_t>(batch, 65535)));
  launch(k, grid, dim3(kIntThreads, kIntThreads), args, 0, ctx.stream, ctx.what());
}

Support dtype_support(const graph::Apply& node) {
  for (const auto& v : node.inputs()) {
    const DType t = v->type.dtype;
    if (!is_blas_float(t) && !is_int_dtype(t))
      return {false, "no CUDA matrix product for dtype " + std::string(dtype_name(t))};
    if (v->type.ndim() > kMaxRank)
      return {false, "operand of rank " + std::to_string(v->type.ndim()) + " (CUDA kernels handle up to " +
                         std::to_string(kMaxRank) + ")"};
  }
  const DType t = node.inputs().back()->type.dtype;  // b: every operand shares its dtype
  return {true, is_blas_float(t) ? "cublas" : "nvrtc tiled integer matmul"};
}

void add_unique(std::vector<KernelSource>& out, KernelSource s) {
  for (auto& x : out)
    if (x.name == s.name) return;
  out.push_back(std::move(s));
}

Array contiguous_placeholder(const Array& x) { return Array(nullptr, x.dtype(), x.shape(), contiguous_strides(x.shape())); }

// The copy kernels an operand needs when cuBLAS cannot read its matrices in place.
void add_operand_copy(std::vector<KernelSource>& out, const Array& x, bool ok) {
  if (ok || x.is_contiguous()) return;
  for (auto& s : copy_sources(x, contiguous_placeholder(x))) add_unique(out, std::move(s));
}

// ---- Dot -----------------------------------------------------------------------------

class DotKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cublas/nvrtc"; }
  Support supports(const graph::Apply& node) const override { return dtype_support(node); }

  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    const Array &a = inputs[0], &b = inputs[1];
    const DType t = a.dtype();
    std::vector<KernelSource> out;
    if (!is_blas_float(t)) {
      out.push_back(int_source(t));
      return out;
    }
    const int64_t m = a.ndim() == 2 ? a.shape()[0] : 1, k = a.shape().back(), n = b.ndim() == 2 ? b.shape()[1] : 1;
    const auto sa = dot_lhs(a), sb = dot_rhs(b);
    add_operand_copy(out, a, as_cublas(m, k, sa.rows, sa.cols).ok);
    add_operand_copy(out, b, as_cublas(k, n, sb.rows, sb.cols).ok);
    return out;
  }

  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    Array a = inputs[0], b = inputs[1];
    Array& out = outputs[0];
    const int dev = device_of(inputs, outputs);
    const Ctx ctx{node, dev, stream_for(where, dev), options_of(plan)};
    const ops::GemmShape g = ops::dot_geometry(node, a.shape(), b.shape());
    if (out.size() == 0) return;
    if (g.k == 0) return zero_fill(ctx, out);
    const DType t = a.dtype();
    if (!is_blas_float(t)) {
      const auto sa = dot_lhs(a), sb = dot_rhs(b);
      return int_matmul(ctx, t, {.a = a.data(), .b = b.data(), .out = out.data(), .M = g.m, .N = g.n, .K = g.k,
                                 .a_rs = sa.rows, .a_cs = sa.cols, .b_rs = sb.rows, .b_cs = sb.cols});
    }
    CuOperand oa = as_cublas(g.m, g.k, dot_lhs(a).rows, dot_lhs(a).cols);
    if (!oa.ok) {
      a = contiguous(ctx, a);
      oa = as_cublas(g.m, g.k, dot_lhs(a).rows, dot_lhs(a).cols);
    }
    CuOperand ob = as_cublas(g.k, g.n, dot_rhs(b).rows, dot_rhs(b).cols);
    if (!ob.ok) {
      b = contiguous(ctx, b);
      ob = as_cublas(g.k, g.n, dot_rhs(b).rows, dot_rhs(b).cols);
    }
    cublas_gemm(ctx, {.dtype = t, .m = g.m, .n = g.n, .k = g.k, .a = a.data(), .oa = oa, .b = b.data(), .ob = ob,
                      .out = out.data()});
  }
};

// ---- BatchedMatmul -------------------------------------------------------------------

class BatchedMatmulKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cublas/nvrtc"; }
  Support supports(const graph::Apply& node) const override { return dtype_support(node); }

  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    const Array &a = inputs[0], &b = inputs[1];
    const DType t = a.dtype();
    const ops::MatmulShape g = ops::matmul_shape(node, a.shape(), b.shape());
    std::vector<KernelSource> out;
    if (!is_blas_float(t)) {
      out.push_back(int_source(t));
      return out;
    }
    const auto sa = ops::lhs_matrix_strides(a), sb = ops::rhs_matrix_strides(b);
    const bool a_ok = as_cublas(g.m, g.k, sa.rows, sa.cols).ok, b_ok = as_cublas(g.k, g.n, sb.rows, sb.cols).ok;
    add_operand_copy(out, a, a_ok);
    add_operand_copy(out, b, b_ok);
    // The batch layout after any copies (a copy is contiguous).
    const Array ca = a_ok ? a : contiguous_placeholder(a);
    const Array cb = b_ok ? b : contiguous_placeholder(b);
    if (needs_pointer_batch(matmul_batch(g, ca, cb))) out.push_back(pointer_source());
    return out;
  }

  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    Array a = inputs[0], b = inputs[1];
    Array& out = outputs[0];
    const int dev = device_of(inputs, outputs);
    const Ctx ctx{node, dev, stream_for(where, dev), options_of(plan)};
    const ops::MatmulShape g = ops::matmul_shape(node, a.shape(), b.shape());
    if (out.size() == 0) return;
    if (g.k == 0) return zero_fill(ctx, out);
    const DType t = a.dtype();
    if (!is_blas_float(t)) {
      const auto sa = ops::lhs_matrix_strides(a), sb = ops::rhs_matrix_strides(b);
      return int_matmul(ctx, t, {.a = a.data(), .b = b.data(), .out = out.data(), .M = g.m, .N = g.n, .K = g.k,
                                 .a_rs = sa.rows, .a_cs = sa.cols, .b_rs = sb.rows, .b_cs = sb.cols,
                                 .batch = matmul_batch(g, a, b)});
    }
    CuOperand oa = as_cublas(g.m, g.k, ops::lhs_matrix_strides(a).rows, ops::lhs_matrix_strides(a).cols);
    if (!oa.ok) {
      a = contiguous(ctx, a);
      oa = as_cublas(g.m, g.k, ops::lhs_matrix_strides(a).rows, ops::lhs_matrix_strides(a).cols);
    }
    CuOperand ob = as_cublas(g.k, g.n, ops::rhs_matrix_strides(b).rows, ops::rhs_matrix_strides(b).cols);
    if (!ob.ok) {
      b = contiguous(ctx, b);
      ob = as_cublas(g.k, g.n, ops::rhs_matrix_strides(b).rows, ops::rhs_matrix_strides(b).cols);
    }
    cublas_gemm(ctx, {.dtype = t, .m = g.m, .n = g.n, .k = g.k, .a = a.data(), .oa = oa, .b = b.data(), .ob = ob,
                      .out = out.data(), .batch = matmul_batch(g, a, b)});
  }
};

// ---- cuBLASLt ------------------------------------------------------------------------
//
// What goes to cuBLASLt (float32 / float64; float16 products never reach these kernels):
// - a row bias, act none, beta 1: CUBLASLT_EPILOGUE_BIAS. Orientation: the product is issued
//   as C^T = B^T . A^T (above), so Theon's row-major (m, n) output is Lt's column-major D with
//   n rows and m columns, and Lt's bias (one packed element per row of D, broadcast over D's
//   columns) is one element per column of Theon's output: exactly a row bias c[j]. It must be
//   packed (stride 1) and of length n: a strided or length-1 bias takes the copy path.
// What does not, and why:
// - relu: Lt's RELU / RELU_BIAS are documented as x := max(x, 0) with nothing said of NaN
//   (cublasLt.h, the cuBLAS docs), and a max that drops NaN is the usual GPU fmax; Theon's
//   relu keeps NaN (nnet::gemm_epilogue), so relu stays in the NVRTC epilogue kernel.
// - a col bias (one element per Theon row = per column of D): Lt's bias runs along D's rows
//   only; the NVRTC epilogue (relu) or the broadcast copy + cuBLAS beta (no relu) handle it.
// - beta != 1 with a bias: Lt adds its bias unscaled (D = alpha * A.B + beta * C + bias).
// - a matrix addend: the broadcast copy + cuBLAS with beta, as before (a broadcast c has no
//   Lt layout: ld must cover the rows).
// - alpha 0 or k == 0: as for cuBLAS, the product may be skipped (NaN * 0 lost): NVRTC.
// When Lt's heuristic offers no algorithm (e.g. a bias pointer it cannot align), the copy +
// cuBLAS path runs instead. Reproducibility: one stream, one workspace (the cuBLAS handle's)
// and the heuristic's first algorithm for the same problem and alignments each call.
// Only the simulated device (tests/gpu_sim/cuda/sim_cublaslt.cpp) has run these calls: no
// real GPU was available when they were written.

void lt_check(cublasStatus_t s, const Ctx& ctx, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw DeviceError(ctx.what() + ": " + call + " failed: " + cublasLtGetStatusString(s));
}

// Owners of the per-call descriptors (destroyed whatever happens).
struct LtObjects {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtObjects() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

// out(m, n) = alpha * a.b + bias[j] (g.beta unused: 1 by the caller's condition) as one
// cublasLtMatmul; false when Lt offers no algorithm (nothing was enqueued).
bool cublaslt_bias_gemm(const Ctx& ctx, const GemmArgs& g, const void* bias) {
  const CublasLt lt = cublaslt_handle(ctx.device, ctx.stream);
  const cudaDataType_t type = cublas_data_type(g.dtype);
  const cudaDataType_t scale = g.dtype == DType::Float64 ? CUDA_R_64F : CUDA_R_32F;
  LtObjects o;
  lt_check(cublasLtMatmulDescCreate(&o.desc, gemm_compute_type(g.dtype, ctx.options.allow_tf32), scale), ctx,
           "cublasLtMatmulDescCreate");
  // Lt's A is Theon's b and its B Theon's a (C^T = B^T . A^T), each with its op.
  const int32_t ta = g.ob.op, tb = g.oa.op;
  const uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  const int32_t bias_type = type;
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t size) {
    lt_check(cublasLtMatmulDescSetAttribute(o.desc, attr, v, size), ctx, "cublasLtMatmulDescSetAttribute");
  };
  set(CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  set(CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
  set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type);
  // Stored (pre-op) shapes, column-major: op N stores op(X) itself, op T its transpose.
  const uint64_t m = g.m, n = g.n, k = g.k;
  const bool a_n = g.ob.op == CUBLAS_OP_N, b_n = g.oa.op == CUBLAS_OP_N;
  lt_check(cublasLtMatrixLayoutCreate(&o.a, type, a_n ? n : k, a_n ? k : n, g.ob.ld), ctx, "cublasLtMatrixLayoutCreate");
  lt_check(cublasLtMatrixLayoutCreate(&o.b, type, b_n ? k : m, b_n ? m : k, g.oa.ld), ctx, "cublasLtMatrixLayoutCreate");
  lt_check(cublasLtMatrixLayoutCreate(&o.d, type, n, m, std::max<int64_t>(g.n, 1)), ctx, "cublasLtMatrixLayoutCreate");
  lt_check(cublasLtMatmulPreferenceCreate(&o.pref), ctx, "cublasLtMatmulPreferenceCreate");
  const uint64_t ws = lt.workspace_bytes;
  lt_check(cublasLtMatmulPreferenceSetAttribute(o.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws), ctx,
           "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t found{};
  int count = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt.handle, o.desc, o.a, o.b, o.d, o.d, o.pref, 1, &found, &count);
  if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && count == 0)) return false;
  lt_check(hs, ctx, "cublasLtMatmulAlgoGetHeuristic");
  // Host scalars of the scale type; beta 0: D (the output) is not read as C.
  const float af = static_cast<float>(g.alpha), zf = 0;
  const double ad = g.alpha, zd = 0;
  const bool dbl = g.dtype == DType::Float64;
  const void* alpha = dbl ? static_cast<const void*>(&ad) : &af;
  const void* beta = dbl ? static_cast<const void*>(&zd) : &zf;
  lt_check(cublasLtMatmul(lt.handle, o.desc, alpha, g.b, o.a, g.a, o.b, beta, g.out, o.d, g.out, o.d, &found.algo,
                          lt.workspace, lt.workspace_bytes, ctx.stream),
           ctx, "cublasLtMatmul");
  return true;
}

// ---- Gemm ----------------------------------------------------------------------------

// c's strides over the output (0 where it broadcasts).
std::pair<int64_t, int64_t> addend_strides(const Array& c) {
  return {c.shape()[0] == 1 ? 0 : c.strides()[0], c.shape()[1] == 1 ? 0 : c.strides()[1]};
}

// The fast path: c broadcast into the output, then one cuBLAS call scales it by beta and
// adds alpha * a.b (no addend: cuBLAS writes alpha * a.b with beta 0, reading no output).
// Only when the product fills the output, k > 0, and alpha, beta are non-zero (cuBLAS skips
// an operand scaled by 0, losing NaN * 0 = NaN), without relu.
// The cuBLASLt bias path (see cuBLASLt above): a packed row bias c of length n, beta 1, no relu.
bool gemm_lt_bias(const ops::Gemm& op, const Array& c_in, const Shape& out_shape, int64_t m, int64_t n, int64_t k) {
  return op.epilogue().addend == ops::GemmAddend::Row && op.epilogue().act == ops::GemmAct::None &&
         op.beta() == 1 && op.alpha() != 0 && k > 0 && out_shape == Shape{m, n} && c_in.shape()[0] == n &&
         (n == 1 || c_in.strides()[0] == 1);
}

bool gemm_fast_path(const ops::Gemm& op, const Shape& out_shape, int64_t m, int64_t n, int64_t k) {
  const bool has_c = op.epilogue().addend != ops::GemmAddend::None;
  return out_shape == Shape{m, n} && k > 0 && op.alpha() != 0 && (!has_c || op.beta() != 0) &&
         op.epilogue().act == ops::GemmAct::None;
}

class GemmKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cublas/nvrtc"; }
  Support supports(const graph::Apply& node) const override { return dtype_support(node); }

  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    const auto& op = static_cast<const ops::Gemm&>(node.op());
    const bool has_c = op.epilogue().addend != ops::GemmAddend::None;
    const ops::GemmOperands in = ops::gemm_operands(op.epilogue().addend, inputs);
    const Array &c = in.c, &a = in.a, &b = in.b;
    const DType t = a.dtype();
    std::vector<KernelSource> out;
    if (!is_blas_float(t)) {
      out.push_back(int_source(t));
      return out;
    }
    const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
    const Shape out_shape = ops::gemm_output_shape(node, has_c ? inputs[0].shape() : Shape{}, a.shape(), b.shape());
    add_operand_copy(out, a, as_cublas(m, k, a.strides()[0], a.strides()[1]).ok);
    add_operand_copy(out, b, as_cublas(k, n, b.strides()[0], b.strides()[1]).ok);
    // (The cuBLASLt bias path needs no kernel; the broadcast copy stays listed for the case
    // its heuristic offers no algorithm and the fast path runs.)
    if (gemm_fast_path(op, out_shape, m, n, k)) {
      if (has_c)
        for (auto& s : copy_sources(c, Array(nullptr, t, out_shape, contiguous_strides(out_shape))))
          add_unique(out, std::move(s));
    } else {
      out.push_back(epilogue_source(t));
    }
    return out;
  }

  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = static_cast<const ops::Gemm&>(node.op());
    const bool has_c = op.epilogue().addend != ops::GemmAddend::None;
    const ops::GemmOperands in = ops::gemm_operands(op.epilogue().addend, inputs);
    const Array c = in.c;  // undefined without an addend
    Array a = in.a, b = in.b;
    Array& out = outputs[0];
    const int dev = device_of(inputs, outputs);
    const Ctx ctx{node, dev, stream_for(where, dev), options_of(plan)};
    const Shape out_shape = ops::gemm_output_shape(node, has_c ? inputs[0].shape() : Shape{}, a.shape(), b.shape());
    const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
    const int act = op.epilogue().act == ops::GemmAct::Relu ? 1 : 0;
    if (out.size() == 0) return;
    const auto [c_rs, c_cs] = has_c ? addend_strides(c) : std::pair<int64_t, int64_t>{0, 0};
    const DType t = a.dtype();
    if (!is_blas_float(t)) {
      // Integral alpha and beta (the specialize pass guarantees it), wrapping as uint64.
      // Rows (columns) of a size-1 product repeat over c's: stride 0.
      return int_matmul(ctx, t, {.a = a.data(), .b = b.data(), .c = has_c ? c.data() : nullptr, .out = out.data(), .M = out_shape[0],
                                 .N = out_shape[1], .K = k, .a_rs = m == 1 ? 0 : a.strides()[0],
                                 .a_cs = a.strides()[1], .b_rs = b.strides()[0], .b_cs = n == 1 ? 0 : b.strides()[1],
                                 .c_rs = c_rs, .c_cs = c_cs,
                                 .alpha = static_cast<uint64_t>(static_cast<int64_t>(op.alpha())),
                                 .beta = static_cast<uint64_t>(static_cast<int64_t>(op.beta())), .act = act});
    }
    CuOperand oa = as_cublas(m, k, a.strides()[0], a.strides()[1]);
    if (!oa.ok) {
      a = contiguous(ctx, a);
      oa = as_cublas(m, k, a.strides()[0], a.strides()[1]);
    }
    CuOperand ob = as_cublas(k, n, b.strides()[0], b.strides()[1]);
    if (!ob.ok) {
      b = contiguous(ctx, b);
      ob = as_cublas(k, n, b.strides()[0], b.strides()[1]);
    }
    if (gemm_lt_bias(op, inputs[0], out_shape, m, n, k) &&
        cublaslt_bias_gemm(ctx, {.dtype = t, .m = m, .n = n, .k = k, .a = a.data(), .oa = oa, .b = b.data(), .ob = ob,
                                 .out = out.data(), .alpha = op.alpha(), .beta = 1.0},
                           inputs[0].data()))
      return;
    if (gemm_fast_path(op, out_shape, m, n, k)) {
      if (has_c) copy_strided(c, out, dev, ctx.stream, ctx.what());  // c broadcast into the output
      return cublas_gemm(ctx, {.dtype = t, .m = m, .n = n, .k = k, .a = a.data(), .oa = oa, .b = b.data(), .ob = ob,
                               .out = out.data(), .alpha = op.alpha(), .beta = has_c ? op.beta() : 0.0});
    }
    // General case: the plain product (if any) into a temporary, then one elementwise pass.
    Array prod;
    if (k > 0 && m > 0 && n > 0) {
      prod = device_empty({m, n}, t, dev, ctx.stream);
      cublas_gemm(ctx, {.dtype = t, .m = m, .n = n, .k = k, .a = a.data(), .oa = oa, .b = b.data(), .ob = ob,
                        .out = prod.data()});
    }
    cudaKernel_t kern = cached_kernel("blas_gemm_epilogue|" + std::string(dtype_tag(t)), dev, ctx.options.fmad,
                                      [&] { return epilogue_source(t); }, epilogue_kernel_name(t));
    const void* pp = prod.defined() ? prod.data() : nullptr;
    const void* pc = has_c ? c.data() : nullptr;
    void* po = out.data();
    long long rows = out_shape[0], cols = out_shape[1], p_rs = m == 1 ? 0 : n, p_cs = n == 1 ? 0 : 1, crs = c_rs,
              ccs = c_cs;
    double alpha = op.alpha(), beta = op.beta();
    int actv = act;
    void* args[] = {&pp, &pc, &po, &rows, &cols, &p_rs, &p_cs, &crs, &ccs, &alpha, &beta, &actv};
    constexpr unsigned kBlock = 256;
    launch(kern, dim3(grid_for(out.size(), kBlock, dev)), dim3(kBlock), args, 0, ctx.stream, ctx.what());
  }
};

}  // namespace

void register_blas_kernels(CudaBackend& backend) {
  backend.register_kernel(graph::OpKind::Dot, std::make_unique<DotKernel>());
  backend.register_kernel(graph::OpKind::BatchedMatmul, std::make_unique<BatchedMatmulKernel>());
  backend.register_kernel(graph::OpKind::Gemm, std::make_unique<GemmKernel>());
}

}  // namespace theon::backends::cuda
