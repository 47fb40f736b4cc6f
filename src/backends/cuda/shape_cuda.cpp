// CUDA kernels of the shape and indexing family: DimShuffle, BroadcastTo, Subtensor (views:
// metadata only, no launch), Reshape (a view whenever NumPy's no-copy rule allows, else a
// strided copy), Shape, Alloc (fill), ARange, Join, AdvancedSubtensor1 (take: a gather),
// IncSubtensor and AdvancedIncSubtensor1 (set/inc into a copy of x; repeated indices
// accumulate through atomics, or deterministically with the plan's deterministic option).
//
// Host values: the sizes of Alloc, the start/stop/step of ARange, the bounds of Subtensor/IncSubtensor and Reshape's shape
// vector decide output shapes, so they are read on the host (infer_shape reads them before
// run()): placement should keep these small integer inputs on the host. run() copies any
// that arrive on the device to the host itself (a synchronising read, correct but slow).
// Index arrays of take/set/inc are data: on the host they are checked and wrapped on the
// host before upload; on the device a small kernel wraps them and raises a flag, which run()
// copies back and turns into the CPU's IndexError before anything is written.
#include "backends/cuda/copy_codegen.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_runtime.hpp"
#include "graph/user_names.hpp"
#include "ops/join.hpp"
#include "ops/shape.hpp"
#include "ops/subtensor.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

namespace theon::backends::cuda {

namespace {

using graph::Apply;

constexpr unsigned kBlock = 256;

void check_call(cudaError_t e, const char* call, const std::string& what) {
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw DeviceError(what + ": " + call + " failed: " + cudaGetErrorString(e));
  }
}

// Dtypes with a CUDA arithmetic type (cuda_type): what the kernels that compute need. Pure
// copies move bytes and take every dtype.
bool arithmetic_dtype(DType d) {
  switch (d) {
    case DType::Bool: case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
    case DType::UInt8: case DType::Float32: case DType::Float64: return true;
    default: return false;
  }
}

// Inputs from `first` on (index bounds, sizes) as host arrays: their values decide shapes.
// A device one is read on the kernel's stream (after the work that wrote it), the host waiting.
std::vector<Array> host_values(const ExecContext& where, const std::vector<Array>& inputs, size_t first,
                               const Apply& node) {
  std::vector<Array> out = inputs;
  for (size_t i = first; i < out.size(); ++i)
    if (out[i].defined() && !out[i].on_host())
      out[i] = host_copy(out[i], stream_for(where, out[i].device().index), node.describe());
  return out;
}

// A placeholder array (no buffer) of `shape`, contiguous: what sources() reasons about.
Array placeholder(const Shape& shape, DType dtype) { return Array(nullptr, dtype, shape, contiguous_strides(shape)); }

void add_unique(std::vector<KernelSource>& all, std::vector<KernelSource> more) {
  for (auto& s : more) {
    bool seen = false;
    for (auto& a : all) seen = seen || a.name == s.name;
    if (!seen) all.push_back(std::move(s));
  }
}

// Dims [b, e) of a layout as one (size, stride) run, if they are contiguous with each
// other (size-1 dims ignored); an empty group is (1, 0).
bool group(const Shape& s, const Strides& st, int b, int e, int64_t& size, int64_t& stride) {
  size = 1;
  stride = 0;
  int64_t expect = 0;
  bool first = true;
  for (int d = e - 1; d >= b; --d) {
    if (s[d] == 1) continue;
    if (first) {
      stride = st[d];
      first = false;
    } else if (st[d] != expect) {
      return false;
    }
    size *= s[d];
    expect = st[d] * s[d];
  }
  return true;
}

bool broadcastable(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[to.size() - from.size() + d]) return false;
  return true;
}

int64_t span3(int64_t a, int64_t sa, int64_t b, int64_t sb, int64_t c, int64_t sc) {
  auto reach = [](int64_t n, int64_t s) { return (n > 0 ? n - 1 : 0) * (s < 0 ? -s : s); };
  return reach(a, sa) + reach(b, sb) + reach(c, sc);
}

// ---- views: DimShuffle, BroadcastTo, Subtensor ------------------------------------------

// The op's own perform() builds the view from metadata alone, which is valid for device
// arrays; bound inputs (Subtensor) are read on the host.
class ViewKernel final : public CudaKernel {
 public:
  bool host_input(const graph::Apply& node, int input) const override {
    (void)node;
    return node.op().kind() == graph::OpKind::Subtensor && input >= 1;  // slice bounds decide the view
  }
  std::string name() const override { return "cuda_view"; }
  void run(const KernelPlan*, const ExecContext& where, const Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    node.op().perform(node, host_values(where, inputs, 1, node), outputs);
  }
  std::vector<KernelSource> sources(const Apply&, const std::vector<Array>&, const KernelOptions&) const override {
    return {};
  }
};

// ---- Reshape --------------------------------------------------------------------------

// NumPy's _attempt_nocopy_reshape: strides giving `new_shape` over the same memory, when
// each group of old dims that forms a group of new dims is contiguous within itself.
std::optional<Strides> nocopy_strides(const Shape& old_in, const Strides& old_st_in, const Shape& new_shape) {
  const int new_nd = static_cast<int>(new_shape.size());
  if (shape_size(old_in) == 0) return contiguous_strides(new_shape);
  Shape od;
  Strides os;
  for (size_t d = 0; d < old_in.size(); ++d)
    if (old_in[d] != 1) od.push_back(old_in[d]), os.push_back(old_st_in[d]);
  const int old_nd = static_cast<int>(od.size());
  Strides ns(new_nd, 1);
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < new_nd && oi < old_nd) {
    int64_t np = new_shape[ni], op = od[oi];
    while (np != op) {
      if (np < op) np *= new_shape[nj++];
      else op *= od[oj++];
    }
    for (int ok = oi; ok < oj - 1; ++ok)
      if (os[ok] != od[ok + 1] * os[ok + 1]) return std::nullopt;
    ns[nj - 1] = os[oj - 1];
    for (int nk = nj - 1; nk > ni; --nk) ns[nk - 1] = ns[nk] * new_shape[nk];
    ni = nj++;
    oi = oj++;
  }
  const int64_t last = ni >= 1 ? ns[ni - 1] : 1;
  for (int nk = ni; nk < new_nd; ++nk) ns[nk] = last;  // trailing size-1 dims
  return ns;
}

class ReshapeKernel final : public CudaKernel {
 public:
  bool host_input(const graph::Apply& node, int input) const override {
    (void)node;
    return input == 1;  // the target shape
  }
  std::string name() const override { return "cuda_reshape"; }
  void run(const KernelPlan*, const ExecContext& where, const Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const Shape shape = node.op().infer_shape(node, host_values(where, inputs, 1, node))[0];  // reads the shape vector
    const Array& x = inputs[0];
    if (auto st = nocopy_strides(x.shape(), x.strides(), shape)) {
      outputs[0] = Array(x.buffer(), x.dtype(), shape, *st, x.offset());
      return;
    }
    const int dev = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, dev);
    Array c = device_empty(x.shape(), x.dtype(), dev, stream);
    copy_strided(x, c, dev, stream, node.describe());
    outputs[0] = Array(c.buffer(), x.dtype(), shape, contiguous_strides(shape));
  }
  std::vector<KernelSource> sources(const Apply&, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    // The target shape is a value; run() copies only when x is not contiguous (the copy
    // goes to a contiguous array of x's shape, then is viewed with the new shape).
    const Array& x = inputs[0];
    if (x.is_contiguous()) return {};
    return copy_sources(x, placeholder(x.shape(), x.dtype()));
  }
};

// ---- Shape ----------------------------------------------------------------------------

KernelSource write_i64_source() {
  const std::string name = "theon_write_i64";
  std::string c =
      "// Generated by Theon (shape_cuda.cpp): writes up to 8 int64 values passed by value.\n"
      "#include \"theon_device.cuh\"\n"
      "extern \"C\" __global__ void theon_write_i64(long long* out, TheonShape values, int n) {\n"
      "  const int i = threadIdx.x;\n"
      "  if (i < n) out[i] = values.d[i];\n"
      "}\n";
  return {name, c, {name}};
}

// x.shape / x.size read only metadata; a host output is written directly (the recommended
// placement: shapes feed host-side size inputs), a device output by one tiny launch that
// takes the values as arguments (no host buffer to keep alive, no synchronisation).
class ShapeKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_shape"; }
  void run(const KernelPlan* plan, const ExecContext& where, const Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    if (outputs[0].on_host()) {
      node.op().perform(node, inputs, outputs);
      return;
    }
    const bool size = graph::op_as<ops::ShapeOf>(node.op()).size();
    std::vector<int64_t> values = size ? std::vector<int64_t>{inputs[0].size()} : inputs[0].shape();
    const int dev = device_of(inputs, outputs);
    cudaKernel_t k = cached_kernel("theon_write_i64", dev, options_of(plan).fmad, write_i64_source, "theon_write_i64");
    for (size_t at = 0; at < values.size(); at += kMaxRank) {
      DeviceShape v;
      int n = static_cast<int>(std::min<size_t>(kMaxRank, values.size() - at));
      for (int i = 0; i < n; ++i) v.d[i] = values[at + i];
      long long* out = outputs[0].data<long long>() + at;
      void* args[] = {&out, &v, &n};
      launch(k, dim3(1), dim3(32), args, 0, stream_for(where, dev), node);
    }
  }
  std::vector<KernelSource> sources(const Apply&, const std::vector<Array>&, const KernelOptions&) const override {
    return {write_i64_source()};
  }
};

// ---- Alloc ----------------------------------------------------------------------------

// A host value of one element (a constant: zeros_like, ones_like) fills by memset or a
// fill kernel taking it as an argument; any other value is a broadcast copy on the device.
class AllocKernel final : public CudaKernel {
 public:
  bool host_input(const graph::Apply& node, int input) const override {
    (void)node;
    return input >= 1;  // the sizes
  }
  std::string name() const override { return "cuda_fill"; }
  void run(const KernelPlan*, const ExecContext& where, const Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const Array& v = inputs[0];
    Array& out = outputs[0];
    const int dev = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, dev);
    if (v.on_host() && v.size() == 1) fill_value(out, v, dev, stream, node.describe());
    else copy_strided(v, out, dev, stream, node.describe());
  }
  std::vector<KernelSource> sources(const Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    // The sizes are values: use the static dims, and elsewhere the value's dim (or 3).
    const Array& v = inputs[0];
    const auto& dims = node.output_raw(0)->type.dims;
    Shape shape(dims.size());
    const int lead = static_cast<int>(dims.size()) - v.ndim();
    for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
      const int64_t vd = d >= lead ? v.shape()[d - lead] : 1;
      shape[d] = dims[d] >= 0 ? dims[d] : (vd != 1 ? vd : 3);
    }
    const Array out = placeholder(shape, v.dtype());
    std::vector<KernelSource> all = fill_sources(out, v.dtype());  // a host value
    add_unique(all, copy_sources(v, out));                           // a device value
    return all;
  }
};

// ---- ARange ---------------------------------------------------------------------------

// out[i] = start + i * step, in the compute dtype the builder chose (int64 wrapping through
// unsigned, or double), converted with the Cast functor: the CPU loop's arithmetic exactly.
KernelSource arange_source(DType out, DType compute) {
  const bool exact = compute == DType::Int64;
  const std::string name = std::string("theon_arange_") + dtype_tag(out) + "_" + dtype_tag(compute);
  std::string c = std::string("// Generated by Theon (shape_cuda.cpp): arange.\n") +
                  "#include \"theon_device.cuh\"\n#include \"scalar_ops.hpp\"\n" +
                  "typedef " + cuda_type(out) + " TO;\ntypedef " + cuda_type(compute) + " TC;\n" +
                  "extern \"C\" __global__ void theon_arange(TO* out, long long n, TC start, TC step) {\n"
                  "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
                  "       i += (long long)gridDim.x * blockDim.x) {\n" +
                  (exact ? "    const TC v = (TC)((unsigned long long)start + (unsigned long long)i * (unsigned long long)step);\n"
                         : "    const TC v = start + (TC)i * step;\n") +
                  "    out[i] = theon::scalar::Cast().convert<TO>(v);\n"
                  "  }\n"
                  "}\n";
  return {name, c, {"theon_arange"}};
}

class ARangeKernel final : public CudaKernel {
 public:
  bool host_input(const graph::Apply&, int) const override { return true; }  // they decide the length
  std::string name() const override { return "cuda_arange"; }
  Support supports(const Apply& node) const override {
    const DType out = node.output_raw(0)->type.dtype;
    if (!arithmetic_dtype(out)) return {false, "no CUDA arithmetic type for " + std::string(dtype_name(out))};
    return {};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const Apply& node, const std::vector<Array>& inputs_in,
           std::vector<Array>& outputs) const override {
    Array& out = outputs[0];
    long long n = out.size();
    if (n == 0) return;
    const int dev = device_of(inputs_in, outputs);
    const cudaStream_t stream = stream_for(where, dev);
    const std::vector<Array> inputs = host_values(where, inputs_in, 0, node);
    const DType compute = inputs[0].dtype();
    const KernelSource src = arange_source(out.dtype(), compute);
    cudaKernel_t k = cached_kernel(src.name, dev, options_of(plan).fmad, [&] { return src; }, "theon_arange");
    void* o = out.data();
    const unsigned block = kBlock;
    const dim3 grid(grid_for(n, block, dev));
    if (compute == DType::Int64) {
      long long start = inputs[0].data<int64_t>()[0], step = inputs[2].data<int64_t>()[0];
      void* args[] = {&o, &n, &start, &step};
      launch(k, grid, dim3(block), args, 0, stream, node);
    } else {
      double start = inputs[0].data<double>()[0], step = inputs[2].data<double>()[0];
      void* args[] = {&o, &n, &start, &step};
      launch(k, grid, dim3(block), args, 0, stream, node);
    }
  }
  std::vector<KernelSource> sources(const Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {arange_source(node.output_raw(0)->type.dtype, inputs[0].dtype())};
  }
};

// ---- Join -----------------------------------------------------------------------------

// One strided copy per input into its slice of the output (memcpy/memcpy2D when the input
// is contiguous and rows are wide, else the generic kernel).
class JoinKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_join"; }
  void run(const KernelPlan*, const ExecContext& where, const Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const int dev = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, dev);
    for (auto& [in, dst] : slices(node, inputs, outputs[0])) copy_strided(in, dst, dev, stream, node.describe());
  }
  std::vector<KernelSource> sources(const Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    const Array out = placeholder(node.op().infer_shape(node, inputs)[0], inputs[0].dtype());
    std::vector<KernelSource> all;
    for (auto& [in, dst] : slices(node, inputs, out)) add_unique(all, copy_sources(in, dst));
    return all;
  }

 private:
  static std::vector<std::pair<Array, Array>> slices(const Apply& node, const std::vector<Array>& inputs,
                                                     const Array& out) {
    const auto& op = graph::op_as<ops::Join>(node.op());
    const int axis = op.axis();
    const bool stack = op.stack();
    std::vector<std::pair<Array, Array>> r;
    int64_t at = 0;  // position along the axis
    for (const Array& in : inputs) {
      Strides strides = out.strides();
      const int64_t axis_stride = strides[axis];
      if (stack) strides.erase(strides.begin() + axis);
      r.push_back({in, Array(out.buffer(), out.dtype(), in.shape(), strides, out.offset() + at * axis_stride)});
      at += stack ? 1 : in.shape()[axis];
    }
    return r;
  }
};

// ---- index arrays (take, advanced set/inc) -----------------------------------------------

std::string wrap_name(DType idx) { return std::string("theon_wrap_idx_") + dtype_tag(idx); }

KernelSource wrap_source(DType idx) {
  const std::string name = wrap_name(idx);
  std::string c = "// Generated by Theon (shape_cuda.cpp): wraps negative indices, flags the first out of range.\n";
  c += std::string("typedef ") + cuda_type(idx) + " X;\n";
  c += "extern \"C\" __global__ void " + name +
       "(long long* __restrict__ out, const X* __restrict__ idx, long long m, long long n,\n"
       "    unsigned long long* bad) {\n"
       "  const long long step = (long long)gridDim.x * blockDim.x;\n"
       "  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < m; j += step) {\n"
       "    const long long v = (long long)idx[j];\n"
       "    long long w = v < 0 ? v + n : v;\n"
       "    if (w < 0 || w >= n) {\n"
       "      atomicMin(bad, (unsigned long long)j);  // the first bad position, as the CPU reports\n"
       "      w = 0;\n"
       "    }\n"
       "    out[j] = w;\n"
       "  }\n"
       "}\n";
  return {name, c, {name}};
}

std::string index_error(const Apply& node, int idx_input, int64_t index, int axis, const Shape& x_shape) {
  // As the CPU says it (ops/subtensor.cpp): the values as the user wrote them.
  return graph::user_describe(node) + ": index " + std::to_string(index) + " is out of bounds for axis " +
         std::to_string(axis) + " of " + graph::user_label(*node.input(0)) + " with size " +
         std::to_string(x_shape[axis]) + " (shape " + shape_str(x_shape) + ", indices " +
         graph::user_label(*node.input(idx_input)) + ")";
}

// The indices as a contiguous int64 device array, negative ones wrapped, each checked
// against x's size along `axis` (IndexError before anything is written). Host indices are
// checked on the host; device ones by a kernel whose flag is copied back (one sync).
Array prepare_indices(const Apply& node, const Array& idx, int idx_input, int axis, const Shape& x_shape, int dev,
                      cudaStream_t stream, bool fmad) {
  const int64_t n = x_shape[axis], m = idx.size();
  if (m == 0) return device_empty({0}, DType::Int64, dev, stream);
  if (idx.on_host()) {
    std::vector<int64_t> v = idx.to_vector<int64_t>();
    for (int64_t& i : v) {
      const int64_t orig = i;
      if (i < 0) i += n;
      if (i < 0 || i >= n) throw IndexError(index_error(node, idx_input, orig, axis, x_shape));
    }
    return on_device(Array::from_vector<int64_t>(v, Shape{m}), dev, stream);
  }
  const std::string what = node.describe();
  const Array ic = contiguous_on_device(idx, dev, stream, what);
  Array out = device_empty({m}, DType::Int64, dev, stream);
  Array bad = device_empty({1}, DType::Int64, dev, stream);
  check_call(cudaMemsetAsync(bad.data(), 0xff, sizeof(long long), stream), "cudaMemsetAsync", what);
  cudaKernel_t k = cached_kernel(wrap_name(idx.dtype()), dev, fmad, [&] { return wrap_source(idx.dtype()); },
                                 wrap_name(idx.dtype()));
  void* o = out.data();
  const void* ip = ic.data();
  long long mm = m, nn = n;
  void* b = bad.data();
  void* args[] = {&o, &ip, &mm, &nn, &b};
  launch(k, dim3(grid_for(m, kBlock, dev)), dim3(kBlock), args, 0, stream, what);
  std::shared_ptr<Buffer> host = CudaRuntime::instance().allocate_pinned(16);
  check_call(cudaMemcpyAsync(host->data(), bad.data(), sizeof(long long), cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync", what);
  check_call(cudaStreamSynchronize(stream), "cudaStreamSynchronize", what);
  unsigned long long first;
  std::memcpy(&first, host->data(), sizeof first);
  if (first != ~0ull) {
    const Array value =
        host_copy(ic.reshape({m}).slice(0, static_cast<int64_t>(first), static_cast<int64_t>(first) + 1), stream, what);
    throw IndexError(index_error(node, idx_input, static_cast<int64_t>(value.item(0)), axis, x_shape) +
                     " (checked on the device)");
  }
  return out;
}

// The k index arrays of a take/set/inc (node inputs first..first+k-1) as flat positions
// into x's dims axis..axis+k-1 seen as one, a contiguous int64 device array, and their
// broadcast shape. One array: prepare_indices. Several: read on the host (run() gets them
// there: host_input), combined and checked as the CPU does, then uploaded.
struct DeviceIndices {
  Array flat;
  Shape shape;
};
DeviceIndices prepare_flat_indices(const ExecContext& where, const Apply& node, const std::vector<Array>& inputs,
                                   int first, int k, int axis, const Shape& x_shape, int dev, bool fmad) {
  const cudaStream_t stream = stream_for(where, dev);
  if (k == 1)
    return {prepare_indices(node, inputs[first], first, axis, x_shape, dev, stream, fmad), inputs[first].shape()};
  const std::vector<Array> host = host_values(where, inputs, static_cast<size_t>(first), node);
  ops::FlatIndices fi = ops::checked_flat_indices(node, host, first, k, axis, x_shape);
  const int64_t m = static_cast<int64_t>(fi.flat.size());
  if (m == 0) return {device_empty({0}, DType::Int64, dev, stream), fi.shape};
  return {on_device(Array::from_vector<int64_t>(fi.flat, Shape{m}), dev, stream), fi.shape};
}

// The broadcast shape of the index inputs from `first` on (the CPU's rule and error).
Shape index_shape(const Apply& node, const std::vector<Array>& inputs, int first) {
  const int k = static_cast<int>(inputs.size()) - first;
  return k == 1 ? inputs[first].shape() : ops::index_broadcast_shape(node, inputs, first, k);
}

std::vector<KernelSource> index_sources(const Array& idx) {
  std::vector<KernelSource> all = {wrap_source(idx.dtype())};
  if (!idx.is_contiguous()) add_unique(all, copy_sources(idx, placeholder(idx.shape(), idx.dtype())));
  return all;
}

// x seen as (outer, n, inner) with strides; a copy when its dims do not group that way.
struct Grouped {
  Array array;  // x itself or a contiguous copy
  int64_t outer = 1, n = 1, inner = 1, so = 0, sn = 0, si = 0;
  bool copied = false;
};

Grouped group_axis(const Array& x, int axis, int axis_end) {
  Grouped g;
  g.array = x;
  const Shape& s = x.shape();
  const Strides& st = x.strides();
  bool ok = group(s, st, 0, axis, g.outer, g.so) && group(s, st, axis, axis_end, g.n, g.sn) &&
            group(s, st, axis_end, x.ndim(), g.inner, g.si);
  if (!ok) {
    g.copied = true;
    const Strides c = contiguous_strides(s);
    group(s, c, 0, axis, g.outer, g.so);
    group(s, c, axis, axis_end, g.n, g.sn);
    group(s, c, axis_end, x.ndim(), g.inner, g.si);
  }
  return g;
}

// ---- AdvancedSubtensor1 (take) ----------------------------------------------------------

std::string take_name(int unit, bool wide) {
  return "theon_take_u" + std::to_string(unit) + (wide ? "_i64" : "_i32");
}

KernelSource take_source(int unit, bool wide) {
  const std::string name = take_name(unit, wide);
  std::string c = "// Generated by Theon (shape_cuda.cpp): out[o, j, k] = x[o, idx[j], k] (x strided).\n";
  c += std::string("typedef ") + unit_type(unit) + " T;\n";
  c += std::string("typedef ") + (wide ? "long long" : "int") + " I;\n";
  c += "extern \"C\" __global__ void " + name +
       "(T* __restrict__ out, const T* __restrict__ x, const long long* __restrict__ idx, long long m_,\n"
       "    long long inner_, long long so_, long long sn_, long long si_, long long total_) {\n"
       "  const I m = (I)m_, inner = (I)inner_, so = (I)so_, sn = (I)sn_, si = (I)si_, total = (I)total_;\n"
       "  const I step = (I)gridDim.x * (I)blockDim.x;\n"
       "  for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < total; i += step) {\n"
       "    const I r = i / inner, k = i - r * inner, o = r / m, j = r - o * m;\n"
       "    out[i] = x[o * so + (I)idx[j] * sn + k * si];\n"
       "  }\n"
       "}\n";
  return {name, c, {name}};
}

struct TakeLayout {
  int unit;
  int64_t m, inner, so, sn, si, total;
  bool wide;
};

// Widens the contiguous inner rows (embedding rows) to 16/8/4/2-byte units when aligned.
TakeLayout take_layout(const Grouped& g, int64_t m, size_t item, uintptr_t x_addr, uintptr_t out_addr) {
  TakeLayout t{static_cast<int>(item), m, g.inner, g.so, g.sn, g.inner == 1 ? 1 : g.si, 0, false};
  if (t.si == 1) {
    for (int w : {16, 8, 4, 2}) {
      if (w <= t.unit || w % t.unit) continue;
      const uintptr_t a = x_addr | out_addr;
      if ((t.inner * t.unit) % w || (t.so * t.unit) % w || (t.sn * t.unit) % w || a % static_cast<uintptr_t>(w))
        continue;
      const int f = w / t.unit;
      t.inner /= f, t.so /= f, t.sn /= f;
      t.unit = w;
      break;
    }
  }
  t.total = g.outer * m * t.inner;
  t.wide = !fits_int32(t.total, span3(g.outer, t.so, g.n, t.sn, t.inner, t.si));
  return t;
}

class TakeKernel final : public CudaKernel {
 public:
  bool host_input(const graph::Apply& node, int input) const override {
    (void)node;
    return input >= 1;  // indices: checked (and wrapped) on the host, then uploaded, with no sync
  }
  std::string name() const override { return "cuda_take"; }
  void run(const KernelPlan* plan, const ExecContext& where, const Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const int axis = graph::op_as<ops::AdvancedSubtensor1>(node.op()).axis();
    const int dev = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, dev);
    const bool fmad = options_of(plan).fmad;
    const Array x0 = on_device(inputs[0], dev, stream);  // a host x (a constant table) is uploaded
    const int arrays = static_cast<int>(inputs.size()) - 1;
    const Array idx = prepare_flat_indices(where, node, inputs, 1, arrays, axis, x0.shape(), dev, fmad).flat;
    Array& out = outputs[0];
    if (out.size() == 0) return;
    Grouped g = group_axis(x0, axis, axis + arrays);
    if (g.copied) g.array = contiguous_on_device(x0, dev, stream, node.describe());
    const TakeLayout t = take_layout(g, idx.size(), itemsize(x0.dtype()), reinterpret_cast<uintptr_t>(g.array.data()),
                                     reinterpret_cast<uintptr_t>(out.data()));
    const std::string kname = take_name(t.unit, t.wide);
    cudaKernel_t k = cached_kernel(kname, dev, fmad, [&] { return take_source(t.unit, t.wide); }, kname);
    void* o = out.data();
    const void* xp = g.array.data();
    const void* ip = idx.data();
    long long m = t.m, inner = t.inner, so = t.so, sn = t.sn, si = t.si, total = t.total;
    void* args[] = {&o, &xp, &ip, &m, &inner, &so, &sn, &si, &total};
    launch(k, dim3(grid_for(total, kBlock, dev)), dim3(kBlock), args, 0, stream, node);
  }
  std::vector<KernelSource> sources(const Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    const int axis = graph::op_as<ops::AdvancedSubtensor1>(node.op()).axis();
    const Array& x = inputs[0];
    const int k = static_cast<int>(inputs.size()) - 1;
    std::vector<KernelSource> all = k == 1 ? index_sources(inputs[1]) : std::vector<KernelSource>{};
    const Shape idx = index_shape(node, inputs, 1);
    const Shape out_shape = ops::take_shape(x.shape(), idx, axis, k);
    if (shape_size(out_shape) == 0) return all;
    Grouped g = group_axis(x, axis, axis + k);
    if (g.copied) add_unique(all, copy_sources(x, placeholder(x.shape(), x.dtype())));
    const uintptr_t xa = g.copied ? 0 : static_cast<uintptr_t>(x.offset()) * itemsize(x.dtype());
    const TakeLayout t = take_layout(g, shape_size(idx), itemsize(x.dtype()), xa, 0);
    add_unique(all, {take_source(t.unit, t.wide)});
    return all;
  }
};

// ---- AdvancedIncSubtensor1 -------------------------------------------------------------

KernelSource mark_last_source() {
  const std::string name = "theon_mark_last";
  std::string c =
      "// Generated by Theon (shape_cuda.cpp): last[t] = the last position j with idx[j] == t.\n"
      "extern \"C\" __global__ void theon_mark_last(long long* __restrict__ last, const long long* __restrict__ idx,\n"
      "    long long m) {\n"
      "  const long long step = (long long)gridDim.x * blockDim.x;\n"
      "  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < m; j += step)\n"
      "    atomicMax(&last[idx[j]], j);\n"
      "}\n";
  return {name, c, {name}};
}

enum class IncMode { Set, Atomic, Deterministic };

const char* mode_tag(IncMode mode) {
  switch (mode) {
    case IncMode::Set: return "set";
    case IncMode::Atomic: return "inc";
    case IncMode::Deterministic: return "incdet";
  }
  return "?";
}

std::string scatter_name(IncMode mode, DType dtype, bool wide) {
  return std::string("theon_scatter_") + mode_tag(mode) + "_" + dtype_tag(dtype) + (wide ? "_i64" : "_i32");
}

// The accumulation for one element; integer sums wrap, so their order does not matter and
// atomics are deterministic; 8/16-bit types use a CAS on the aligned 32-bit word.
std::string atomic_add_fn(DType dtype) {
  std::string body;
  switch (dtype) {
    case DType::Float32: case DType::Float64: case DType::Int32: body = "  atomicAdd(d, v);\n"; break;
    case DType::Int64:
      body = "  atomicAdd((unsigned long long*)d, (unsigned long long)v);  // two's complement: wraps like NumPy\n";
      break;
    case DType::Bool: body = "  if (v) *d = true;  // or: every writer writes the same value\n"; break;
    default:
      body =
          "  const unsigned long long a = (unsigned long long)d;\n"
          "  unsigned int* w = (unsigned int*)(a & ~3ull);\n"
          "  const unsigned shift = (unsigned)(a & 3ull) * 8u;\n"
          "  const unsigned bits = sizeof(T) * 8u;\n"
          "  const unsigned mask = (bits == 32u ? 0xffffffffu : ((1u << bits) - 1u)) << shift;\n"
          "  unsigned old = *w, assumed;\n"
          "  do {\n"
          "    assumed = old;\n"
          "    const unsigned cur = (assumed & mask) >> shift;\n"
          "    const unsigned sum = (cur + (unsigned)(theon_u)v) << shift;\n"
          "    old = atomicCAS(w, assumed, (assumed & ~mask) | (sum & mask));\n"
          "  } while (old != assumed);\n";
      break;
  }
  return "__device__ __forceinline__ void theon_accumulate(T* d, T v) {\n" + body + "}\n";
}

const char* unsigned_of(DType dtype) {
  switch (dtype) {
    case DType::Int8: case DType::UInt8: case DType::Bool: return "unsigned char";
    case DType::Int16: return "unsigned short";
    case DType::Int32: return "unsigned int";
    default: return "unsigned long long";
  }
}

KernelSource scatter_source(IncMode mode, DType dtype, bool wide) {
  const std::string name = scatter_name(mode, dtype, wide);
  std::string c = "// Generated by Theon (shape_cuda.cpp): advanced set/inc_subtensor along one axis.\n";
  c += std::string("typedef ") + cuda_type(dtype) + " T;\n";
  c += std::string("typedef ") + unsigned_of(dtype) + " theon_u;\n";
  c += std::string("typedef ") + (wide ? "long long" : "int") + " I;\n";
  if (mode == IncMode::Atomic) c += atomic_add_fn(dtype);
  // out is contiguous (outer, n, inner); y is (outer, m, inner) with strides.
  c += "extern \"C\" __global__ void " + name +
       "(T* out, const T* __restrict__ y, const long long* __restrict__ idx,\n"
       "    const long long* __restrict__ last, long long m_, long long n_, long long inner_, long long yso_,\n"
       "    long long ysm_, long long ysi_, long long total_) {\n"
       "  const I m = (I)m_, n = (I)n_, inner = (I)inner_, yso = (I)yso_, ysm = (I)ysm_, ysi = (I)ysi_;\n"
       "  const I total = (I)total_, step = (I)gridDim.x * (I)blockDim.x;\n"
       "  (void)last; (void)m;\n"
       "  for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < total; i += step) {\n"
       "    const I r = i / inner, k = i - r * inner;\n";
  if (mode == IncMode::Deterministic) {
    // One thread per destination element; sums in index order, as the CPU does, so the
    // result is bitwise the CPU's. Cost: O(m) per element of a hit row (documented).
    c += "    const I o = r / n, t = r - o * n;\n"
         "    const long long lj = last[t];\n"
         "    if (lj < 0) continue;  // row not indexed: out already holds x\n"
         "    T acc = out[i];\n"
         "    const T* yrow = y + o * yso + k * ysi;\n"
         "    for (long long j = 0; j <= lj; ++j)\n"
         "      if (idx[j] == (long long)t) acc = acc + yrow[(I)j * ysm];\n"
         "    out[i] = acc;\n";
  } else {
    c += "    const I o = r / m, j = r - o * m;\n"
         "    const long long t = idx[j];\n";
    if (mode == IncMode::Set) c += "    if (last[t] != (long long)j) continue;  // the last write wins, as on the CPU\n";
    c += "    T* d = out + (o * n + (I)t) * inner + k;\n"
         "    const T v = y[o * yso + j * ysm + k * ysi];\n";
    c += mode == IncMode::Set ? "    *d = v;\n" : "    theon_accumulate(d, v);\n";
  }
  c += "  }\n}\n";
  return {name, c, {name}};
}

IncMode inc_mode(bool set, DType dtype, const KernelOptions& options) {
  if (set) return IncMode::Set;
  if (is_float(dtype) && options.deterministic) return IncMode::Deterministic;
  return IncMode::Atomic;
}

struct ScatterLayout {
  int64_t outer, m, n, inner, yso, ysm, ysi, total;
  bool wide;
};

ScatterLayout scatter_layout(IncMode mode, const Shape& x_shape, int axis, int k, const Grouped& y) {
  ScatterLayout s{};
  s.outer = y.outer, s.m = y.n, s.inner = y.inner, s.yso = y.so, s.ysm = y.sn, s.ysi = y.si;
  s.n = 1;
  for (int d = axis; d < axis + k; ++d) s.n *= x_shape[d];
  const int64_t out_total = s.outer * s.n * s.inner;
  s.total = mode == IncMode::Deterministic ? out_total : s.outer * s.m * s.inner;
  const int64_t span = std::max(out_total, span3(s.outer, s.yso, s.m, s.ysm, s.inner, s.ysi));
  s.wide = !fits_int32(std::max(s.total, out_total), span);
  return s;
}

class AdvancedIncKernel final : public CudaKernel {
 public:
  bool host_input(const graph::Apply& node, int input) const override {
    (void)node;
    return input >= 2;  // indices: checked on the host, then uploaded
  }
  std::string name() const override { return "cuda_advanced_inc"; }
  Support supports(const Apply& node) const override {
    const DType dt = node.input(0)->type.dtype;
    if (!arithmetic_dtype(dt))
      return {false, std::string("set/inc_subtensor on the GPU takes bool, integer, float32 and float64 tensors, not ") +
                         std::string(dtype_name(dt))};
    return {true, ""};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = graph::op_as<ops::AdvancedIncSubtensor1>(node.op());
    const int axis = op.axis();
    const bool set = op.set();
    const int dev = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, dev);
    const KernelOptions& options = options_of(plan);
    const std::string what = node.describe();
    const Array& x = inputs[0];
    node.op().infer_shape(node, inputs);  // y must broadcast to the region (shapes only)
    const int arrays = static_cast<int>(inputs.size()) - 2;
    const DeviceIndices di = prepare_flat_indices(where, node, inputs, 2, arrays, axis, x.shape(), dev, options.fmad);
    const Array& idx = di.flat;
    Array& out = outputs[0];
    copy_strided(x, out, dev, stream, what);
    const Shape region = ops::take_shape(x.shape(), di.shape, axis, arrays);
    if (out.size() == 0 || shape_size(region) == 0) return;
    const int axis_end = axis + static_cast<int>(di.shape.size());
    const Array yb = on_device(inputs[1], dev, stream).broadcast_to(region);
    Grouped y = group_axis(yb, axis, axis_end);
    if (y.copied) y.array = contiguous_on_device(yb, dev, stream, what);
    const IncMode mode = inc_mode(set, x.dtype(), options);
    const ScatterLayout s = scatter_layout(mode, x.shape(), axis, arrays, y);
    Array last = device_empty({1}, DType::Int64, dev, stream);  // unused by the atomic path
    if (mode != IncMode::Atomic) {
      last = device_empty({s.n}, DType::Int64, dev, stream);
      check_call(cudaMemsetAsync(last.data(), 0xff, static_cast<size_t>(s.n) * 8, stream), "cudaMemsetAsync",
                 what);  // -1: not indexed
      cudaKernel_t mk = cached_kernel("theon_mark_last", dev, options.fmad, mark_last_source, "theon_mark_last");
      void* lp = last.data();
      const void* ip = idx.data();
      long long m = s.m;
      void* margs[] = {&lp, &ip, &m};
      launch(mk, dim3(grid_for(m, kBlock, dev)), dim3(kBlock), margs, 0, stream, what);
    }
    const std::string kname = scatter_name(mode, x.dtype(), s.wide);
    cudaKernel_t k =
        cached_kernel(kname, dev, options.fmad, [&] { return scatter_source(mode, x.dtype(), s.wide); }, kname);
    void* o = out.data();
    const void* yp = y.array.data();
    const void* ip = idx.data();
    const void* lp = last.data();
    long long m = s.m, n = s.n, inner = s.inner, yso = s.yso, ysm = s.ysm, ysi = s.ysi, total = s.total;
    void* args[] = {&o, &yp, &ip, &lp, &m, &n, &inner, &yso, &ysm, &ysi, &total};
    launch(k, dim3(grid_for(total, kBlock, dev)), dim3(kBlock), args, 0, stream, what);
  }
  std::vector<KernelSource> sources(const Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions& options) const override {
    const auto& op = graph::op_as<ops::AdvancedIncSubtensor1>(node.op());
    const int axis = op.axis();
    const bool set = op.set();
    const Array& x = inputs[0];
    const int k = static_cast<int>(inputs.size()) - 2;
    std::vector<KernelSource> all = k == 1 ? index_sources(inputs[2]) : std::vector<KernelSource>{};
    const Array out = placeholder(x.shape(), x.dtype());
    add_unique(all, copy_sources(x, out));
    const Shape idx = index_shape(node, inputs, 2);
    const Shape region = ops::take_shape(x.shape(), idx, axis, k);
    if (out.size() == 0 || shape_size(region) == 0) return all;
    const Array yb = broadcastable(inputs[1].shape(), region) ? inputs[1].broadcast_to(region)
                                                              : placeholder(region, x.dtype());
    Grouped y = group_axis(yb, axis, axis + static_cast<int>(idx.size()));
    if (y.copied) add_unique(all, copy_sources(yb, placeholder(region, x.dtype())));
    const IncMode mode = inc_mode(set, x.dtype(), options);
    if (mode != IncMode::Atomic) add_unique(all, {mark_last_source()});
    add_unique(all, {scatter_source(mode, x.dtype(), scatter_layout(mode, x.shape(), axis, k, y).wide)});
    return all;
  }
};

// ---- IncSubtensor (basic set/inc) --------------------------------------------------------

// The region of `out` that `spec` selects, built by Subtensor's own perform (so slicing
// follows the CPU exactly); `bounds` are host arrays.
Array region_of(const Apply& node, const ops::IndexSpec& spec, const Array& out, const std::vector<Array>& bounds) {
  ops::Subtensor sub(spec);
  std::vector<Array> ins = {out};
  ins.insert(ins.end(), bounds.begin(), bounds.end());
  std::vector<Array> outs(1);
  sub.perform(node, ins, outs);
  return outs[0];
}

class IncSubtensorKernel final : public CudaKernel {
 public:
  bool host_input(const graph::Apply& node, int input) const override {
    (void)node;
    return input >= 2;  // slice bounds
  }
  std::string name() const override { return "cuda_inc_subtensor"; }
  Support supports(const Apply& node) const override {
    const DType dt = node.input(0)->type.dtype;
    if (!graph::op_as<ops::IncSubtensor>(node.op()).set() && !arithmetic_dtype(dt))
      return {false, std::string("inc_subtensor on the GPU takes bool, integer, float32 and float64 tensors, not ") +
                         std::string(dtype_name(dt))};
    return {true, ""};
  }
  void run(const KernelPlan*, const ExecContext& where, const Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = graph::op_as<ops::IncSubtensor>(node.op());
    const ops::IndexSpec spec = op.spec();
    const bool set = op.set();
    const int dev = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, dev);
    const std::string what = node.describe();
    const std::vector<Array> hin = host_values(where, inputs, 2, node);
    node.op().infer_shape(node, hin);  // bounds in range, y broadcastable to the region
    Array& out = outputs[0];
    copy_strided(inputs[0], out, dev, stream, what);
    const Array region = region_of(node, spec, out, std::vector<Array>(hin.begin() + 2, hin.end()));
    if (region.size() == 0) return;
    if (set) copy_strided(inputs[1], region, dev, stream, what);
    else add_strided(inputs[1], region, dev, stream, what);
  }
  std::vector<KernelSource> sources(const Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    // Bound values are data: symbolic slice bounds are taken as absent, symbolic integer
    // indices as 0 (the layout class, not the sizes, decides the kernel).
    ops::IndexSpec spec = graph::op_as<ops::IncSubtensor>(node.op()).spec();
    for (auto& e : spec) {
      auto fix = [&](ops::IndexEntry::Part& p) {
        if (p.kind != ops::IndexEntry::Kind::Input) return;
        p = e.is_slice ? ops::IndexEntry::Part{} : ops::IndexEntry::Part{ops::IndexEntry::Kind::Const, 0};
      };
      fix(e.start), fix(e.stop), fix(e.step);
    }
    const bool set = graph::op_as<ops::IncSubtensor>(node.op()).set();
    const Array& x = inputs[0];
    const Array out = placeholder(x.shape(), x.dtype());
    std::vector<KernelSource> all = copy_sources(x, out);
    Array region;
    try {
      region = region_of(node, spec, out, {});
    } catch (const Error&) {
      return all;  // an integer index into an empty dim: run() raises before any launch
    }
    // With bounds taken as absent the region may be larger than y: then y's layout is moot.
    const Array y = broadcastable(inputs[1].shape(), region.shape()) ? inputs[1] : placeholder(region.shape(), x.dtype());
    add_unique(all, set ? copy_sources(y, region) : add_sources(y, region));
    return all;
  }
};

}  // namespace

void register_shape_kernels(CudaBackend& b) {
  b.register_kernel(graph::OpKind::DimShuffle, std::make_unique<ViewKernel>());
  b.register_kernel(graph::OpKind::BroadcastTo, std::make_unique<ViewKernel>());
  b.register_kernel(graph::OpKind::Subtensor, std::make_unique<ViewKernel>());
  b.register_kernel(graph::OpKind::Reshape, std::make_unique<ReshapeKernel>());
  b.register_kernel(graph::OpKind::Shape, std::make_unique<ShapeKernel>());
  b.register_kernel(graph::OpKind::Alloc, std::make_unique<AllocKernel>());
  b.register_kernel(graph::OpKind::ARange, std::make_unique<ARangeKernel>());
  b.register_kernel(graph::OpKind::Join, std::make_unique<JoinKernel>());
  b.register_kernel(graph::OpKind::AdvancedSubtensor1, std::make_unique<TakeKernel>());
  b.register_kernel(graph::OpKind::AdvancedIncSubtensor1, std::make_unique<AdvancedIncKernel>());
  b.register_kernel(graph::OpKind::IncSubtensor, std::make_unique<IncSubtensorKernel>());
}

}  // namespace theon::backends::cuda
