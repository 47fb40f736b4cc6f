// tensor:: pooling (theon/pool.hpp) over the Pool op family (src/ops/pool.hpp).
#include <theon/pool.hpp>

#include "api/need_var.hpp"

#include "ops/pool.hpp"

namespace theon::tensor {

using detail::need;

namespace {

Var pool_nd(int nd, const Var& input, const std::vector<int64_t>& ws, bool ignore_border,
            const std::vector<int64_t>& stride, const std::vector<int64_t>& pad, const std::string& mode) {
  const std::string name = "pool_" + std::to_string(nd) + "d";
  ops::PoolParams p;
  p.nd = nd;
  p.ws = ws;
  p.stride = stride;
  p.pad = pad;
  p.ignore_border = ignore_border;
  const graph::VarPtr x = need(input, name.c_str());
  p.mode = ops::parse_pool_mode(mode, name + "(" + x->label() + ")");
  return Var(ops::pool(x, p));
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

}  // namespace theon::tensor
