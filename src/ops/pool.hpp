// Pooling (Theano's theano.tensor.signal.pool): Pool over the last `nd` dims (2 or 3) of an
// input of rank >= nd, in mode max, sum, average_inc_pad or average_exc_pad, and the ops of its
// gradients, as Theano has them:
//   Pool(x)                               the pooled tensor;
//   MaxPoolGrad(x, z, gz)                 gx for max: gz of each window to every element equal
//                                         to its maximum z;
//   AveragePoolGrad(x, gz)                gx for sum/average: gz / divisor spread over each
//                                         window (x gives the shape only);
//   DownsampleFactorMaxGradGrad(x, z, g)  the gradient of MaxPoolGrad with respect to gz:
//                                         pooled-shaped, g summed over the maxima of each window.
// The window, stride and padding are props (Theano takes them as symbolic inputs, which
// programs give as constants). The per-element semantics is ops/scalar/pool_ops.hpp.
// Output size per pooled dim of size n (R = n + 2 pad):
//   ignore_border=True:  (R - ws) / st + 1, or 0 when R < ws;
//   ignore_border=False: (R - 1) / st + 1 when st >= ws, else max(0, (R - 1 - ws + st) / st) + 1
//                        (padding must be 0 then); 0 when n is 0.
#pragma once
#include "graph/op.hpp"
#include "ops/scalar/pool_ops.hpp"

#include <theon/dtype.hpp>

#include <string>
#include <vector>

namespace theon::ops {

struct PoolParams {
  int nd = 2;
  std::vector<int64_t> ws, stride, pad;  // nd entries each
  bool ignore_border = true;
  pool::Mode mode = pool::kMax;
  bool operator==(const PoolParams&) const = default;
};

/// "max", "sum", "average_inc_pad", "average_exc_pad".
const char* pool_mode_name(pool::Mode mode);
/// The mode of a name above; ValueError naming `what` otherwise.
pool::Mode parse_pool_mode(const std::string& name, const std::string& what);

/// The pooled size of one dim (the rule above).
int64_t pool_output_size(int64_t n, int64_t ws, int64_t stride, int64_t pad, bool ignore_border);
/// x's shape with its last nd dims pooled.
Shape pool_output_shape(const Shape& x, const PoolParams& p);
/// The geometry the kernels take for input shape x (rank <= nd + pool::kMaxLead).
pool::Geometry pool_geometry(const Shape& x, const PoolParams& p);
/// An operand's strides in the kernels' form (leading dims, then 3 pooled dims).
pool::Strides pool_strides(const Array& a, const PoolParams& p);

/// Pool and its gradient ops (the kind says which; see the top of this file).
class Pool final : public graph::Op {
 public:
  Pool(graph::OpKind kind, PoolParams params) : kind_(kind), p_(std::move(params)) {}
  const PoolParams& params() const { return p_; }

  graph::OpKind kind() const override { return kind_; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// Theano's: Pool max -> MaxPoolGrad, other modes -> AveragePoolGrad; MaxPoolGrad -> zeros
  /// for x and z, DownsampleFactorMaxGradGrad for gz; AveragePoolGrad -> Pool of the gradient
  /// for gz; DownsampleFactorMaxGradGrad -> MaxPoolGrad for g.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  /// Pool: "pool_2d(x, ws=(2, 2), ...)", as the user wrote it; the gradient kinds: the default.
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;

 private:
  graph::OpKind kind_;
  PoolParams p_;
};

/// pool_2d / pool_3d: `what` names the call in messages ("pool_2d(x, ws=(2, 2))"). Checks
/// (Theano's): rank >= nd, ws >= 1, stride >= 1, 0 <= pad < ws, padding only with
/// ignore_border; a float input.
graph::VarPtr pool(const graph::VarPtr& x, const PoolParams& p);
/// p with stride (default ws) and pad (default 0) filled in, checked as pool() checks them for
/// input x; the errors name the call.
PoolParams checked_pool_params(const graph::VarPtr& x, const PoolParams& p);
graph::VarPtr max_pool_grad(const graph::VarPtr& x, const graph::VarPtr& z, const graph::VarPtr& gz, const PoolParams& p);
graph::VarPtr average_pool_grad(const graph::VarPtr& x, const graph::VarPtr& gz, const PoolParams& p);
graph::VarPtr max_pool_grad_grad(const graph::VarPtr& x, const graph::VarPtr& z, const graph::VarPtr& g,
                                 const PoolParams& p);

/// "pool_2d(x, ws=(2, 2), stride=(2, 2), pad=(0, 0), ignore_border=True, mode='max')".
std::string pool_call(const std::string& x, const PoolParams& p);

}  // namespace theon::ops
