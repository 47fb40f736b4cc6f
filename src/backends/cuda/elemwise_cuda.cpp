// Elementwise kernels on the GPU: Elemwise nodes and fused Composite regions, one NVRTC
// kernel per (scalar program, dtypes, layout class), never per size. Both compile the
// scalar functors of scalar_ops.hpp, so GPU, CPU, fused and unfused results agree.
//
// Layout classes (chosen per call from strides, so one compiled kernel serves all sizes):
//   flat: every input is contiguous with the output's shape or a broadcast scalar; the
//         kernel walks a flat index, in chunks of 16 bytes per operand when every pointer
//         is aligned (vector loads and stores; a run-time flag, so one kernel serves both),
//         with a scalar tail;
//   strided: the general case after collapsing dims: any rank <= 8 (a run-time argument),
//         each input with its own (broadcast) strides.
// So a scalar program has at most two kernels, which keeps JIT time and the CI sweep small.
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"

#include "backends/scalar_program_render.hpp"
#include "ops/composite.hpp"
#include "ops/elemwise.hpp"
#include "util/strided.hpp"

#include "ops/float16.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <sstream>

namespace theon::backends::cuda {
namespace {

// float16 is storage (theon::half): loaded and stored as it is, converted only by Cast
// instructions (ops::handles_float16); everything else computes in float32.
bool supported_dtype(DType t) { return t != DType::BFloat16; }

// A scalar program (backends/scalar_program_render.hpp): Elemwise is a one-instruction
// program, Composite its own.
struct Program : ScalarProgram {
  std::string key;  // identifies the program in kernel signatures
};

Program program_of(const graph::Apply& node) {
  Program p;
  if (auto* c = graph::op_if<ops::Composite>(node.op())) {
    p.input_dtypes = c->input_dtypes();
    p.instrs = c->program();
    p.outputs = c->outputs();
  } else if (auto* e = graph::op_if<ops::Elemwise>(node.op())) {
    std::vector<int> args;
    for (int i = 0; i < static_cast<int>(node.inputs().size()); ++i) {
      p.input_dtypes.push_back(node.input(i)->type.dtype);
      args.push_back(i);
    }
    p.instrs.push_back({e->scalar(), e->out_dtype(), args});
    p.outputs = {static_cast<int>(node.inputs().size())};
  } else {
    throw InternalError(node.describe() + ": not an elementwise node");
  }
  std::ostringstream k;
  for (DType t : p.input_dtypes) k << dtype_tag(t) << ",";
  k << "|";
  for (auto& in : p.instrs) {
    k << static_cast<int>(in.op) << ":" << dtype_tag(in.dtype) << "(";
    for (int a : in.args) k << a << ",";
    k << ")";
  }
  k << "|";
  for (int o : p.outputs) k << o << ",";
  p.key = k.str();
  return p;
}

// Which value ids the selected outputs need (inputs included).
std::vector<bool> needed_values(const Program& p, const std::vector<int>& outs) { return p.needed(outs); }

enum class InputClass : char { Flat = 'c', Scalar = 's', Strided = 'g', Unused = 'u' };

// How one launch reads its operands.
struct Layout {
  bool flat = false;
  bool vector = false;  // flat, and every pointer aligned to its chunk
  int rank = 1;
  DeviceShape shape;
  std::vector<DeviceStrides> strides;  // per input
  std::vector<InputClass> classes;     // per input
  int64_t n = 0;
};

int chunk_elems(const Program& p, const std::vector<bool>& need, const std::vector<int>& outs) {
  size_t widest = 1;
  for (size_t i = 0; i < p.input_dtypes.size(); ++i)
    if (need[i]) widest = std::max(widest, itemsize(p.input_dtypes[i]));
  for (int o : outs) widest = std::max(widest, itemsize(p.value_dtype(p.outputs[o])));
  return static_cast<int>(16 / widest);
}

Layout layout_for(const Program& p, const std::vector<bool>& need, const std::vector<int>& outs,
                  const std::vector<Array>& inputs, const Shape& out_shape, const std::vector<const void*>& pointers) {
  Layout l;
  l.n = shape_size(out_shape);
  const size_t ni = inputs.size();
  Shape shape = out_shape;
  std::vector<Strides> st;
  st.push_back(contiguous_strides(out_shape));
  for (size_t i = 0; i < ni; ++i)
    st.push_back(need[i] ? detail::broadcast_strides(inputs[i], out_shape) : Strides(out_shape.size(), 0));
  // Flat: each needed input either matches the output's contiguous layout or is a scalar.
  bool flat = true;
  l.classes.assign(ni, InputClass::Unused);
  for (size_t i = 0; i < ni; ++i) {
    if (!need[i]) continue;
    const bool scalar = std::all_of(st[i + 1].begin(), st[i + 1].end(), [](int64_t s) { return s == 0; });
    bool same = true;
    for (size_t d = 0; d < out_shape.size(); ++d) same = same && (out_shape[d] == 1 || st[i + 1][d] == st[0][d]);
    if (scalar) l.classes[i] = InputClass::Scalar;
    else if (same) l.classes[i] = InputClass::Flat;
    else flat = false;
  }
  l.strides.assign(ni, DeviceStrides{});
  if (flat) {
    l.flat = true;
    l.rank = 1;
    const int e = chunk_elems(p, need, outs);
    l.vector = e > 1;
    for (size_t k = 0; k < pointers.size(); ++k) {
      // Scalars are read once; every streamed operand must be aligned to its chunk.
      if (k < ni && l.classes[k] != InputClass::Flat) continue;
      const size_t item = k < ni ? itemsize(p.input_dtypes[k]) : itemsize(p.value_dtype(p.outputs[outs[k - ni]]));
      if (reinterpret_cast<uintptr_t>(pointers[k]) % (item * e) != 0) l.vector = false;
    }
    return l;
  }
  for (size_t i = 0; i < ni; ++i)
    if (need[i]) l.classes[i] = InputClass::Strided;
  detail::collapse_dims(shape, st);
  if (static_cast<int>(shape.size()) > kMaxRank)
    throw NotImplementedError("CUDA elementwise kernels handle rank <= 8 after collapsing dims, got " +
                              shape_str(out_shape));
  l.rank = static_cast<int>(shape.size());
  for (int d = 0; d < l.rank; ++d) l.shape.d[d] = shape[d];
  for (size_t i = 0; i < ni; ++i)
    for (int d = 0; d < l.rank; ++d) l.strides[i].s[d] = st[i + 1][d];
  return l;
}

std::string signature(const Program& p, const std::vector<int>& outs, const Layout& l) {
  std::string s = p.key + "|outs:";
  for (int o : outs) s += std::to_string(o) + ",";
  s += l.flat ? "|flat|" : "|strided|";
  for (auto c : l.classes) s += static_cast<char>(c);
  return s;
}

// The kernel's text. Parameters: n, shape, then outputs, then per needed input its pointer
// (and strides when strided).
KernelSource generate(const Program& p, const std::vector<int>& outs, const Layout& l, const std::string& name) {
  const int ni = static_cast<int>(p.input_dtypes.size());
  const std::vector<bool> need = needed_values(p, outs);
  std::ostringstream src;
  src << "// Theon elementwise kernel: " << signature(p, outs, l) << "\n"
      << "#include \"theon_device.cuh\"\n#include \"scalar_ops.hpp\"\n"
      << "template <class T, int E> struct alignas(sizeof(T) * E) TheonChunk { T v[E]; };\n"
      << "extern \"C\" __global__ void __launch_bounds__(256) " << name
      << "(long long n, int vec, int rank, TheonShape shape";
  for (size_t k = 0; k < outs.size(); ++k)
    src << ", " << cuda_type(p.value_dtype(p.outputs[outs[k]])) << "* __restrict__ o" << k;
  for (int i = 0; i < ni; ++i) {
    if (!need[i]) continue;
    src << ", const " << cuda_type(p.input_dtypes[i]) << "* __restrict__ p" << i;
    if (l.classes[i] == InputClass::Strided) src << ", TheonStrides s" << i;
  }
  src << ") {\n  using namespace theon::scalar;\n  (void)shape;\n  (void)vec;\n  (void)rank;\n";
  src << "  const long long step = (long long)gridDim.x * blockDim.x;\n"
      << "  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  // Scalars are loaded once per thread.
  for (int i = 0; i < ni; ++i)
    if (need[i] && l.classes[i] == InputClass::Scalar)
      src << "  const " << cuda_type(p.input_dtypes[i]) << " u" << i << " = p" << i << "[0];\n";

  // The body computing every needed value from v<input> names; `load(i)` gives input i.
  auto body = [&](const std::function<std::string(int)>& load, const std::string& indent) {
    return render_values(
        p, need, Dialect::Cuda,
        [&](int i) { return l.classes[i] == InputClass::Scalar ? "u" + std::to_string(i) : load(i); }, indent);
  };

  const int e = chunk_elems(p, need, outs);
  if (l.flat && e > 1) {
    src << "  constexpr int E = " << e << ";\n  const long long chunks = vec ? n / E : 0;\n"
        << "  for (long long c = first; c < chunks; c += step) {\n";
    for (int i = 0; i < ni; ++i)
      if (need[i] && l.classes[i] == InputClass::Flat)
        src << "    const TheonChunk<" << cuda_type(p.input_dtypes[i]) << ", E> c" << i
            << " = reinterpret_cast<const TheonChunk<" << cuda_type(p.input_dtypes[i]) << ", E>*>(p" << i << ")[c];\n";
    for (size_t k = 0; k < outs.size(); ++k)
      src << "    TheonChunk<" << cuda_type(p.value_dtype(p.outputs[outs[k]])) << ", E> r" << k << ";\n";
    src << "#pragma unroll\n    for (int e = 0; e < E; ++e) {\n"
        << body([](int i) { return "c" + std::to_string(i) + ".v[e]"; }, "      ");
    for (size_t k = 0; k < outs.size(); ++k) src << "      r" << k << ".v[e] = v" << p.outputs[outs[k]] << ";\n";
    src << "    }\n";
    for (size_t k = 0; k < outs.size(); ++k)
      src << "    reinterpret_cast<TheonChunk<" << cuda_type(p.value_dtype(p.outputs[outs[k]])) << ", E>*>(o" << k
          << ")[c] = r" << k << ";\n";
    src << "  }\n  for (long long i = chunks * E + first; i < n; i += step) {\n";
  } else {
    src << "  for (long long i = first; i < n; i += step) {\n";
  }
  src << body(
      [&](int i) {
        if (l.classes[i] == InputClass::Flat) return "p" + std::to_string(i) + "[i]";
        return "p" + std::to_string(i) + "[theon_offset_n(i, rank, shape, s" + std::to_string(i) + ")]";
      },
      "    ");
  for (size_t k = 0; k < outs.size(); ++k) src << "    o" << k << "[i] = v" << p.outputs[outs[k]] << ";\n";
  src << "  }\n}\n";
  return {name, src.str(), {name}};
}

// Groups of outputs computed by one launch: outputs of one shape go together.
std::vector<std::vector<int>> output_groups(const std::vector<Shape>& shapes) {
  std::vector<std::vector<int>> groups;
  std::vector<Shape> keys;
  for (size_t o = 0; o < shapes.size(); ++o) {
    auto it = std::find(keys.begin(), keys.end(), shapes[o]);
    if (it == keys.end()) {
      keys.push_back(shapes[o]);
      groups.push_back({static_cast<int>(o)});
    } else {
      groups[static_cast<size_t>(it - keys.begin())].push_back(static_cast<int>(o));
    }
  }
  return groups;
}

std::string kernel_name(const Program& p) {
  const std::string tag = p.instrs.size() == 1 ? std::string(ops::scalar_op_info(p.instrs[0].op).name) : "fused";
  return "theon_ew_" + tag;
}

class ElementwiseKernel final : public CudaKernel {
 public:
  std::string name() const override { return "nvrtc_elementwise"; }

  Support supports(const graph::Apply& node) const override {
    if (ops::touches_float16(node) && !ops::handles_float16(node))
      return {false, node.op().name() + " computes on float16: the float16 pass runs it in float32 between casts"};
    for (auto& in : node.inputs())
      if (!supported_dtype(in->type.dtype))
        return {false, "CUDA elementwise kernels have no " + std::string(dtype_name(in->type.dtype)) + " variant"};
    for (int o = 0; o < node.num_outputs(); ++o)
      if (!supported_dtype(node.output_raw(o)->type.dtype))
        return {false, "CUDA elementwise kernels have no " + std::string(dtype_name(node.output_raw(o)->type.dtype)) +
                           " variant"};
    return {true, "NVRTC elementwise"};
  }

  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    const Program p = program_of(node);
    std::vector<Shape> shapes = node.op().infer_shape(node, inputs);
    std::vector<KernelSource> out;
    for (auto& group : output_groups(shapes)) {
      const auto need = needed_values(p, group);
      // Alignment is a run-time flag: placeholders (null pointers) give the same kernel.
      std::vector<const void*> aligned(inputs.size() + group.size(), nullptr);
      Layout l = layout_for(p, need, group, inputs, shapes[group[0]], aligned);
      out.push_back(generate(p, group, l, kernel_name(p)));
    }
    return out;
  }

  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const int device = device_of(inputs, outputs);
    const bool fmad = options_of(plan).fmad;
    const Program p = program_of(node);
    std::vector<Shape> shapes;
    for (auto& o : outputs) shapes.push_back(o.shape());
    const std::string kname = kernel_name(p);
    for (auto& group : output_groups(shapes)) {
      const auto need = needed_values(p, group);
      std::vector<const void*> ptrs;
      for (auto& a : inputs) ptrs.push_back(a.size() ? a.data() : nullptr);
      for (int o : group) ptrs.push_back(outputs[o].size() ? outputs[o].data() : nullptr);
      Layout l = layout_for(p, need, group, inputs, shapes[group[0]], ptrs);
      if (l.n == 0) continue;
      cudaKernel_t k =
          cached_kernel(signature(p, group, l), device, fmad, [&] { return generate(p, group, l, kname); }, kname);
      // Arguments in the order of generate()'s parameter list.
      long long n = l.n;
      int vec = l.vector ? 1 : 0, rank = l.rank;
      TheonShapeArg shape_arg{};
      for (int d = 0; d < kMaxRank; ++d) shape_arg.d[d] = l.shape.d[d];
      std::vector<void*> out_ptrs, in_ptrs;
      std::vector<DeviceStrides> strides = l.strides;
      for (int o : group) out_ptrs.push_back(outputs[o].data());
      for (auto& a : inputs) in_ptrs.push_back(a.size() ? a.data() : nullptr);
      std::vector<void*> args = {&n, &vec, &rank, &shape_arg};
      for (auto& q : out_ptrs) args.push_back(&q);
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (!need[i]) continue;
        args.push_back(&in_ptrs[i]);
        if (l.classes[i] == InputClass::Strided) args.push_back(&strides[i]);
      }
      const int e = l.vector ? chunk_elems(p, need, group) : 1;
      const unsigned grid = grid_for((n + e - 1) / e, 256, device);
      launch(k, dim3(grid), dim3(256), args.data(), 0, stream_for(where, device), node);
    }
  }

 private:
  struct TheonShapeArg {
    long long d[kMaxRank];
  };
};

}  // namespace

void register_elemwise_kernels(CudaBackend& backend) {
  backend.register_kernel(graph::OpKind::Elemwise, std::make_unique<ElementwiseKernel>());
  backend.register_kernel(graph::OpKind::Composite, std::make_unique<ElementwiseKernel>());
}

}  // namespace theon::backends::cuda
