// Elementwise loops: Elemwise (one strided, broadcasting loop per scalar op and dtype, with a
// plain unit-stride inner loop the compiler vectorises; a lone float32 exp, log, expm1, log1p,
// tanh, sin or cos into a contiguous output takes the vector loop, elemwise_vector.hpp) and the
// Composite block interpreter
// (the scalar functors of ops/scalar/scalar_ops.hpp over blocks of 1024 elements). In fast_run
// the fused kernels (fused_cpu.cpp) replace both; they fall back to the interpreter.
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/elemwise_vector.hpp"
#include "ops/composite.hpp"
#include "ops/elemwise.hpp"
#include "ops/scalar/scalar_ops.hpp"
#include "ops/shape.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>

namespace theon::backends::cpu {

using graph::Apply;
using ops::Composite;
using ops::CompositeInstr;
using ops::ScalarKind;
using ops::ScalarOpId;
using ops::scalar_op_info;

namespace {

// ---- Elemwise ----------------------------------------------------------------------------


template <class O, class... I, class F, size_t... Idx>
void strided_apply(F f, Array& out, const std::vector<Array>& ins, std::index_sequence<Idx...>) {
  if (out.size() == 0) return;
  Shape shape = out.shape();
  std::vector<Strides> st;
  st.push_back(out.strides());
  (st.push_back(detail::broadcast_strides(ins[Idx], shape)), ...);
  detail::collapse_dims(shape, st);
  if (shape.empty()) {  // 0-d
    shape = {1};
    for (auto& s : st) s = {0};
  }
  std::vector<const Strides*> sp;
  for (auto& s : st) sp.push_back(&s);
  detail::OuterLoop loop(shape, sp, std::vector<int64_t>(st.size(), 0));
  O* obase = out.data<O>();
  std::tuple<const I*...> bases{ins[Idx].template data<I>()...};
  const int64_t n = shape.back(), os = st[0].back();
  const int64_t is[] = {st[Idx + 1].back()...};
  const bool unit = os == 1 && ((is[Idx] == 1) && ...);
  for (int64_t r = 0; r < loop.count(); ++r, loop.next()) {
    O* o = obase + loop.offsets()[0];
    std::tuple<const I*...> p{(std::get<Idx>(bases) + loop.offsets()[Idx + 1])...};
    if (unit) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(std::get<Idx>(p)[i]...);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * os] = f(std::get<Idx>(p)[i * is[Idx]]...);
    }
  }
}

template <class T, size_t> using Same = T;

template <class O, class T, size_t N, class F>
void apply_uniform(F f, Array& out, const std::vector<Array>& ins) {
  [&]<size_t... Idx>(std::index_sequence<Idx...> seq) {
    strided_apply<O, Same<T, Idx>...>(f, out, ins, seq);
  }(std::make_index_sequence<N>{});
}

template <class F> constexpr bool keeps_bool() {
  return std::is_same_v<F, scalar::Identity> || std::is_same_v<F, scalar::Add> || std::is_same_v<F, scalar::Mul> ||
         std::is_same_v<F, scalar::Maximum> || std::is_same_v<F, scalar::Minimum> || std::is_same_v<F, scalar::Clip>;
}

[[noreturn]] void bad_dtype(std::string_view op, DType t) {
  throw InternalError("elemwise kernel " + std::string(op) + " has no " + std::string(dtype_name(t)) + " variant");
}

template <class F, int N>
void run_Arith(std::string_view name, const std::vector<Array>& ins, Array& out) {
  detail::visit_dtype(out.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool> || keeps_bool<F>()) apply_uniform<T, T, N>(F{}, out, ins);
    else bad_dtype(name, out.dtype());
  });
}

template <class F, int N>
void run_FloatFn(std::string_view name, const std::vector<Array>& ins, Array& out) {
  detail::visit_dtype(out.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) apply_uniform<T, T, N>(F{}, out, ins);
    else bad_dtype(name, out.dtype());
  });
}

template <class F, int N>
void run_Compare(std::string_view, const std::vector<Array>& ins, Array& out) {
  detail::visit_dtype(ins[0].dtype(), [&]<class T>() { apply_uniform<bool, T, N>(F{}, out, ins); });
}

template <class F, int N>
void run_Logic(std::string_view name, const std::vector<Array>& ins, Array& out) {
  detail::visit_dtype(out.dtype(), [&]<class T>() {
    if constexpr (!std::is_floating_point_v<T>) apply_uniform<T, T, N>(F{}, out, ins);
    else bad_dtype(name, out.dtype());
  });
}

template <class F, int N>
void run_Select(std::string_view, const std::vector<Array>& ins, Array& out) {
  detail::visit_dtype(out.dtype(), [&]<class T>() {
    strided_apply<T, bool, T, T>(F{}, out, ins, std::make_index_sequence<3>{});
  });
}

template <class F, int N>
void run_Cast(std::string_view, const std::vector<Array>& ins, Array& out) {
  detail::visit_storage_dtype(ins[0].dtype(), [&]<class From>() {  // float16 only moves through casts
    detail::visit_storage_dtype(out.dtype(), [&]<class To>() {
      strided_apply<To, From>([](From a) { return scalar::Cast().convert<To>(a); }, out, ins,
                              std::make_index_sequence<1>{});
    });
  });
}

}  // namespace

void run_elemwise(ScalarOpId id, const std::vector<Array>& inputs, Array& out) {
  switch (id) {
#define THEON_SCALAR_OP(functor, name, arity, kind)           \
  case ScalarOpId::functor:                                   \
    run_##kind<scalar::functor, arity>(name, inputs, out);    \
    return;
#include <theon/scalar_ops.def>
#undef THEON_SCALAR_OP
    case ScalarOpId::Count: break;
  }
  throw InternalError("run_elemwise: bad scalar op id");
}

namespace {

// ---- the block interpreter ---------------------------------------------------------------
constexpr int64_t kBlock = 1024;

template <class O, class... A, class F, size_t... I>
void block_apply(F f, void* out, void* const* args, int64_t n, std::index_sequence<I...>) {
  O* o = static_cast<O*>(out);
  std::tuple<const A*...> p{static_cast<const A*>(args[I])...};
  for (int64_t i = 0; i < n; ++i) o[i] = f(std::get<I>(p)[i]...);
}

template <class O, class T, int N, class F>
void block_uniform(F f, void* out, void* const* args, int64_t n) {
  [&]<size_t... I>(std::index_sequence<I...> seq) { block_apply<O, Same<T, I>...>(f, out, args, n, seq); }(
      std::make_index_sequence<N>{});
}

[[noreturn]] void bad(std::string_view op, DType t) {
  throw InternalError("Composite: scalar op " + std::string(op) + " has no " + std::string(dtype_name(t)) + " variant");
}

struct BlockArgs {
  DType out;
  DType arg;  // dtype of the first value argument (Compare, Cast) / condition excluded
  void* o;
  void* const* a;
  int64_t n;
};

template <class F, int N> void exec_Arith(std::string_view name, const BlockArgs& b) {
  detail::visit_dtype(b.out, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool> || keeps_bool<F>()) block_uniform<T, T, N>(F{}, b.o, b.a, b.n);
    else bad(name, b.out);
  });
}
template <class F, int N> void exec_FloatFn(std::string_view name, const BlockArgs& b) {
  detail::visit_dtype(b.out, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) block_uniform<T, T, N>(F{}, b.o, b.a, b.n);
    else bad(name, b.out);
  });
}
template <class F, int N> void exec_Compare(std::string_view, const BlockArgs& b) {
  detail::visit_dtype(b.arg, [&]<class T>() { block_uniform<bool, T, N>(F{}, b.o, b.a, b.n); });
}
template <class F, int N> void exec_Logic(std::string_view name, const BlockArgs& b) {
  detail::visit_dtype(b.out, [&]<class T>() {
    if constexpr (!std::is_floating_point_v<T>) block_uniform<T, T, N>(F{}, b.o, b.a, b.n);
    else bad(name, b.out);
  });
}
template <class F, int N> void exec_Select(std::string_view, const BlockArgs& b) {
  detail::visit_dtype(b.out, [&]<class T>() {
    block_apply<T, bool, T, T>(F{}, b.o, b.a, b.n, std::make_index_sequence<3>{});
  });
}
template <class F, int N> void exec_Cast(std::string_view, const BlockArgs& b) {
  detail::visit_storage_dtype(b.arg, [&]<class From>() {
    detail::visit_storage_dtype(b.out, [&]<class To>() {
      block_apply<To, From>([](From x) { return scalar::Cast().convert<To>(x); }, b.o, b.a, b.n,
                            std::make_index_sequence<1>{});
    });
  });
}

void exec_instr(ScalarOpId id, const BlockArgs& b) {
  // The float32 transcendentals with a vector loop take it here too, so that a Composite
  // interpreted and the same ops as lone Elemwise nodes give the same bits.
  if (b.out == DType::Float32 && b.arg == DType::Float32 &&
      vector_unary_f32(id, static_cast<const float*>(b.a[0]), static_cast<float*>(b.o), b.n))
    return;
  switch (id) {
#define THEON_SCALAR_OP(functor, name, arity, kind) \
  case ScalarOpId::functor:                         \
    exec_##kind<scalar::functor, arity>(name, b);   \
    return;
#include <theon/scalar_ops.def>
#undef THEON_SCALAR_OP
    case ScalarOpId::Count: break;
  }
  throw InternalError("Composite: bad scalar op id");
}

// Runs the instructions in `needed` over shape `shape` for the outputs `outs` (indices into
// op.outputs()), reading the inputs marked in `in_needed`.
void run_region(const Composite& op, const Shape& shape, const std::vector<bool>& needed,
                const std::vector<bool>& in_needed, const std::vector<Array>& inputs, std::vector<Array>& outputs,
                const std::vector<int>& outs) {
  const int ni = op.num_inputs();
  const auto& prog = op.program();
  if (shape_size(shape) == 0) return;
  std::vector<int> ops_in;  // operand order: outputs, then the needed inputs
  std::vector<Strides> st;
  for (int o : outs) st.push_back(outputs[o].strides());
  for (int k = 0; k < ni; ++k)
    if (in_needed[k]) {
      ops_in.push_back(k);
      st.push_back(detail::broadcast_strides(inputs[k], shape));
    }
  Shape cs = shape;
  detail::collapse_dims(cs, st);
  std::vector<const Strides*> sp;
  for (auto& s : st) sp.push_back(&s);
  detail::OuterLoop loop(cs, sp, std::vector<int64_t>(st.size(), 0));
  const int64_t n = cs.back();
  const int nvalues = ni + static_cast<int>(prog.size());
  std::vector<uint64_t> scratch(static_cast<size_t>(nvalues) * kBlock);  // 8-byte aligned, 8 bytes per element
  auto slot = [&](int v) { return static_cast<void*>(scratch.data() + static_cast<size_t>(v) * kBlock); };
  std::vector<void*> args;
  const size_t nouts = outs.size();
  for (int64_t r = 0; r < loop.count(); ++r, loop.next()) {
    for (int64_t start = 0; start < n; start += kBlock) {
      const int64_t len = std::min(kBlock, n - start);
      for (size_t j = 0; j < ops_in.size(); ++j) {  // gather
        const Array& a = inputs[ops_in[j]];
        const int64_t s = st[nouts + j].back();
        const int64_t off = loop.offsets()[nouts + j] + start * s;
        detail::visit_storage_dtype(a.dtype(), [&]<class T>() {
          const T* src = a.data<T>() + off;
          T* dst = static_cast<T*>(slot(ops_in[j]));
          if (s == 1) std::memcpy(dst, src, sizeof(T) * len);
          else for (int64_t i = 0; i < len; ++i) dst[i] = src[i * s];
        });
      }
      for (size_t k = 0; k < prog.size(); ++k) {
        if (!needed[k]) continue;
        const CompositeInstr& in = prog[k];
        args.clear();
        for (int v : in.args) args.push_back(slot(v));
        const bool select = scalar_op_info(in.op).kind == ScalarKind::Select;
        BlockArgs b{in.dtype, op.value_dtype(in.args[select ? 1 : 0]), slot(ni + static_cast<int>(k)), args.data(), len};
        exec_instr(in.op, b);
      }
      for (size_t j = 0; j < nouts; ++j) {  // scatter
        Array& a = outputs[outs[j]];
        const int64_t s = st[j].back();
        const int64_t off = loop.offsets()[j] + start * s;
        detail::visit_storage_dtype(a.dtype(), [&]<class T>() {
          T* dst = a.data<T>() + off;
          const T* src = static_cast<const T*>(slot(op.outputs()[outs[j]]));
          if (s == 1) std::memcpy(dst, src, sizeof(T) * len);
          else for (int64_t i = 0; i < len; ++i) dst[i * s] = src[i];
        });
      }
    }
  }
}

}  // namespace

void run_composite(const Composite& op, const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const int ni = op.num_inputs();
  const auto& prog = op.program();
  std::vector<bool> done(outputs.size(), false);
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (done[o]) continue;
    // Every output of this shape runs in one pass; outputs of a smaller shape (an
    // intermediate that was broadcast later) run in a pass of their own.
    std::vector<int> group;
    for (size_t p = o; p < outputs.size(); ++p)
      if (!done[p] && outputs[p].shape() == outputs[o].shape()) {
        group.push_back(static_cast<int>(p));
        done[p] = true;
      }
    std::vector<bool> live(ni + prog.size(), false);
    for (int g : group) live[op.outputs()[g]] = true;
    for (int k = static_cast<int>(prog.size()) - 1; k >= 0; --k)
      if (live[ni + k])
        for (int a : prog[k].args) live[a] = true;
    std::vector<bool> needed(prog.size()), in_needed(ni);
    for (size_t k = 0; k < prog.size(); ++k) needed[k] = live[ni + k];
    for (int k = 0; k < ni; ++k) in_needed[k] = live[k];
    run_region(op, outputs[o].shape(), needed, in_needed, inputs, outputs, group);
  }
}

namespace {

// A lone float32 transcendental into a contiguous output takes the vector loop
// (elemwise_vector.hpp); everything else the scalar loops. A strided or broadcast operand is
// first copied into the output, and the loop then runs in place there: the copy costs a
// fraction of the function, where the scalar loop calls libm once per element (and would give
// other bits than the same op on a contiguous operand).
bool run_vector(ScalarOpId id, const std::vector<Array>& inputs, Array& out) {
  if (inputs.size() != 1 || out.dtype() != DType::Float32 || inputs[0].dtype() != DType::Float32) return false;
  if (!out.is_contiguous() || !has_vector_unary_f32(id)) return false;
  const Array& x = inputs[0];
  float* o = static_cast<float*>(out.data());
  if (x.shape() == out.shape() && x.is_contiguous())
    return vector_unary_f32(id, static_cast<const float*>(x.data()), o, out.size());
  // In place on a strided view the output is that view (not contiguous, handled above); a
  // fresh output shares no memory with its operand, which the copy needs.
  if (x.buffer() == out.buffer()) return false;
  ops::copy_strided(x, out);
  return vector_unary_f32(id, o, o, out.size());
}

void elemwise_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const ScalarOpId id = graph::op_as<ops::Elemwise>(node.op()).scalar();
  if (run_vector(id, inputs, outputs[0])) return;
  run_elemwise(id, inputs, outputs[0]);
}

void composite_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  run_composite(graph::op_as<Composite>(node.op()), node, inputs, outputs);
}

}  // namespace

void register_elemwise_loops(CpuBackend& backend) {
  register_loop(backend, graph::OpKind::Elemwise, elemwise_loop);
  register_loop(backend, graph::OpKind::Composite, composite_loop);
}

}  // namespace theon::backends::cpu
