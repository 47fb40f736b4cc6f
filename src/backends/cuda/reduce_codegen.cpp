#include "backends/cuda/embedded_headers.hpp"
#include "backends/cuda/reduce_codegen.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_runtime.hpp"

#include "ops/scalar/reduce_ops.hpp"
#include "util/dispatch.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace theon::backends::cuda {

int64_t DimGroup::size() const { return shape_size(shape); }

namespace {

// Drops size-1 dims and merges dim d into d+1 where every operand steps over d exactly as
// over a whole run of d+1 (so the pair walks like one dim, in the same row-major order).
DimGroup collapse(const Shape& shape, const std::vector<Strides>& strides) {
  DimGroup g;
  g.strides.resize(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !g.shape.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k)
      if (g.strides[k].back() != strides[k][d] * shape[d]) merge = false;
    if (merge) {
      g.shape.back() *= shape[d];
      for (size_t k = 0; k < strides.size(); ++k) g.strides[k].back() = strides[k][d];
    } else {
      g.shape.push_back(shape[d]);
      for (size_t k = 0; k < strides.size(); ++k) g.strides[k].push_back(strides[k][d]);
    }
  }
  return g;
}

const char* ctype(DType t) { return cuda_type(t); }

// Each kind's semantics are its functor in reduce_ops.hpp (shared with the CPU loop): a
// kernel names the functor, and the host sizes the accumulator from the same definition.
template <class Op> size_t acc_bytes_of(DType t) {
  return detail::visit_dtype(t, []<class T>() { return sizeof(typename Op::template Acc<T>); });
}
struct RKindRow {
  RKind kind;
  const char* tag;      // in kernel names
  const char* functor;  // theon::reduce::<functor>
  size_t (*acc_bytes)(DType in);
};
constexpr RKindRow kRKindRows[] = {
    {RKind::Sum, "sum", "Sum", &acc_bytes_of<reduce::Sum>},
    {RKind::Prod, "prod", "Prod", &acc_bytes_of<reduce::Prod>},
    {RKind::Max, "max", "Max", &acc_bytes_of<reduce::Max>},
    {RKind::Min, "min", "Min", &acc_bytes_of<reduce::Min>},
    {RKind::Any, "any", "Any", &acc_bytes_of<reduce::Any>},
    {RKind::All, "all", "All", &acc_bytes_of<reduce::All>},
    {RKind::Mean, "mean", "Mean", &acc_bytes_of<reduce::Mean>},
    {RKind::ArgMax, "argmax", "ArgMax", &acc_bytes_of<reduce::ArgMax>},
    {RKind::ArgMin, "argmin", "ArgMin", &acc_bytes_of<reduce::ArgMin>},
};

const RKindRow& row(RKind k) {
  const RKindRow& r = kRKindRows[static_cast<size_t>(k)];
  if (r.kind != k) throw InternalError("reduce_codegen: kRKindRows is not in RKind order");
  return r;
}

// ROp adapts the kind's functor to the kernels below: A is its accumulator for TI; loading
// an accumulator (pass 2 reads partial results) is the identity. A (value, index) pair
// (argmax/argmin) shuffles field by field.
constexpr const char* kROp = R"CUDA(template <class X>
__device__ __forceinline__ theon::reduce::ArgPair<X> theon_shfl_down(theon::reduce::ArgPair<X> p, int d) {
  p.v = theon_shfl_down(p.v, d);
  p.i = theon_shfl_down(p.i, d);
  return p;
}
typedef TheonReduceOp::Acc<TI> A;
struct ROp {
  static __device__ __forceinline__ A init() { return TheonReduceOp::init<A>(); }
  template <class In>
  static __device__ __forceinline__ A load(In v, long long r) {
    if constexpr (std::is_same_v<In, A>) return v;
    else return TheonReduceOp::load<A>(v, r);
  }
  static __device__ __forceinline__ A combine(A a, A b) { return TheonReduceOp::combine(a, b); }
  static __device__ __forceinline__ TO finish(A a, double scale) { return (TO)TheonReduceOp::finish(a, scale); }
};
)CUDA";

}  // namespace

const std::string& reduce_ops_text() {
  static const std::string text = pasteable(detail::kReduceOpsHeader);
  return text;
}

namespace {

std::string rop_source(const ReduceSpec& s) {
  return reduce_ops_text() + "typedef theon::reduce::" + row(s.kind).functor + " TheonReduceOp;\n" + kROp;
}

// The kernels every variant shares, over the ROp/TI/TO/A/KR/RR defined above them.
constexpr const char* kReduceKernels = R"CUDA(
// Tree over the TPO threads of one output: a warp shuffle tree, then (TPO > 32) one over
// the warps' partial results through shared memory. The result is valid in thread 0.
template <int TPO>
__device__ __forceinline__ A theon_tree(A v, A* sm) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v = ROp::combine(v, theon_shfl_down(v, d));
  if constexpr (TPO > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();  // sm is reused by the next output
    if (lane == 0) sm[warp] = v;
    __syncthreads();
    if (warp == 0) {
      v = lane < TPO / 32 ? sm[lane] : ROp::init();
#pragma unroll
      for (int d = 16; d > 0; d >>= 1) v = ROp::combine(v, theon_shfl_down(v, d));
    }
  }
  return v;
}

// Where the reduced values come from: Fetch::row(o) locates output o's elements and
// Fetch::load(row, r) gives its r-th (row-major) reduced value as an accumulator. TheonFetch1
// reads one strided operand; a fused region's fetch (FusedReduce) evaluates its program.
template <class In, int K, int R>
struct TheonFetch1 {
  const In* p;
  TheonShape ks;
  TheonStrides kst;
  TheonShape rs;
  TheonStrides rst;
  __device__ __forceinline__ const In* row(long long o) const { return p + theon_roff<K>(o, ks, kst); }
  __device__ __forceinline__ A load(const In* base, long long r) const {
    return ROp::load(base[theon_roff<R>(r, rs, rst)], r);
  }
};

// Inner reduction: TPO threads (a warp or the whole 256-thread block) per (output,
// segment) unit; thread t combines elements t, t + TPO, ... of its segment, then the tree.
// Partial accumulators (segments > 1) are stored at unit = output * n_seg + segment.
template <int TPO, class Fetch>
__device__ __forceinline__ void theon_inner(const Fetch& f, TO* __restrict__ out, A* __restrict__ partial,
                                            long long n_out, long long n_red, long long seg_len, long long n_seg,
                                            double scale) {
  __shared__ A sm[32];
  constexpr int groups = 256 / TPO;
  const int t = TPO == 32 ? (threadIdx.x & 31) : threadIdx.x;
  const int group = TPO == 32 ? (threadIdx.x >> 5) : 0;
  const long long units = n_out * n_seg;
  for (long long u = (long long)blockIdx.x * groups + group; u < units; u += (long long)gridDim.x * groups) {
    const long long o = u / n_seg, seg = u - o * n_seg;
    const long long r0 = seg * seg_len;
    const long long r1 = r0 + seg_len < n_red ? r0 + seg_len : n_red;
    const auto row = f.row(o);
    A acc = ROp::init();
#pragma unroll 4
    for (long long r = r0 + t; r < r1; r += TPO) acc = ROp::combine(acc, f.load(row, r));
    acc = theon_tree<TPO>(acc, sm);
    if (t == 0) {
      if (partial) partial[u] = acc;
      else out[o] = ROp::finish(acc, scale);
    }
  }
}

// Outer reduction: the reduced elements of an output are far apart but neighbouring
// outputs are neighbours in memory, so threadIdx.x walks outputs (coalesced) and each
// thread walks its output's elements; blockDim.y threads split that walk (y, y + by, ...)
// and are combined in y order. Partials are stored at segment * n_out + output.
template <class Fetch>
__device__ __forceinline__ void theon_outer(const Fetch& f, TO* __restrict__ out, A* __restrict__ partial,
                                            long long n_out, long long n_red, long long seg_len, double scale) {
  extern __shared__ __align__(16) unsigned char theon_smem[];
  A* sm = reinterpret_cast<A*>(theon_smem);
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  const long long seg = blockIdx.y;
  const long long r0 = seg * seg_len;
  const long long r1 = r0 + seg_len < n_red ? r0 + seg_len : n_red;
  for (long long tile = blockIdx.x; tile * bx < n_out; tile += gridDim.x) {
    const long long o = tile * bx + tx;
    A acc = ROp::init();
    if (o < n_out) {
      const auto row = f.row(o);
#pragma unroll 4
      for (long long r = r0 + ty; r < r1; r += by) acc = ROp::combine(acc, f.load(row, r));
    }
    if (by > 1) {
      sm[ty * bx + tx] = acc;
      __syncthreads();
      if (ty == 0)
        for (int y = 1; y < by; ++y) acc = ROp::combine(acc, sm[y * bx + tx]);
      __syncthreads();
    }
    if (ty == 0 && o < n_out) {
      if (partial) partial[seg * n_out + o] = acc;
      else out[o] = ROp::finish(acc, scale);
    }
  }
}

#define THEON_REDUCE_PARAMS                                                                                    \
  TO *__restrict__ out, A *__restrict__ partial, long long n_out, long long n_red, long long seg_len,          \
      long long n_seg, TheonShape ks, TheonStrides kst, TheonShape rs, TheonStrides rst, double scale
#define THEON_FETCH(In, K, R) TheonFetch1<In, K, R>{in, ks, kst, rs, rst}

// Pass 1 (or the only pass) over the input.
extern "C" __global__ void __launch_bounds__(256) reduce_inner_warp(const TI* __restrict__ in, THEON_REDUCE_PARAMS) {
  theon_inner<32>(THEON_FETCH(TI, KR, RR), out, partial, n_out, n_red, seg_len, n_seg, scale);
}
extern "C" __global__ void __launch_bounds__(256) reduce_inner_block(const TI* __restrict__ in, THEON_REDUCE_PARAMS) {
  theon_inner<256>(THEON_FETCH(TI, KR, RR), out, partial, n_out, n_red, seg_len, n_seg, scale);
}
extern "C" __global__ void __launch_bounds__(256) reduce_outer(const TI* __restrict__ in, THEON_REDUCE_PARAMS) {
  (void)n_seg;
  theon_outer(THEON_FETCH(TI, KR, RR), out, partial, n_out, n_red, seg_len, scale);
}
// Pass 2: the partial accumulators as a contiguous (n_out, n_seg) or (n_seg, n_out) matrix.
extern "C" __global__ void __launch_bounds__(256) reduce_inner_warp_acc(const A* __restrict__ in, THEON_REDUCE_PARAMS) {
  theon_inner<32>(THEON_FETCH(A, 1, 1), out, partial, n_out, n_red, seg_len, n_seg, scale);
}
extern "C" __global__ void __launch_bounds__(256) reduce_inner_block_acc(const A* __restrict__ in, THEON_REDUCE_PARAMS) {
  theon_inner<256>(THEON_FETCH(A, 1, 1), out, partial, n_out, n_red, seg_len, n_seg, scale);
}
extern "C" __global__ void __launch_bounds__(256) reduce_outer_acc(const A* __restrict__ in, THEON_REDUCE_PARAMS) {
  (void)n_seg;
  theon_outer(THEON_FETCH(A, 1, 1), out, partial, n_out, n_red, seg_len, scale);
}
)CUDA";

// A fused region's operands (FusedReduce): pointers and per-operand strides of the kept and
// reduced groups; the generated theon_region_value computes the reduced value from them.
constexpr const char* kRegionKernels = R"CUDA(
struct TheonRow {
  long long off[THEON_NIN];
};
struct TheonFetchRegion {
  TheonRegionArgs a;
  __device__ __forceinline__ TheonRow row(long long o) const {
    TheonRow w;
#pragma unroll
    for (int i = 0; i < THEON_NIN; ++i) w.off[i] = theon_roff<KR>(o, a.ks, a.kst[i]);
    return w;
  }
  __device__ __forceinline__ A load(const TheonRow& w, long long r) const {
    long long off[THEON_NIN];
#pragma unroll
    for (int i = 0; i < THEON_NIN; ++i) off[i] = w.off[i] + theon_roff<RR>(r, a.rs, a.rst[i]);
    return ROp::load(theon_region_value(a, off), r);
  }
};
#define THEON_REGION_PARAMS                                                                                     \
  TheonRegionArgs a, TO *__restrict__ out, A *__restrict__ partial, long long n_out, long long n_red,           \
      long long seg_len, long long n_seg, double scale
extern "C" __global__ void __launch_bounds__(256) reduce_region_inner_warp(THEON_REGION_PARAMS) {
  theon_inner<32>(TheonFetchRegion{a}, out, partial, n_out, n_red, seg_len, n_seg, scale);
}
extern "C" __global__ void __launch_bounds__(256) reduce_region_inner_block(THEON_REGION_PARAMS) {
  theon_inner<256>(TheonFetchRegion{a}, out, partial, n_out, n_red, seg_len, n_seg, scale);
}
extern "C" __global__ void __launch_bounds__(256) reduce_region_outer(THEON_REGION_PARAMS) {
  (void)n_seg;
  theon_outer(TheonFetchRegion{a}, out, partial, n_out, n_red, seg_len, scale);
}
)CUDA";

constexpr const char* kHelpers = R"CUDA(#include "theon_device.cuh"
#include <limits>
#include <type_traits>
// Offset of flat index i in a collapsed group of rank R (no division for ranks 0 and 1).
template <int R>
__device__ __forceinline__ long long theon_roff(long long i, const TheonShape& s, const TheonStrides& st) {
  if constexpr (R == 0) {
    (void)i; (void)s; (void)st;
    return 0;
  } else if constexpr (R == 1) {
    (void)s;
    return i * st.s[0];
  } else {
    return theon_offset<R>(i, s, st);
  }
}
// Warp shuffles for every accumulator type (types narrower than int go through int).
__device__ __forceinline__ float theon_shfl_down(float v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ double theon_shfl_down(double v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ int theon_shfl_down(int v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ long long theon_shfl_down(long long v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
template <class X>
__device__ __forceinline__ X theon_shfl_down(X v, int d) { return (X)__shfl_down_sync(0xffffffffu, (int)v, d); }
__device__ __forceinline__ float theon_shfl_idx(float v, int l) { return __shfl_sync(0xffffffffu, v, l); }
__device__ __forceinline__ double theon_shfl_idx(double v, int l) { return __shfl_sync(0xffffffffu, v, l); }
)CUDA";

}  // namespace

const char* reduce_device_helpers() { return kHelpers; }

LanePlan plan_lanes(const Shape& shape, const std::vector<Strides>& operand_strides, const std::vector<bool>& reduced) {
  Shape ks, rs;
  std::vector<Strides> kst(operand_strides.size()), rst(operand_strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    (reduced[d] ? rs : ks).push_back(shape[d]);
    for (size_t k = 0; k < operand_strides.size(); ++k) (reduced[d] ? rst : kst)[k].push_back(operand_strides[k][d]);
  }
  return {collapse(ks, kst), collapse(rs, rst)};
}

std::string ReduceSpec::name() const {
  return "reduce_" + std::string(row(kind).tag) + "_" + dtype_tag(in) + "_" + dtype_tag(out) + "_k" + std::to_string(kept_rank) +
         "_r" + std::to_string(reduced_rank);
}

size_t accumulator_bytes(const ReduceSpec& s) { return row(s.kind).acc_bytes(s.in); }

KernelSource reduce_source(const ReduceSpec& s, const RegionCode* region) {
  KernelSource src;
  src.name = s.name();
  std::string code = kHelpers;
  code += "typedef " + std::string(ctype(s.in)) + " TI;\n";
  code += "typedef " + std::string(ctype(s.out)) + " TO;\n";
  code += "#define KR " + std::to_string(s.kept_rank) + "\n#define RR " + std::to_string(s.reduced_rank) + "\n";
  code += rop_source(s);
  code += kReduceKernels;
  src.kernels = {"reduce_inner_warp",     "reduce_inner_block",     "reduce_outer",
                 "reduce_inner_warp_acc", "reduce_inner_block_acc", "reduce_outer_acc"};
  if (region) {
    src.name += "_region" + std::to_string(region->n_inputs) + "_" + region->key;
    code += "#include \"scalar_ops.hpp\"\n#define THEON_NIN " + std::to_string(region->n_inputs) + "\n";
    code += "struct TheonRegionArgs {\n  const void* p[" + std::to_string(kMaxRegionInputs) +
            "];\n  TheonShape ks;\n  TheonStrides kst[" + std::to_string(kMaxRegionInputs) +
            "];\n  TheonShape rs;\n  TheonStrides rst[" + std::to_string(kMaxRegionInputs) + "];\n};\n";
    code += region->code;
    code += kRegionKernels;
    src.kernels.insert(src.kernels.end(), {"reduce_region_inner_warp", "reduce_region_inner_block", "reduce_region_outer"});
  }
  src.code = std::move(code);
  return src;
}

ReduceGeometry plan_reduce_operands(RKind kind, DType in_dtype, DType out_dtype, const Shape& shape,
                                    const std::vector<Strides>& operand_strides, const std::vector<bool>& reduced) {
  ReduceGeometry g;
  LanePlan p = plan_lanes(shape, operand_strides, reduced);
  g.kept = std::move(p.kept);
  g.reduced = std::move(p.reduced);
  g.n_out = g.kept.size();
  g.n_red = g.reduced.size();
  if (g.n_red == 0) {  // an empty reduction: every output is the identity, nothing is read
    g.reduced.shape.clear();
    g.reduced.strides.assign(operand_strides.size(), Strides{});
  }
  if (g.kept.rank() > kMaxRank || g.reduced.rank() > kMaxRank)
    throw NotImplementedError("CUDA reduction of rank " + std::to_string(shape.size()) + " (at most 8 dims)");
  g.spec = {kind, in_dtype, out_dtype, g.kept.rank(), g.reduced.rank()};
  return g;
}

ReduceGeometry plan_reduce(RKind kind, DType in_dtype, DType out_dtype, const Shape& shape, const Strides& strides,
                           const std::vector<bool>& reduced) {
  return plan_reduce_operands(kind, in_dtype, out_dtype, shape, std::vector<Strides>{strides}, reduced);
}

ReduceLaunch choose_launch(const ReduceGeometry& g) {
  ReduceLaunch l;
  const int kr = g.kept.rank(), rr = g.reduced.rank();
  const bool kept_unit = kr >= 1 && g.kept.strides[0][kr - 1] == 1;
  const bool red_unit = rr >= 1 && g.reduced.strides[0][rr - 1] == 1;
  // Outer when neighbouring outputs are neighbours in memory and the reduced elements are
  // not, or when there are too few reduced elements to give a warp work (a thread then
  // walks a short row; its neighbours' rows are next to it, so L1 serves the warp).
  if (kr >= 1 && ((kept_unit && !red_unit) || g.n_red < 32)) {
    l.strategy = ReduceLaunch::Outer;
    l.block_y = g.n_red >= 64 ? 8 : 1;
    const int64_t bx = 256 / l.block_y;
    const int64_t tiles = (g.n_out + bx - 1) / bx;
    // Few output tiles and long columns: split the columns too (two passes).
    if (tiles < 256 && g.n_red > 4096) {
      l.segments = std::clamp<int64_t>(std::min((g.n_red + 2047) / 2048, (512 + tiles - 1) / tiles), 1, 1024);
    }
  } else {
    l.strategy = g.n_red <= 256 ? ReduceLaunch::InnerWarp : ReduceLaunch::InnerBlock;
    if (g.n_out < 512 && g.n_red > 16384) {
      l.segments = std::clamp<int64_t>(std::min((g.n_red + 8191) / 8192, (1024 + g.n_out - 1) / g.n_out), 1, 1024);
      l.strategy = ReduceLaunch::InnerBlock;
    }
  }
  l.segment_len = l.segments > 1 ? (g.n_red + l.segments - 1) / l.segments : std::max<int64_t>(g.n_red, 1);
  if (l.segments > 1) l.segments = (g.n_red + l.segment_len - 1) / l.segment_len;  // no empty segments
  return l;
}

DeviceShape device_shape(const DimGroup& g) {
  DeviceShape s;
  for (int d = 0; d < g.rank(); ++d) s.d[d] = g.shape[d];
  return s;
}

DeviceStrides device_strides(const DimGroup& g, int operand) {
  DeviceStrides s;
  for (int d = 0; d < g.rank(); ++d) s.s[d] = g.strides[operand][d];
  return s;
}

namespace {

// Arguments of the single-operand kernels, in their order (THEON_REDUCE_PARAMS).
struct Args {
  const void* in;
  void* out;
  void* partial;
  long long n_out, n_red, seg_len, n_seg;
  DeviceShape ks;
  DeviceStrides kst;
  DeviceShape rs;
  DeviceStrides rst;
  double scale;
  void* ptrs[12];
  void** pack() {
    void* p[12] = {&in, &out, &partial, &n_out, &n_red, &seg_len, &n_seg, &ks, &kst, &rs, &rst, &scale};
    std::copy(p, p + 12, ptrs);
    return ptrs;
  }
};

// TheonRegionArgs (kRegionKernels), byte for byte.
struct RegionArgs {
  const void* p[kMaxRegionInputs];
  DeviceShape ks;
  DeviceStrides kst[kMaxRegionInputs];
  DeviceShape rs;
  DeviceStrides rst[kMaxRegionInputs];
};

struct LaunchShape {
  dim3 grid, block;
  size_t shared = 0;
};

LaunchShape launch_shape(ReduceLaunch::Strategy strategy, int block_y, long long n_out, long long n_seg, int device,
                         size_t acc_bytes) {
  const long long units = n_out * n_seg;
  LaunchShape l;
  switch (strategy) {
    case ReduceLaunch::InnerWarp:
      l.block = dim3(256);
      l.grid = dim3(grid_for(units * 32, 256, device));  // 8 outputs per block
      break;
    case ReduceLaunch::InnerBlock:
      l.block = dim3(256);
      l.grid = dim3(grid_for(units * 256, 256, device));
      break;
    case ReduceLaunch::Outer: {
      const unsigned bx = 256 / block_y;
      l.block = dim3(bx, block_y);
      l.grid = dim3(grid_for(n_out, bx, device), static_cast<unsigned>(n_seg));
      l.shared = block_y > 1 ? acc_bytes * 256 : 0;
      break;
    }
  }
  return l;
}

void launch_one(const KernelSource& src, const std::string& kernel, ReduceLaunch::Strategy strategy, int block_y,
                Args& a, int device, cudaStream_t stream, bool fmad, const std::string& what, size_t acc_bytes) {
  cudaKernel_t k = cached_kernel(src.name, device, fmad, [&] { return src; }, kernel);
  const LaunchShape l = launch_shape(strategy, block_y, a.n_out, a.n_seg, device, acc_bytes);
  launch(k, l.grid, l.block, a.pack(), l.shared, stream, what);
}

}  // namespace

void run_reduce(const ReduceGeometry& g, const std::vector<Array>& inputs, Array& out, double scale, int device,
                cudaStream_t stream, bool fmad, const std::string& what, const RegionCode* region) {
  if (g.n_out == 0) return;
  const KernelSource src = reduce_source(g.spec, region);
  const ReduceLaunch l = choose_launch(g);
  const size_t acc = accumulator_bytes(g.spec);
  std::shared_ptr<Buffer> partial;  // pass 1 -> pass 2 (segments > 1)
  if (l.segments > 1)
    partial = CudaRuntime::instance().allocate_on(Device::cuda(device), static_cast<size_t>(g.n_out * l.segments) * acc,
                                                  stream);
  void* part = partial ? partial->data() : nullptr;
  const char* names[] = {"reduce_inner_warp", "reduce_inner_block", "reduce_outer"};
  if (!region) {
    Args a{};
    a.in = inputs[0].data();
    a.out = out.data();
    a.partial = part;
    a.n_out = g.n_out;
    a.n_red = g.n_red;
    a.seg_len = l.segment_len;
    a.n_seg = l.segments;
    a.ks = device_shape(g.kept);
    a.kst = device_strides(g.kept, 0);
    a.rs = device_shape(g.reduced);
    a.rst = device_strides(g.reduced, 0);
    a.scale = scale;
    launch_one(src, names[l.strategy], l.strategy, l.block_y, a, device, stream, fmad, what, acc);
  } else {
    if (region->n_inputs != static_cast<int>(inputs.size()) || region->n_inputs > kMaxRegionInputs)
      throw InternalError(what + ": region operands do not match its inputs");
    RegionArgs ra{};
    for (int i = 0; i < region->n_inputs; ++i) {
      ra.p[i] = inputs[i].data();
      ra.kst[i] = device_strides(g.kept, i);
      ra.rst[i] = device_strides(g.reduced, i);
    }
    ra.ks = device_shape(g.kept);
    ra.rs = device_shape(g.reduced);
    void* o = out.data();
    long long n_out = g.n_out, n_red = g.n_red, seg_len = l.segment_len, n_seg = l.segments;
    double sc = scale;
    void* args[] = {&ra, &o, &part, &n_out, &n_red, &seg_len, &n_seg, &sc};
    const std::string kernel = std::string("reduce_region_") + (names[l.strategy] + 7);
    cudaKernel_t k = cached_kernel(src.name, device, fmad, [&] { return src; }, kernel);
    const LaunchShape ls = launch_shape(l.strategy, l.block_y, g.n_out, l.segments, device, acc);
    launch(k, ls.grid, ls.block, args, ls.shared, stream, what);
  }
  if (l.segments == 1) return;

  // Pass 2 reduces each output's partial accumulators.
  Args b{};
  b.in = part;
  b.out = out.data();
  b.partial = nullptr;
  b.n_out = g.n_out;
  b.n_red = l.segments;
  b.seg_len = l.segments;
  b.n_seg = 1;
  b.ks.d[0] = g.n_out;
  b.rs.d[0] = l.segments;
  b.scale = scale;
  if (l.strategy == ReduceLaunch::Outer) {  // partials are (segments, n_out)
    b.kst.s[0] = 1;
    b.rst.s[0] = g.n_out;
    launch_one(src, "reduce_outer_acc", ReduceLaunch::Outer, 8, b, device, stream, fmad, what, acc);
  } else {  // (n_out, segments)
    b.kst.s[0] = l.segments;
    b.rst.s[0] = 1;
    const bool warp = l.segments <= 256;
    launch_one(src, warp ? "reduce_inner_warp_acc" : "reduce_inner_block_acc",
               warp ? ReduceLaunch::InnerWarp : ReduceLaunch::InnerBlock, 1, b, device, stream, fmad, what, acc);
  }
  // `partial` goes back to the caching allocator now: its next user is ordered after pass 2
  // on the same stream.
}

void run_reduce(const ReduceGeometry& g, const Array& in, Array& out, double scale, int device, cudaStream_t stream,
                bool fmad, const std::string& what) {
  run_reduce(g, std::vector<Array>{in}, out, scale, device, stream, fmad, what, nullptr);
}

}  // namespace theon::backends::cuda
