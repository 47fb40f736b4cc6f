// tensor:: pooling (theon/pool.hpp) over the Pool op family (src/ops/pool.hpp).
#include <theon/pool.hpp>

#include "api/need_var.hpp"

#include "ops/pool.hpp"

namespace theon::tensor {

using detail::need;

namespace {

ops::PoolParams params(int nd, const graph::VarPtr& x, const std::vector<int64_t>& ws, bool ignore_border,
                       const std::vector<int64_t>& stride, const std::vector<int64_t>& pad, const std::string& mode,
                       const std::string& name) {
  ops::PoolParams p;
  p.nd = nd;
  p.ws = ws;
  p.stride = stride;
  p.pad = pad;
  p.ignore_border = ignore_border;
  p.mode = ops::parse_pool_mode(mode, name + "(" + x->label() + ")");
  return ops::checked_pool_params(x, p);
}

Var pool_nd(int nd, const Var& input, const std::vector<int64_t>& ws, bool ignore_border,
            const std::vector<int64_t>& stride, const std::vector<int64_t>& pad, const std::string& mode) {
  const std::string name = "pool_" + std::to_string(nd) + "d";
  const graph::VarPtr x = need(input, name.c_str());
  return Var(ops::pool(x, params(nd, x, ws, ignore_border, stride, pad, mode, name)));
}

void check_nd(const std::vector<int64_t>& ws, const char* what) {
  if (ws.size() != 2 && ws.size() != 3)
    throw ValueError(std::string(what) + ": ws must have 2 or 3 entries (the pooled dims), got " +
                     std::to_string(ws.size()));
}

}  // namespace

Var pool_2d(const Var& input, const std::vector<int64_t>& ws, bool ignore_border, const std::vector<int64_t>& stride,
            const std::vector<int64_t>& pad, const std::string& mode) {
  return pool_nd(2, input, ws, ignore_border, stride, pad, mode);
}

Var pool_3d(const Var& input, const std::vector<int64_t>& ws, bool ignore_border, const std::vector<int64_t>& stride,
            const std::vector<int64_t>& pad, const std::string& mode) {
  return pool_nd(3, input, ws, ignore_border, stride, pad, mode);
}

Var max_pool_2d_same_size(const Var& input, const std::vector<int64_t>& patch_size) {
  const graph::VarPtr x = need(input, "max_pool_2d_same_size");
  ops::PoolParams p;
  p.nd = 2;
  p.ws = patch_size;
  const graph::VarPtr z = ops::pool(x, p);
  const auto& params = dynamic_cast<const ops::Pool&>(z->owner->op()).params();  // stride and pad filled in
  return Var(ops::max_pool_grad(x, z, z, params));
}

Var max_pool_grad(const Var& x_in, const Var& maxout, const Var& gz, const std::vector<int64_t>& ws,
                  bool ignore_border, const std::vector<int64_t>& stride, const std::vector<int64_t>& pad) {
  check_nd(ws, "MaxPoolGrad");
  const graph::VarPtr x = need(x_in, "MaxPoolGrad");
  const int nd = static_cast<int>(ws.size());
  return Var(ops::max_pool_grad(x, need(maxout, "MaxPoolGrad"), need(gz, "MaxPoolGrad"),
                                params(nd, x, ws, ignore_border, stride, pad, "max", "MaxPoolGrad")));
}

Var average_pool_grad(const Var& x_in, const Var& gz, const std::vector<int64_t>& ws, bool ignore_border,
                      const std::vector<int64_t>& stride, const std::vector<int64_t>& pad, const std::string& mode) {
  check_nd(ws, "AveragePoolGrad");
  const graph::VarPtr x = need(x_in, "AveragePoolGrad");
  const int nd = static_cast<int>(ws.size());
  const ops::PoolParams p = params(nd, x, ws, ignore_border, stride, pad, mode, "AveragePoolGrad");
  if (p.mode == pool::kMax) throw ValueError("AveragePoolGrad: mode must be 'sum', 'average_inc_pad' or 'average_exc_pad'");
  return Var(ops::average_pool_grad(x, need(gz, "AveragePoolGrad"), p));
}

}  // namespace theon::tensor
