// Pooling on the CPU: Pool, MaxPoolGrad, AveragePoolGrad and DownsampleFactorMaxGradGrad
// (ops/pool.hpp). Each output element is a function of ops/scalar/pool_ops.hpp, the one the
// CUDA kernels paste, so both backends agree exactly. The planes (the leading dims' elements)
// are shared among threads; inputs may have any strides, outputs arrive contiguous.
//
// oneDNN's pooling primitives are not used: its max-pool gradient sends each window's
// gradient to one element (its workspace index) where Theano's sends it to every element equal
// to the maximum, and it has no average_inc_pad clipped at a partial window (ignore_border
// false); these loops keep Theano's semantics for every dtype and layout.
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "ops/pool.hpp"
#include "util/dispatch.hpp"

#include <theon/error.hpp>

#include <type_traits>

namespace theon::backends::cpu {

using graph::Apply;

namespace {

// Runs fn(plane, i0, i1, i2, out_index) over every element of an output of `planes` planes of
// e[0] x e[1] x e[2] elements, planes split among threads.
template <class Fn>
void for_each_element(int64_t planes, const long long* e, Fn&& fn) {
  const int64_t per_plane = e[0] * e[1] * e[2];
  const int threads = planes > 1 ? parallel_threads(planes * per_plane) : 1;  // parallel.hpp
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
#endif
  for (int64_t p = 0; p < planes; ++p) {
    int64_t o = p * per_plane;
    for (long long a = 0; a < e[0]; ++a)
      for (long long b = 0; b < e[1]; ++b)
        for (long long c = 0; c < e[2]; ++c) fn(p, a, b, c, o++);
  }
}

void pool_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const auto& op = dynamic_cast<const ops::Pool&>(node.op());
  const ops::PoolParams& pp = op.params();
  const Array& x = inputs[0];
  const pool::Geometry g = ops::pool_geometry(x.shape(), pp);
  if (outputs[0].size() == 0) return;
  detail::visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const pool::Strides xs = ops::pool_strides(x, pp);
      const T* px = x.data<T>();
      T* out = outputs[0].data<T>();
      switch (op.kind()) {
        case graph::OpKind::Pool:
          for_each_element(g.planes, g.out, [&](int64_t p, long long a, long long b, long long c, int64_t o) {
            out[o] = pool::pool_value<T>(g, px + pool::plane_offset(g, xs, p), xs.sp, a, b, c);
          });
          break;
        case graph::OpKind::MaxPoolGrad: {
          const pool::Strides zs = ops::pool_strides(inputs[1], pp), gs = ops::pool_strides(inputs[2], pp);
          const T *pz = inputs[1].data<T>(), *pg = inputs[2].data<T>();
          for_each_element(g.planes, g.n, [&](int64_t p, long long a, long long b, long long c, int64_t o) {
            out[o] = pool::max_pool_grad_value<T>(g, px + pool::plane_offset(g, xs, p), xs.sp,
                                                  pz + pool::plane_offset(g, zs, p), zs.sp,
                                                  pg + pool::plane_offset(g, gs, p), gs.sp, a, b, c);
          });
          break;
        }
        case graph::OpKind::AveragePoolGrad: {
          const pool::Strides gs = ops::pool_strides(inputs[1], pp);
          const T* pg = inputs[1].data<T>();
          for_each_element(g.planes, g.n, [&](int64_t p, long long a, long long b, long long c, int64_t o) {
            out[o] = pool::average_pool_grad_value<T>(g, pg + pool::plane_offset(g, gs, p), gs.sp, a, b, c);
          });
          break;
        }
        case graph::OpKind::DownsampleFactorMaxGradGrad: {
          const pool::Strides zs = ops::pool_strides(inputs[1], pp), gs = ops::pool_strides(inputs[2], pp);
          const T *pz = inputs[1].data<T>(), *pg = inputs[2].data<T>();
          for_each_element(g.planes, g.out, [&](int64_t p, long long a, long long b, long long c, int64_t o) {
            out[o] = pool::max_pool_grad_grad_value<T>(g, px + pool::plane_offset(g, xs, p), xs.sp,
                                                       pz + pool::plane_offset(g, zs, p), zs.sp,
                                                       pg + pool::plane_offset(g, gs, p), gs.sp, a, b, c);
          });
          break;
        }
        default: throw InternalError(node.describe() + ": not a pooling op");
      }
    } else {
      throw InternalError(node.describe() + ": non-float input " + std::string(dtype_name(x.dtype())));
    }
  });
}

}  // namespace

void register_pool_loops(CpuBackend& backend) {
  for (auto k : {graph::OpKind::Pool, graph::OpKind::MaxPoolGrad, graph::OpKind::AveragePoolGrad,
                 graph::OpKind::DownsampleFactorMaxGradGrad})
    register_loop(backend, k, pool_loop);
}

}  // namespace theon::backends::cpu
