// The elementwise loops: one strided, broadcasting loop per (scalar op, dtype), with a plain
// unit-stride inner loop the compiler vectorises. Fused kernels replace these in fast_run.
#include "ops/elemwise.hpp"
#include "ops/scalar/scalar_ops.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

#include <tuple>
#include <utility>

namespace theon::ops {
namespace {

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
  detail::visit_dtype(ins[0].dtype(), [&]<class From>() {
    detail::visit_dtype(out.dtype(), [&]<class To>() {
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

}  // namespace theon::ops
