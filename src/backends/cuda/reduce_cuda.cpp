// Reductions on the GPU: Reduce (Sum, Prod, Max, Min, Any, All, Mean, Count), SumTo,
// ArgMax (argmax/argmin) and FusedReduce (a reduction of a fused elementwise region: the
// region's value is computed per element as it is read, never stored), all through the
// generated reduction kernels of reduce_codegen:
// the reduced axes are moved innermost as strides (no copy), each group is collapsed, and
// one kernel variant per (kind, dtypes, collapsed ranks) serves every size.
//
// Accumulators follow the CPU loop (backends/cpu/reduce_cpu.cpp): float sums, products and means in double, integer
// and bool sums/products in wrapping int64, max/min in the input type (NaN wins), any/all
// in bool; the mean multiplies by 1/count as the CPU does. SumTo accumulates floats in
// double too (the CPU adds in the element type: the GPU is at least as accurate).
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/reduce_codegen.hpp"
#include "backends/scalar_program_render.hpp"

#include "ops/argmax.hpp"
#include "ops/cumulative.hpp"
#include "ops/composite.hpp"
#include "ops/elemwise.hpp"
#include "ops/fused_reduce.hpp"
#include "ops/reduce.hpp"
#include "ops/nonzero.hpp"
#include "ops/sort.hpp"
#include "ops/sum_to.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <sstream>

namespace theon::backends::cuda {
namespace {

// The lanes of a scan or sort along `axis`: the other dims (at most 8) with their input and
// output strides, as the kernels take them, and the axis's length and strides.
struct LaneGeometry {
  struct {
    long long shape[8], in_st[8], out_st[8];
  } dims{};
  int rank = 0;
  long long lanes = 1, n = 0, sx = 0, so = 0;
};

LaneGeometry lanes_along(const Array& in, const Array& out, int axis) {
  LaneGeometry g;
  for (int d = 0; d < in.ndim(); ++d) {
    if (d == axis) continue;
    g.dims.shape[g.rank] = in.shape()[d];
    g.dims.in_st[g.rank] = in.strides()[d];
    g.dims.out_st[g.rank] = out.strides()[d];
    g.lanes *= in.shape()[d];
    ++g.rank;
  }
  g.n = in.shape()[axis], g.sx = in.strides()[axis], g.so = out.strides()[axis];
  return g;
}

// Launches a lane kernel (scan or sort: one thread per lane) whose arguments are
// (x, out, lanes, rank, dims, n, sx, so, flag).
void launch_lanes(const KernelPlan* plan, const graph::Apply& node, const Array& in, Array& out, int device,
                  cudaStream_t stream, int axis, const KernelSource& src, const char* what, int flag) {
  LaneGeometry g = lanes_along(in, out, axis);
  const void* x = in.data();
  void* o = out.data();
  cudaKernel_t k = cached_kernel(src.name, device, options_of(plan).fmad, [&] { return src; }, what);
  void* args[] = {&x, &o, &g.lanes, &g.rank, &g.dims, &g.n, &g.sx, &g.so, &flag};
  const unsigned block = 128;
  launch(k, dim3(grid_for(g.lanes, block, device)), dim3(block), args, 0, stream, node);
}

bool device_dtype(DType t) { return t != DType::Float16 && t != DType::BFloat16; }

Support check_dtypes_and_rank(const graph::Apply& node) {
  for (const auto& v : node.inputs())
    if (!device_dtype(v->type.dtype))
      return {false, std::string("no CUDA reduction for dtype ") + std::string(dtype_name(v->type.dtype))};
  for (int i = 0; i < node.num_outputs(); ++i)
    if (const DType t = node.output_raw(i)->type.dtype; !device_dtype(t))
      return {false, std::string("no CUDA reduction for dtype ") + std::string(dtype_name(t))};
  if (node.input(0)->type.ndim() > kMaxRank)
    return {false, "rank " + std::to_string(node.input(0)->type.ndim()) + " above the CUDA limit of 8"};
  return {true, "generated reduction"};
}

// RKind lists Reduce's folding kinds first, in ReduceKind's order (reduce_codegen.hpp).
static_assert(static_cast<int>(RKind::Sum) == static_cast<int>(ops::ReduceKind::Sum) &&
              static_cast<int>(RKind::Mean) == static_cast<int>(ops::ReduceKind::Mean));
RKind rkind(ops::ReduceKind k) {
  if (k == ops::ReduceKind::Count) throw InternalError("rkind: Count has no reduction kernel");
  return static_cast<RKind>(k);
}

// Count writes one number: a one-thread kernel per output dtype.
KernelSource count_source(DType out) {
  KernelSource s;
  s.name = std::string("reduce_count_") + dtype_tag(out);
  s.code = "typedef " + std::string(cuda_type(out)) +
           " TO;\nextern \"C\" __global__ void reduce_count(TO* out, long long v) { *out = (TO)v; }\n";
  s.kernels = {"reduce_count"};
  return s;
}

std::vector<bool> axes_mask(int ndim, const std::vector<int>& axes) {
  std::vector<bool> m(static_cast<size_t>(ndim), false);
  for (int a : axes) m[static_cast<size_t>(a)] = true;
  return m;
}

class ReduceKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_reduce"; }
  Support supports(const graph::Apply& node) const override { return check_dtypes_and_rank(node); }

  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    const auto& op = static_cast<const ops::Reduce&>(node.op());
    if (op.reduce_kind() == ops::ReduceKind::Count) return {count_source(node.output_raw(0)->type.dtype)};
    return {reduce_source(geometry(node, inputs[0]).spec)};
  }

  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = static_cast<const ops::Reduce&>(node.op());
    const Array& in = inputs[0];
    Array& out = outputs[0];
    const int device = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, device);
    const bool fmad = options_of(plan).fmad;
    int64_t count = 1;
    for (int a : op.axes()) count *= in.shape()[a];
    if (op.reduce_kind() == ops::ReduceKind::Count) {
      const KernelSource src = count_source(out.dtype());
      cudaKernel_t k = cached_kernel(src.name, device, fmad, [&] { return src; }, "reduce_count");
      void* p = out.data();
      long long v = count;
      void* args[] = {&p, &v};
      launch(k, dim3(1), dim3(1), args, 0, stream, node);
      return;
    }
    // As the CPU loop: mean = sum * (1 / count), NaN for an empty reduction.
    const double scale = count == 0 ? std::numeric_limits<double>::quiet_NaN() : 1.0 / static_cast<double>(count);
    run_reduce(geometry(node, in), in, out, scale, device, stream, fmad, node.describe());
  }

 private:
  static ReduceGeometry geometry(const graph::Apply& node, const Array& in) {
    const auto& op = static_cast<const ops::Reduce&>(node.op());
    return plan_reduce(rkind(op.reduce_kind()), in.dtype(), node.output_raw(0)->type.dtype, in.shape(), in.strides(),
                       axes_mask(in.ndim(), op.axes()));
  }
};

// SumTo(g, like): a sum over the dims where `like` has size 1 and g does not; the output
// keeps them as size-1 dims (contiguous, so its flat order is the kept dims' order).
class SumToKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_reduce"; }
  Support supports(const graph::Apply& node) const override { return check_dtypes_and_rank(node); }

  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {reduce_source(geometry(inputs[0], inputs[1].shape()).spec)};
  }

  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const int device = device_of(inputs, outputs);
    run_reduce(geometry(inputs[0], outputs[0].shape()), inputs[0], outputs[0], 1.0, device, stream_for(where, device),
               options_of(plan).fmad, node.describe());
  }

 private:
  static ReduceGeometry geometry(const Array& g, const Shape& like) {
    std::vector<bool> mask(static_cast<size_t>(g.ndim()));
    for (int d = 0; d < g.ndim(); ++d) mask[d] = like[d] == 1 && g.shape()[d] != 1;
    // Bools: the CPU ors them (the Sum spec with a bool output does the same).
    return plan_reduce(RKind::Sum, g.dtype(), g.dtype(), g.shape(), g.strides(), mask);
  }
};

// CumSum, CumProd: one thread per lane scans it in order with the Sum or Prod functor of
// reduce_ops.hpp (the CPU loop's accumulator and order, so results are bit-identical). The lanes' other dims go
// in as a shape with each operand's strides; one variant per (input, output) dtype pair.
// A single long lane runs on one thread: correct, not fast (a block scan is the next step).
constexpr const char* kScanKernel = R"CUDA(
struct TheonLanes { long long shape[8]; long long in_st[8]; long long out_st[8]; };
extern "C" __global__ void scan_lanes(const TI* x, TO* out, long long lanes, int rank, TheonLanes g,
                                        long long n, long long sx, long long so, int reverse) {
  for (long long lane = (long long)blockIdx.x * blockDim.x + threadIdx.x; lane < lanes;
       lane += (long long)gridDim.x * blockDim.x) {
    long long rem = lane, ox = 0, oo = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const long long i = rem % g.shape[d];
      rem /= g.shape[d];
      ox += i * g.in_st[d];
      oo += i * g.out_st[d];
    }
    A acc = TheonScanOp::init<A>();
    for (long long k = 0; k < n; ++k) {
      const long long i = reverse ? n - 1 - k : k;
      acc = TheonScanOp::combine(acc, TheonScanOp::load<A>(x[ox + i * sx], i));
      out[oo + i * so] = (TO)TheonScanOp::finish(acc, 1.0);
    }
  }
}
)CUDA";

KernelSource cumulative_source(ops::ReduceKind kind, DType in, DType out) {
  const std::string functor = kind == ops::ReduceKind::Sum ? "Sum" : "Prod";
  KernelSource s;
  s.name = "cum" + functor + "_" + dtype_tag(in) + "_" + dtype_tag(out);
  s.code = reduce_ops_text() + "typedef theon::reduce::" + functor + " TheonScanOp;\ntypedef " + cuda_type(in) +
           " TI;\ntypedef " + cuda_type(out) + " TO;\ntypedef TheonScanOp::Acc<TI> A;\n" + kScanKernel;
  s.kernels = {"scan_lanes"};
  return s;
}

class CumulativeKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_scan"; }
  Support supports(const graph::Apply& node) const override {
    Support s = check_dtypes_and_rank(node);
    if (s.ok) s.reason = "one thread per lane";
    return s;
  }
  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    const DType in = inputs[0].dtype();
    return {cumulative_source(ops::Cumulative::of(node.op())->reduce_kind(), in, ops::cumulative_dtype(in))};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const ops::Cumulative& op = *ops::Cumulative::of(node.op());
    const Array& in = inputs[0];
    Array& out = outputs[0];
    if (in.size() == 0) return;
    const int device = device_of(inputs, outputs);
    launch_lanes(plan, node, in, out, device, stream_for(where, device), op.axis(),
                 cumulative_source(op.reduce_kind(), in.dtype(), out.dtype()), "scan_lanes", op.reverse() ? 1 : 0);
  }
};

// Sort, ArgSort: one thread per lane, a stable insertion sort in the output (values for Sort,
// positions for ArgSort) with ops::sort_less's order (NaN last), so ties and NaNs land where
// the CPU's std::stable_sort puts them. Quadratic in the lane length: correct, not fast (a
// block merge sort is the next step).
constexpr const char* kSortKernel = R"CUDA(
struct TheonLanes { long long shape[8]; long long in_st[8]; long long out_st[8]; };
__device__ __forceinline__ bool theon_sort_less(T a, T b) { return a < b || (b != b && a == a); }
extern "C" __global__ void sort_lanes(const T* x, void* out_raw, long long lanes, int rank, TheonLanes g,
                                        long long n, long long sx, long long so, int indices) {
  for (long long lane = (long long)blockIdx.x * blockDim.x + threadIdx.x; lane < lanes;
       lane += (long long)gridDim.x * blockDim.x) {
    long long rem = lane, ox = 0, oo = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const long long i = rem % g.shape[d];
      rem /= g.shape[d];
      ox += i * g.in_st[d];
      oo += i * g.out_st[d];
    }
    const T* xl = x + ox;
    if (indices) {
      long long* o = (long long*)out_raw + oo;
      for (long long k = 0; k < n; ++k) {
        const long long p = k;
        const T v = xl[p * sx];
        long long j = k;
        while (j > 0 && theon_sort_less(v, xl[o[(j - 1) * so] * sx])) { o[j * so] = o[(j - 1) * so]; --j; }
        o[j * so] = p;
      }
    } else {
      T* o = (T*)out_raw + oo;
      for (long long k = 0; k < n; ++k) {
        const T v = xl[k * sx];
        long long j = k;
        while (j > 0 && theon_sort_less(v, o[(j - 1) * so])) { o[j * so] = o[(j - 1) * so]; --j; }
        o[j * so] = v;
      }
    }
  }
}
)CUDA";

KernelSource sort_source(DType in) {
  KernelSource s;
  s.name = std::string("sort_") + dtype_tag(in);
  s.code = std::string("typedef ") + cuda_type(in) + " T;\n" + kSortKernel;
  s.kernels = {"sort_lanes"};
  return s;
}

class SortKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_sort"; }
  Support supports(const graph::Apply& node) const override {
    Support s = check_dtypes_and_rank(node);
    if (s.ok) s.reason = "one thread per lane (insertion sort)";
    return s;
  }
  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {sort_source(inputs[0].dtype())};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const ops::Sort& op = *ops::Sort::of(node.op());
    const Array& in = inputs[0];
    Array& out = outputs[0];
    if (in.size() == 0) return;
    const int device = device_of(inputs, outputs);
    launch_lanes(plan, node, in, out, device, stream_for(where, device), op.axis(), sort_source(in.dtype()),
                 "sort_lanes", op.indices() ? 1 : 0);
  }
};

// FlatNonZero: the count (input 1) is read on the host (host_input: it decides the output
// length); one block of 256 threads compacts x in chunks of 256 with a shared-memory prefix
// sum, writing the positions in order.
constexpr const char* kNonZeroKernel = R"CUDA(
extern "C" __global__ void flat_nonzero(const T* x, long long n, long long sx, long long* out, long long cap) {
  __shared__ long long scan[256];
  long long base = 0;
  for (long long start = 0; start < n; start += blockDim.x) {
    const long long i = start + threadIdx.x;
    const int flag = (i < n) && (x[i * sx] != (T)0);
    scan[threadIdx.x] = flag;
    __syncthreads();
    for (unsigned off = 1; off < blockDim.x; off <<= 1) {
      const long long v = threadIdx.x >= off ? scan[threadIdx.x - off] : 0;
      __syncthreads();
      scan[threadIdx.x] += v;
      __syncthreads();
    }
    const long long pos = base + scan[threadIdx.x] - 1;
    if (flag && pos < cap) out[pos] = i;
    base += scan[blockDim.x - 1];
    __syncthreads();
  }
}
)CUDA";

KernelSource nonzero_source(DType in) {
  KernelSource s;
  s.name = std::string("flat_nonzero_") + dtype_tag(in);
  s.code = std::string("typedef ") + cuda_type(in) + " T;\n" + kNonZeroKernel;
  s.kernels = {"flat_nonzero"};
  return s;
}

class FlatNonZeroKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_nonzero"; }
  bool host_input(const graph::Apply&, int input) const override { return input == 1; }  // the count
  Support supports(const graph::Apply& node) const override {
    Support s = check_dtypes_and_rank(node);
    if (s.ok) s.reason = "one block: chunked prefix-sum compaction";
    return s;
  }
  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {nonzero_source(inputs[0].dtype())};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const Array& in = inputs[0];
    Array& out = outputs[0];
    long long cap = out.size();
    if (cap == 0) return;
    long long n = in.size(), sx = in.ndim() ? in.strides()[0] : 0;
    const void* x = in.data();
    void* o = out.data();
    const int device = device_of(inputs, outputs);
    const KernelSource src = nonzero_source(in.dtype());
    cudaKernel_t k = cached_kernel(src.name, device, options_of(plan).fmad, [&] { return src; }, "flat_nonzero");
    void* args[] = {&x, &n, &sx, &o, &cap};
    launch(k, dim3(1), dim3(256), args, 0, stream_for(where, device), node);
  }
};

// ArgMax: a (value, index) reduction over one axis or the whole tensor in row-major order.
class ArgMaxKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_reduce"; }
  Support supports(const graph::Apply& node) const override { return check_dtypes_and_rank(node); }

  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {reduce_source(geometry(node, inputs[0]).spec)};
  }

  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const int device = device_of(inputs, outputs);
    run_reduce(geometry(node, inputs[0]), inputs[0], outputs[0], 1.0, device, stream_for(where, device),
               options_of(plan).fmad, node.describe());
  }

 private:
  static ReduceGeometry geometry(const graph::Apply& node, const Array& in) {
    const auto& op = static_cast<const ops::ArgMax&>(node.op());
    std::vector<bool> mask(static_cast<size_t>(in.ndim()), !op.axis().has_value());
    if (op.axis()) mask[static_cast<size_t>(*op.axis())] = true;
    return plan_reduce(op.is_max() ? RKind::ArgMax : RKind::ArgMin, in.dtype(), DType::Int64, in.shape(),
                       in.strides(), mask);
  }
};

// ---- FusedReduce: a reduction of an elementwise region, computed where it is read ----


// The region's value at one element, from the scalar functors the CPU uses (scalar_ops.hpp),
// as the elementwise kernels compute it; only the values the output needs are computed.
RegionCode region_code(const ops::Composite& c) {
  const ScalarProgram p = ScalarProgram::of(c);
  const int ni = p.num_inputs();
  const int out = c.outputs()[0];
  const std::vector<bool> need = p.needed({0});
  std::ostringstream key, code;
  code << "__device__ __forceinline__ TI theon_region_value(const TheonRegionArgs& a, const long long* off) {\n"
       << "  using namespace theon::scalar;\n  (void)a;\n  (void)off;\n";
  code << render_values(
      p, need, Dialect::Cuda,
      [&](int i) {
        const std::string t = cuda_type(p.input_dtypes[i]);
        return "((const " + t + "*)a.p[" + std::to_string(i) + "])[off[" + std::to_string(i) + "]]";
      },
      "  ");
  for (int i = 0; i < ni; ++i) key << dtype_tag(p.input_dtypes[i]) << ",";
  key << "|";
  for (const auto& in : p.instrs) {
    key << static_cast<int>(in.op) << ":" << dtype_tag(in.dtype) << "(";
    for (int a : in.args) key << a << ",";
    key << ")";
  }
  key << "|" << out;
  code << "  return (TI)" << value_name(out) << ";\n}\n";
  // Kernel names carry a hash of the program (the full program is in the source).
  uint64_t h = 14695981039346656037ull;
  for (unsigned char ch : key.str()) h = (h ^ ch) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return {hex, "// region: " + c.expression(out) + "\n" + code.str(), ni};
}

class FusedReduceKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_fused_reduce"; }
  Support supports(const graph::Apply& node) const override {
    Support s = check_dtypes_and_rank(node);
    if (!s.ok) return s;
    const auto& op = static_cast<const ops::FusedReduce&>(node.op());
    if (node.inputs().empty()) return {false, "a fused region without inputs"};
    if (static_cast<int>(node.inputs().size()) > kMaxRegionInputs)
      return {false, "a fused region of " + std::to_string(node.inputs().size()) + " inputs (the CUDA kernel takes " +
                         std::to_string(kMaxRegionInputs) + ")"};
    for (const auto& in : op.region().program())
      if (!device_dtype(in.dtype)) return {false, "no CUDA reduction for dtype " + std::string(dtype_name(in.dtype))};
    return {true, "generated fused reduction"};
  }

  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    const auto& op = static_cast<const ops::FusedReduce&>(node.op());
    const RegionCode region = region_code(op.region());
    return {reduce_source(geometry(node, inputs).spec, &region)};
  }

  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = static_cast<const ops::FusedReduce&>(node.op());
    const ReduceGeometry g = geometry(node, inputs);
    const Shape full = ops::broadcast_shapes(node, inputs);
    int64_t count = 1;
    for (int a : op.axes()) count *= full[a];
    const double scale = count == 0 ? std::numeric_limits<double>::quiet_NaN() : 1.0 / static_cast<double>(count);
    const RegionCode region = region_code(op.region());
    const int device = device_of(inputs, outputs);
    run_reduce(g, inputs, outputs[0], scale, device, stream_for(where, device), options_of(plan).fmad, node.describe(),
               &region);
  }

 private:
  // The region's broadcast shape, each input seen with broadcast strides in it.
  static ReduceGeometry geometry(const graph::Apply& node, const std::vector<Array>& inputs) {
    const auto& op = static_cast<const ops::FusedReduce&>(node.op());
    const Shape full = ops::broadcast_shapes(node, inputs);
    std::vector<Strides> st;
    for (const Array& a : inputs) st.push_back(detail::broadcast_strides(a, full));
    std::vector<bool> mask(full.size(), false);
    for (int a : op.axes()) mask[static_cast<size_t>(a)] = true;
    const DType value = op.region().value_dtype(op.region().outputs()[0]);
    return plan_reduce_operands(rkind(op.reduce_kind()), value, op.out_dtype(), full, st, mask);
  }
};

}  // namespace

void register_reduce_kernels(CudaBackend& b) {
  b.register_kernel(graph::OpKind::FusedReduce, std::make_unique<FusedReduceKernel>());
  for (const graph::OpKindInfo& info : graph::op_kinds)
    if (ops::is_reduce(info.kind)) b.register_kernel(info.kind, std::make_unique<ReduceKernel>());
  b.register_kernel(graph::OpKind::SumTo, std::make_unique<SumToKernel>());
  b.register_kernel(graph::OpKind::ArgMax, std::make_unique<ArgMaxKernel>());
  b.register_kernel(graph::OpKind::CumSum, std::make_unique<CumulativeKernel>());
  b.register_kernel(graph::OpKind::CumProd, std::make_unique<CumulativeKernel>());
  b.register_kernel(graph::OpKind::Sort, std::make_unique<SortKernel>());
  b.register_kernel(graph::OpKind::ArgSort, std::make_unique<SortKernel>());
  b.register_kernel(graph::OpKind::FlatNonZero, std::make_unique<FlatNonZeroKernel>());
}

}  // namespace theon::backends::cuda
