// Shape, copy and indexing ops on the CPU: the views (DimShuffle, Reshape, BroadcastTo,
// Subtensor, Shape, zero_grad/disconnected_grad), whose semantics is metadata and which the
// ops build themselves (Op::perform), and the loops of Join, Alloc, ARange, take, set/inc (basic and
// integer-array) and Transfer.
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "ops/join.hpp"
#include "ops/scalar/scalar_ops.hpp"
#include "ops/shape.hpp"
#include "ops/subtensor.hpp"
#include "util/device_ops.hpp"
#include "util/dispatch.hpp"

#include <cstring>
#include <type_traits>

namespace theon::backends::cpu {

using graph::Apply;

namespace {

// The op builds its output from metadata (a view of its input, or its shape).
void view(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  node.op().perform(node, inputs, outputs);
}

void join_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const auto& op = graph::op_as<ops::Join>(node.op());
  const int axis_ = op.axis();
  const bool stack_ = op.stack();
  op.infer_shape(node, inputs);
  const Array& out = outputs[0];
  int64_t at = 0;  // position along the axis
  for (const Array& in : inputs) {
    Strides strides = out.strides();
    const int64_t axis_stride = strides[axis_];
    if (stack_) strides.erase(strides.begin() + axis_);
    ops::copy_strided(in, Array(out.buffer(), out.dtype(), in.shape(), strides, out.offset() + at * axis_stride));
    at += stack_ ? 1 : in.shape()[axis_];
  }
}

void alloc_loop(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  ops::copy_strided(inputs[0], outputs[0]);
}

// out[i] = start + i * step in the compute dtype the builder chose (int64 wrapping, or double),
// converted once with the Cast functor (as the CUDA kernel does).
void arange_loop(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  Array& out = outputs[0];
  const int64_t n = out.size();
  const bool exact = inputs[0].dtype() == DType::Int64;
  detail::visit_dtype(out.dtype(), [&]<class T>() {
    T* o = out.data<T>();
    if (exact) {
      const uint64_t start = static_cast<uint64_t>(inputs[0].data<int64_t>()[0]);
      const uint64_t step = static_cast<uint64_t>(inputs[2].data<int64_t>()[0]);
      for (int64_t i = 0; i < n; ++i)
        o[i] = scalar::Cast().convert<T>(static_cast<int64_t>(start + static_cast<uint64_t>(i) * step));
    } else {
      const double start = inputs[0].data<double>()[0], step = inputs[2].data<double>()[0];
      for (int64_t i = 0; i < n; ++i) o[i] = scalar::Cast().convert<T>(start + static_cast<double>(i) * step);
    }
  });
}

// Transfer: a copy between devices issued on the thunk's stream (the destination context's
// compute stream: the executor has ordered it after the source's writer), so a named
// context's copies are ordered with its own kernels, not with the device's own stream.
class TransferKernel final : public Kernel {
 public:
  std::string name() const override { return "reference"; }
  void run(const KernelPlan*, const ExecContext& where, const Apply&, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    detail::copy_array_on(inputs[0], outputs[0], where.stream.handle);
  }
};

// ---- indexing ----

// Splits x's shape around `axis` into (outer, axis size, inner) element counts.
// s seen as (outer, n, inner) around dims axis..axis+k-1.
void around_axes(const Shape& s, int axis, int k, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = 1, n = 1, inner = 1;
  for (int d = 0; d < static_cast<int>(s.size()); ++d) {
    if (d < axis) outer *= s[d];
    else if (d < axis + k) n *= s[d];
    else inner *= s[d];
  }
}

void inc_subtensor_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const auto& op = graph::op_as<ops::IncSubtensor>(node.op());
  op.infer_shape(node, inputs);
  ops::copy_strided(inputs[0], outputs[0]);
  // The region of the output that the spec selects, built by Subtensor's view construction
  // (so slicing is Subtensor's exactly); inputs 2.. are the bounds.
  const ops::Subtensor sub(op.spec());
  std::vector<Array> ins = {outputs[0]};
  ins.insert(ins.end(), inputs.begin() + 2, inputs.end());
  std::vector<Array> region(1);
  sub.perform(node, ins, region);
  if (op.set()) ops::copy_strided(inputs[1], region[0]);
  else ops::add_strided(inputs[1], region[0]);
}

void take_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const int axis_ = graph::op_as<ops::AdvancedSubtensor1>(node.op()).axis();
  const int k = static_cast<int>(inputs.size()) - 1;
  const Array x = inputs[0].contiguous();
  const std::vector<int64_t> idx = ops::checked_flat_indices(node, inputs, 1, k, axis_, x.shape()).flat;
  int64_t outer, n, inner;
  around_axes(x.shape(), axis_, k, outer, n, inner);
  const int64_t m = static_cast<int64_t>(idx.size());
  if (outputs[0].size() == 0) return;
  const size_t row = static_cast<size_t>(inner) * itemsize(x.dtype());
  const char* src = static_cast<const char*>(x.data());
  char* dst = static_cast<char*>(outputs[0].data());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < m; ++j) std::memcpy(dst + (o * m + j) * row, src + (o * n + idx[j]) * row, row);
}

void advanced_inc_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const auto& op = graph::op_as<ops::AdvancedIncSubtensor1>(node.op());
  const int axis_ = op.axis();
  const bool set_ = op.set();
  const Array& x = inputs[0];
  const int k = static_cast<int>(inputs.size()) - 2;
  const ops::FlatIndices fi = ops::checked_flat_indices(node, inputs, 2, k, axis_, x.shape());
  const std::vector<int64_t>& idx = fi.flat;
  const Shape region = ops::take_shape(x.shape(), fi.shape, axis_, k);
  ops::check_assignable(node, inputs[1].shape(), region);
  Array out = outputs[0];
  ops::copy_strided(x, out);
  if (out.size() == 0 || shape_size(region) == 0) return;
  const Array y = inputs[1].broadcast_to(region).copy();  // contiguous, one value per written element
  int64_t outer, n, inner;
  around_axes(x.shape(), axis_, k, outer, n, inner);
  const int64_t m = static_cast<int64_t>(idx.size());
  detail::visit_dtype(x.dtype(), [&]<class T>() {
    T* o = out.data<T>();
    const T* v = y.data<T>();
    // Sequential, so repeated indices accumulate (inc) or the last wins (set), as NumPy.
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t j = 0; j < m; ++j) {
        T* dst = o + (a * n + idx[j]) * inner;
        const T* src = v + (a * m + j) * inner;
        for (int64_t k = 0; k < inner; ++k) {
          if (set_) dst[k] = src[k];
          else if constexpr (std::is_same_v<T, bool>) dst[k] = dst[k] || src[k];
          else if constexpr (std::is_integral_v<T>)
            dst[k] = static_cast<T>(static_cast<uint64_t>(dst[k]) + static_cast<uint64_t>(src[k]));
          else dst[k] += src[k];
        }
      }
  });
}

}  // namespace

void register_shape_loops(CpuBackend& backend) {
  using K = graph::OpKind;
  for (K k : {K::DimShuffle, K::Reshape, K::BroadcastTo, K::Subtensor, K::Shape, K::ZeroGrad, K::DisconnectedGrad,
              K::GradClip, K::GradScale})
    register_loop(backend, k, view);
  register_loop(backend, K::Join, join_loop);
  register_loop(backend, K::Alloc, alloc_loop);
  register_loop(backend, K::ARange, arange_loop);
  backend.register_kernel(K::Transfer, std::make_unique<TransferKernel>());
  register_loop(backend, K::IncSubtensor, inc_subtensor_loop);
  register_loop(backend, K::AdvancedSubtensor1, take_loop);
  register_loop(backend, K::AdvancedIncSubtensor1, advanced_inc_loop);
}

}  // namespace theon::backends::cpu
