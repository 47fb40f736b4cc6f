// Pooling, Theano's theano.tensor.signal.pool (docs/guide/pooling.md): max, sum and average
// pooling over the last 2 (pool_2d) or 3 (pool_3d) dims of a float tensor, with strides,
// padding and Theano's ignore_border rule, differentiable to any order.
#pragma once
#include <theon/var.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace theon::tensor {

/// Theano's pool_2d(input, ws, ignore_border, stride, pad, mode): `ws` the window (2 entries);
/// `stride` defaults to ws; `pad` (default 0) zeros on both sides of each dim, smaller than ws
/// and only with ignore_border; mode "max", "sum", "average_inc_pad" (padding counts in the
/// average) or "average_exc_pad". ignore_border=false keeps the partial windows at the end.
///   Var y = tensor::pool_2d(x, {2, 2}, true);                      // 2x2 max pooling
///   Var a = tensor::pool_2d(x, {3, 3}, true, {2, 2}, {1, 1}, "average_exc_pad");
Var pool_2d(const Var& input, const std::vector<int64_t>& ws, bool ignore_border,
            const std::vector<int64_t>& stride = {}, const std::vector<int64_t>& pad = {},
            const std::string& mode = "max");
/// The same over the last 3 dims (ws, stride, pad of 3 entries).
Var pool_3d(const Var& input, const std::vector<int64_t>& ws, bool ignore_border,
            const std::vector<int64_t>& stride = {}, const std::vector<int64_t>& pad = {},
            const std::string& mode = "max");
/// Theano's max_pool_2d_same_size(input, patch_size): input's shape, each non-overlapping
/// patch keeping its maximum (every element equal to it) and zeros elsewhere.
Var max_pool_2d_same_size(const Var& input, const std::vector<int64_t>& patch_size);

/// The gradient ops of pooling over the last ws.size() dims, as Theano's classes
/// MaxPoolGrad(ignore_border, ndim)(x, maxout, gz, ws, stride, pad) and
/// AveragePoolGrad(ignore_border, mode, ndim)(x, gz, ws, stride, pad): x's shape, gz spread
/// over the windows (max: to the elements equal to maxout). grad() builds them itself.
Var max_pool_grad(const Var& x, const Var& maxout, const Var& gz, const std::vector<int64_t>& ws, bool ignore_border,
                  const std::vector<int64_t>& stride = {}, const std::vector<int64_t>& pad = {});
Var average_pool_grad(const Var& x, const Var& gz, const std::vector<int64_t>& ws, bool ignore_border,
                      const std::vector<int64_t>& stride = {}, const std::vector<int64_t>& pad = {},
                      const std::string& mode = "average_inc_pad");

}  // namespace theon::tensor
