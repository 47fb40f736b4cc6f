#include "backends/cuda/copy_codegen.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_kernel.hpp"
#include "backends/cuda/cuda_runtime.hpp"
#include "util/strided.hpp"

#include <theon/device.hpp>
#include <theon/error.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace theon::backends::cuda {

namespace {

constexpr unsigned kBlock = 256;
// Copies and fills move bytes (an add at most): no a*b+c for fmad to contract, so their
// kernels compile without it whatever the options say (KernelSource::fmad_applies).
constexpr bool kNoFmad = false;
// Rows at least this wide go through cudaMemcpy2DAsync (the copy engine path); narrower
// rows are better served by the kernel, whose threads span rows.
constexpr int64_t kMin2DRowBytes = 128;

void check_call(cudaError_t e, const char* call, const std::string& what) {
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw DeviceError(what + ": " + call + " failed: " + cudaGetErrorString(e));
  }
}

// The address the layout planner aligns against: the real pointer, or for placeholders
// (no buffer: sources() for the CI sweep) the offset from a 256-byte aligned base.
uintptr_t address_of(const Array& a) {
  if (a.buffer()) return reinterpret_cast<uintptr_t>(a.data());
  return static_cast<uintptr_t>(a.offset()) * itemsize(a.dtype());
}

int64_t span_of(const Shape& shape, const Strides& st) {
  int64_t s = 0;
  for (size_t d = 0; d < shape.size(); ++d) s += (shape[d] > 0 ? shape[d] - 1 : 0) * std::llabs(st[d]);
  return s;
}

// A copy's layout after collapsing and widening: shape and strides count `unit`-byte elements.
struct Layout {
  Shape shape;
  Strides dst, src;
  int unit = 1;
  int64_t size() const { return shape_size(shape); }
  int rank() const { return static_cast<int>(shape.size()); }
  bool dst_contiguous() const { return dst == contiguous_strides(shape); }
  bool wide_index() const { return !fits_int32(size(), std::max(span_of(shape, dst), span_of(shape, src))); }
};

void check_broadcast(const Array& src, const Array& dst, const std::string& what) {
  bool ok = src.ndim() <= dst.ndim();
  for (int d = 0; ok && d < src.ndim(); ++d) {
    const int64_t n = src.shape()[d];
    ok = n == 1 || n == dst.shape()[dst.ndim() - src.ndim() + d];
  }
  if (!ok)
    throw InternalError(what + ": cannot copy an array of shape " + shape_str(src.shape()) + " into shape " +
                        shape_str(dst.shape()));
}

Layout plan(const Array& src, const Array& dst, bool widen) {
  Layout L;
  L.shape = dst.shape();
  std::vector<Strides> st = {dst.strides(), detail::broadcast_strides(src, L.shape)};
  detail::collapse_dims(L.shape, st);
  L.dst = std::move(st[0]);
  L.src = std::move(st[1]);
  L.unit = static_cast<int>(itemsize(dst.dtype()));
  if (L.shape.size() > static_cast<size_t>(kMaxRank))
    throw NotImplementedError("strided copy of rank " + std::to_string(L.shape.size()) +
                              " after collapsing (the CUDA kernels take rank <= 8)");
  if (L.size() == 1) {  // one element: a plain contiguous run, whatever the strides
    L.dst = {1};
    L.src = {1};
  }
  if (!widen || L.size() == 0 || L.dst.back() != 1 || L.src.back() != 1) return L;
  // Move the contiguous inner run in wider units when sizes, strides and both base
  // addresses allow it: 16-byte accesses where possible (coalesced, fewer instructions).
  const uintptr_t a = address_of(dst) | address_of(src);
  for (int w : {16, 8, 4, 2}) {
    if (w <= L.unit || w % L.unit) continue;
    bool ok = (L.shape.back() * L.unit) % w == 0 && a % static_cast<uintptr_t>(w) == 0;
    for (int d = 0; ok && d + 1 < L.rank(); ++d) ok = (L.dst[d] * L.unit) % w == 0 && (L.src[d] * L.unit) % w == 0;
    if (!ok) continue;
    const int f = w / L.unit;
    L.shape.back() /= f;
    for (int d = 0; d + 1 < L.rank(); ++d) L.dst[d] /= f, L.src[d] /= f;
    L.unit = w;
    break;
  }
  return L;
}

enum class CopyPath { Empty, Memcpy, Memcpy2D, Transpose, Kernel };

CopyPath copy_path(const Layout& L) {
  if (L.size() == 0) return CopyPath::Empty;
  const int r = L.rank();
  if (r == 1 && L.dst[0] == 1 && L.src[0] == 1) return CopyPath::Memcpy;
  if (r == 2 && L.dst[1] == 1 && L.src[1] == 1) {
    const int64_t width = L.shape[1] * L.unit, dp = L.dst[0] * L.unit, sp = L.src[0] * L.unit;
    if (width >= kMin2DRowBytes && dp >= width && sp >= width && dp < (int64_t{1} << 31) && sp < (int64_t{1} << 31))
      return CopyPath::Memcpy2D;
  }
  // A (batched) transpose: the destination's inner dim is contiguous, the source is
  // contiguous along the dim before it. Through a shared-memory tile, both sides coalesce.
  if ((r == 2 || r == 3) && L.dst[r - 1] == 1 && L.src[r - 2] == 1 && L.src[r - 1] != 1 && L.unit <= 8)
    return CopyPath::Transpose;
  return CopyPath::Kernel;
}

std::string transpose_name(int unit, bool wide) {
  return "theon_transpose_u" + std::to_string(unit) + (wide ? "_i64" : "_i32");
}

KernelSource transpose_source(int unit, bool wide) {
  const std::string name = transpose_name(unit, wide);
  std::string c = "// Generated by Theon (copy_codegen.cpp): batched tiled transpose through shared memory.\n";
  c += std::string("typedef ") + unit_type(unit) + " T;\n";
  c += std::string("typedef ") + (wide ? "long long" : "int") + " I;\n";
  // dst[b, r, c] (strides db, d0, 1) = src[b, r, c] (strides sb, 1, s1); blocks of 32x8
  // threads move 32x32 tiles: loads run along r (contiguous in src), stores along c.
  c += "extern \"C\" __global__ void __launch_bounds__(256) " + name +
       "(T* __restrict__ dst, const T* __restrict__ src, long long rows_, long long cols_, long long batch_,\n"
       "    long long sb_, long long s1_, long long db_, long long d0_) {\n"
       "  __shared__ T tile[32][33];  // +1 column: no bank conflicts on the transposed read\n"
       "  const I rows = (I)rows_, cols = (I)cols_, batch = (I)batch_, sb = (I)sb_, s1 = (I)s1_, db = (I)db_, d0 = (I)d0_;\n"
       "  const int tx = threadIdx.x, ty = threadIdx.y;\n"
       "  for (I b = blockIdx.z; b < batch; b += gridDim.z)\n"
       "    for (I r0 = (I)blockIdx.y * 32; r0 < rows; r0 += (I)gridDim.y * 32)\n"
       "      for (I c0 = (I)blockIdx.x * 32; c0 < cols; c0 += (I)gridDim.x * 32) {\n"
       "        const T* s = src + b * sb;\n"
       "        T* d = dst + b * db;\n"
       "#pragma unroll\n"
       "        for (int k = 0; k < 32; k += 8) {\n"
       "          const I r = r0 + tx, c = c0 + ty + k;\n"
       "          if (r < rows && c < cols) tile[ty + k][tx] = s[r + c * s1];\n"
       "        }\n"
       "        __syncthreads();\n"
       "#pragma unroll\n"
       "        for (int k = 0; k < 32; k += 8) {\n"
       "          const I r = r0 + ty + k, c = c0 + tx;\n"
       "          if (r < rows && c < cols) d[r * d0 + c] = tile[tx][ty + k];\n"
       "        }\n"
       "        __syncthreads();\n"
       "      }\n"
       "}\n";
  return {name, c, {name}, /*fmad_applies=*/false};
}

void launch_transpose(const Layout& L, void* dst, const void* src, int device, cudaStream_t stream,
                      const std::string& what) {
  const bool batched = L.rank() == 3;
  long long batch = batched ? L.shape[0] : 1, rows = L.shape[L.rank() - 2], cols = L.shape[L.rank() - 1];
  long long sb = batched ? L.src[0] : 0, s1 = L.src.back(), db = batched ? L.dst[0] : 0, d0 = L.dst[L.rank() - 2];
  const bool wide = L.wide_index();
  const std::string name = transpose_name(L.unit, wide);
  cudaKernel_t k = cached_kernel(name, device, kNoFmad, [&] { return transpose_source(L.unit, wide); }, name);
  // One block per tile (the loops cover what the grid limits leave over).
  const dim3 grid(static_cast<unsigned>(std::min<long long>((cols + 31) / 32, 1 << 20)),
                  static_cast<unsigned>(std::min<long long>((rows + 31) / 32, 65535)),
                  static_cast<unsigned>(std::min<long long>(batch, 65535)));
  void* args[] = {&dst, &src, &rows, &cols, &batch, &sb, &s1, &db, &d0};
  launch(k, grid, dim3(32, 8), args, 0, stream, what);
}

std::string kernel_name(bool add, DType dtype, int unit, int rank, bool dst_contiguous, bool wide) {
  std::string n = add ? std::string("theon_add_") + dtype_tag(dtype) : "theon_copy_u" + std::to_string(unit);
  return n + "_r" + std::to_string(rank) + (dst_contiguous ? "c" : "s") + (wide ? "_i64" : "_i32");
}

void launch_strided(const Layout& L, bool add, DType dtype, void* dst, const void* src, int device,
                    cudaStream_t stream, const std::string& what) {
  const int rank = L.rank();
  const bool contig = L.dst_contiguous(), wide = L.wide_index();
  const std::string name = kernel_name(add, dtype, L.unit, rank, contig, wide);
  cudaKernel_t k = cached_kernel(
      name, device, kNoFmad, [&] { return strided_source(add, dtype, L.unit, rank, contig, wide); }, name);
  DeviceShape shape;
  DeviceStrides dst_st, src_st;
  for (int d = 0; d < rank; ++d) shape.d[d] = L.shape[d], dst_st.s[d] = L.dst[d], src_st.s[d] = L.src[d];
  long long n = L.size();
  void* args[] = {&dst, &src, &shape, &dst_st, &src_st, &n};
  launch(k, dim3(grid_for(n, kBlock, device)), dim3(kBlock), args, 0, stream, what);
}

}  // namespace

bool fits_int32(int64_t n, int64_t span) {
  // Headroom for the grid-stride increment past the end (i + step must not overflow).
  constexpr int64_t limit = int64_t{1} << 30;
  return n < limit && span < limit;
}

const char* unit_type(int bytes) {
  switch (bytes) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    case 8: return "unsigned long long";
    case 16: return "uint4";
    default: break;
  }
  throw InternalError("unit_type: no " + std::to_string(bytes) + "-byte unit");
}

KernelSource strided_source(bool add, DType dtype, int unit, int rank, bool dst_contiguous, bool wide) {
  const std::string name = kernel_name(add, dtype, unit, rank, dst_contiguous, wide);
  const std::string r = std::to_string(rank);
  std::string c = "// Generated by Theon (copy_codegen.cpp): ";
  c += add ? "dst += src" : "dst = src";
  c += ", strided, rank " + r + ".\n#include \"theon_device.cuh\"\n";
  if (add) c += "#include \"scalar_ops.hpp\"\n";
  c += std::string("typedef ") + (add ? cuda_type(dtype) : unit_type(unit)) + " T;\n";
  c += std::string("typedef ") + (wide ? "long long" : "int") + " I;\n";
  c += "extern \"C\" __global__ void " + name +
       "(T* __restrict__ dst, const T* __restrict__ src, TheonShape shape, TheonStrides dst_st,\n"
       "    TheonStrides src_st, long long n) {\n"
       "  I shp[" + r + "], ss[" + r + "], ds[" + r + "];\n"
       "#pragma unroll\n"
       "  for (int d = 0; d < " + r + "; ++d) {\n"
       "    shp[d] = (I)shape.d[d]; ss[d] = (I)src_st.s[d]; ds[d] = (I)dst_st.s[d];\n"
       "  }\n"
       "  (void)ds;\n"
       "  const I total = (I)n, step = (I)gridDim.x * (I)blockDim.x;\n"
       "  for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < total; i += step) {\n"
       "    I rest = i, so = 0;\n";
  if (!dst_contiguous) c += "    I dof = 0;\n";
  // Row-major unravel, innermost first; dim 0 needs no division.
  c += "#pragma unroll\n"
       "    for (int d = " + std::to_string(rank - 1) + "; d > 0; --d) {\n"
       "      const I q = rest / shp[d], k = rest - q * shp[d];\n"
       "      so += k * ss[d];\n";
  if (!dst_contiguous) c += "      dof += k * ds[d];\n";
  c += "      rest = q;\n"
       "    }\n"
       "    so += rest * ss[0];\n";
  if (!dst_contiguous) c += "    dof += rest * ds[0];\n";
  const std::string at = dst_contiguous ? "i" : "dof";
  if (add) c += "    dst[" + at + "] = theon::scalar::Add{}(dst[" + at + "], src[so]);\n";
  else c += "    dst[" + at + "] = src[so];\n";
  c += "  }\n}\n";
  return {name, c, {name}, /*fmad_applies=*/false};
}

Array device_empty(const Shape& shape, DType dtype, int device, cudaStream_t stream) {
  const size_t bytes = static_cast<size_t>(shape_size(shape)) * itemsize(dtype);
  return Array(CudaRuntime::instance().allocate_on(Device::cuda(device), bytes, stream), dtype, shape,
               contiguous_strides(shape));
}

Array on_device(const Array& a, int device, cudaStream_t stream) {
  if (a.device() == Device::cuda(device)) return a;
  CudaRuntime& rt = CudaRuntime::instance();
  if (a.device().is_cuda()) {
    // Another device's array (placement inserts transfers, so only direct callers): copied
    // as DeviceOps::copy does, on the devices' own streams, which `stream` then waits for.
    Array out = to_device(a, Device::cuda(device));
    rt.wait_for_stream(stream, rt.stream(device));
    rt.record_use(*out.buffer(), stream);  // its home is the device's own stream; the kernel uses it on `stream`
    return out;
  }
  // A host array copied on `stream`, so the kernel reading it next on that stream finds it
  // written; its block's home is `stream` too. (From pageable memory the copy has read its
  // source when copy_on returns.)
  const Array c = a.contiguous();
  Array out = device_empty(c.shape(), c.dtype(), device, stream);
  if (c.size() > 0) rt.copy_on(out.data(), out.device(), c.data(), Device::cpu(), c.nbytes(), stream);
  return out;
}

Array host_copy(const Array& a, cudaStream_t stream, const std::string& what) {
  if (a.on_host()) return a;
  const Array c = contiguous_on_device(a, a.device().index, stream, what);
  Array out = Array::empty(c.shape(), c.dtype());  // pageable: the copy ends before copy_on returns
  if (c.size() > 0) CudaRuntime::instance().copy_on(out.data(), Device::cpu(), c.data(), c.device(), c.nbytes(), stream);
  return out;
}

Array contiguous_on_device(const Array& a, int device, cudaStream_t stream, const std::string& what) {
  if (a.is_contiguous()) return a;
  Array out = device_empty(a.shape(), a.dtype(), device, stream);
  copy_strided(a, out, device, stream, what);
  return out;
}

void copy_strided(const Array& src_in, const Array& dst, int device, cudaStream_t stream, const std::string& what) {
  if (dst.size() == 0) return;
  if (itemsize(src_in.dtype()) != itemsize(dst.dtype()))
    throw InternalError(what + ": copy between dtypes of different sizes (" + std::string(dtype_name(src_in.dtype())) +
                        " to " + std::string(dtype_name(dst.dtype())) + ")");
  check_broadcast(src_in, dst, what);
  const Array src = on_device(src_in, device, stream);
  const Layout L = plan(src, dst, /*widen=*/true);
  switch (copy_path(L)) {
    case CopyPath::Empty: return;
    case CopyPath::Memcpy:
      check_call(cudaMemcpyAsync(dst.data(), src.data(), static_cast<size_t>(L.size()) * L.unit,
                                 cudaMemcpyDeviceToDevice, stream),
                 "cudaMemcpyAsync", what);
      return;
    case CopyPath::Memcpy2D:
      check_call(cudaMemcpy2DAsync(dst.data(), static_cast<size_t>(L.dst[0] * L.unit), src.data(),
                                   static_cast<size_t>(L.src[0] * L.unit), static_cast<size_t>(L.shape[1] * L.unit),
                                   static_cast<size_t>(L.shape[0]), cudaMemcpyDeviceToDevice, stream),
                 "cudaMemcpy2DAsync", what);
      return;
    case CopyPath::Transpose: launch_transpose(L, dst.data(), src.data(), device, stream, what); return;
    case CopyPath::Kernel: launch_strided(L, false, dst.dtype(), dst.data(), src.data(), device, stream, what); return;
  }
}

void add_strided(const Array& src_in, const Array& dst, int device, cudaStream_t stream, const std::string& what) {
  if (dst.size() == 0) return;
  if (src_in.dtype() != dst.dtype())
    throw InternalError(what + ": add_strided needs one dtype (" + std::string(dtype_name(src_in.dtype())) + " += " +
                        std::string(dtype_name(dst.dtype())) + ")");
  check_broadcast(src_in, dst, what);
  const Array src = on_device(src_in, device, stream);
  const Layout L = plan(src, dst, /*widen=*/false);
  launch_strided(L, true, dst.dtype(), dst.data(), src.data(), device, stream, what);
}

namespace {

// The fill's unit: the widest of 16/8/4/2/1 bytes that is a multiple of the element size
// and divides the total bytes and the address.
int fill_unit(const Array& dst) {
  const int u = static_cast<int>(itemsize(dst.dtype()));
  const int64_t bytes = dst.size() * u;
  const uintptr_t a = address_of(dst);
  for (int w : {16, 8, 4, 2, 1})
    if (w >= u && w % u == 0 && bytes % w == 0 && a % static_cast<uintptr_t>(w) == 0) return w;
  return u;
}

std::string fill_name(int unit, bool wide) { return "theon_fill_u" + std::to_string(unit) + (wide ? "_i64" : "_i32"); }

KernelSource fill_source(int unit, bool wide) {
  const std::string name = fill_name(unit, wide);
  std::string c = "// Generated by Theon (copy_codegen.cpp): fill with one value.\n";
  c += std::string("typedef ") + unit_type(unit) + " T;\n";
  c += std::string("typedef ") + (wide ? "long long" : "int") + " I;\n";
  c += "extern \"C\" __global__ void " + name +
       "(T* __restrict__ dst, T value, long long n) {\n"
       "  const I total = (I)n, step = (I)gridDim.x * (I)blockDim.x;\n"
       "  for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < total; i += step) dst[i] = value;\n"
       "}\n";
  return {name, c, {name}, /*fmad_applies=*/false};
}

}  // namespace

void fill_value(const Array& dst, const Array& value, int device, cudaStream_t stream, const std::string& what) {
  if (!dst.is_contiguous()) throw InternalError(what + ": fill_value needs a contiguous destination");
  if (dst.size() == 0) return;
  const Array v = host_copy(value, stream, what);
  const Array typed = v.dtype() == dst.dtype() ? v.contiguous() : v.astype(dst.dtype());
  const int u = static_cast<int>(itemsize(dst.dtype()));
  const unsigned char* bytes = static_cast<const unsigned char*>(typed.data());
  bool same = true;
  for (int b = 1; b < u; ++b) same = same && bytes[b] == bytes[0];
  if (same) {  // zeros, bools, bytes, -1: the copy engine's memset
    check_call(cudaMemsetAsync(dst.data(), bytes[0], dst.nbytes(), stream), "cudaMemsetAsync", what);
    return;
  }
  const int w = fill_unit(dst);
  alignas(16) unsigned char pattern[16];
  for (int b = 0; b < w; ++b) pattern[b] = bytes[b % u];
  long long n = dst.size() * u / w;
  const bool wide = !fits_int32(n, n);
  const std::string name = fill_name(w, wide);
  cudaKernel_t k = cached_kernel(name, device, kNoFmad, [&] { return fill_source(w, wide); }, name);
  void* p = dst.data();
  void* args[] = {&p, pattern, &n};
  launch(k, dim3(grid_for(n, kBlock, device)), dim3(kBlock), args, 0, stream, what);
}

std::vector<KernelSource> copy_sources(const Array& src, const Array& dst) {
  const Layout L = plan(src, dst, true);
  switch (copy_path(L)) {
    case CopyPath::Transpose: return {transpose_source(L.unit, L.wide_index())};
    case CopyPath::Kernel: return {strided_source(false, dst.dtype(), L.unit, L.rank(), L.dst_contiguous(), L.wide_index())};
    default: return {};
  }
}

std::vector<KernelSource> add_sources(const Array& src, const Array& dst) {
  const Layout L = plan(src, dst, false);
  if (L.size() == 0) return {};
  return {strided_source(true, dst.dtype(), L.unit, L.rank(), L.dst_contiguous(), L.wide_index())};
}

std::vector<KernelSource> fill_sources(const Array& dst, DType) {
  // Which values need the kernel (not a memset) is data: report the kernel run() may use.
  if (dst.size() == 0) return {};
  const int w = fill_unit(dst);
  const int64_t n = dst.size() * static_cast<int64_t>(itemsize(dst.dtype())) / w;
  return {fill_source(w, !fits_int32(n, n))};
}

}  // namespace theon::backends::cuda
