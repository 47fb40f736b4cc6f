// Random draws: RandomDraw(state, d0, ..., dn-1) -> (draw, next state). The state is a
// 2-element int64 vector [seed, calls] held by a shared variable (api/random.cpp: each random
// variable of a RandomStreams has its own, with a default update to the next state), so the
// function's updates advance it: next state = [seed, calls + 1]. The draw's elements are
// Philox4x32-10 of (seed, stream, calls, element index) (ops/scalar/philox.hpp): the same
// bits on every device, thread count and launch shape. Parameters (low/high, mean/std, p) are
// applied by ordinary elementwise ops on the standard draw, so they broadcast and fuse.
//
// The op is impure: never merged (two draws of one shape and state are different numbers),
// folded or rewritten. It has no gradient (the draw does not depend on its inputs' values
// smoothly); gradients reach the parameters through the elementwise ops.
#pragma once
#include "graph/op.hpp"
#include "ops/scalar/philox.hpp"

#include <utility>
#include <vector>

namespace theon::ops {

class RandomDraw final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::RandomDraw;
  /// `stream`: the random variable's creation index in its RandomStreams (part of the key).
  RandomDraw(random::Distribution distribution, DType dtype, uint32_t stream)
      : distribution_(distribution), dtype_(dtype), stream_(stream) {}
  random::Distribution distribution() const { return distribution_; }
  DType dtype() const { return dtype_; }
  uint32_t stream() const { return stream_; }

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  bool pure() const override { return false; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;

 private:
  random::Distribution distribution_;
  DType dtype_;
  uint32_t stream_;
};

/// "uniform" / "normal".
const char* distribution_name(random::Distribution d);

/// The standard draw (uniform in (0, 1), or normal with mean 0 and std 1) of `dtype` (float32
/// or float64) and shape `shape` (int scalars), and the next state. `state` is an int64 vector
/// of 2: [seed, calls]. TypeError/ShapeError naming `what` (the user's call) for a bad dtype,
/// state or size (a negative constant size now, a negative run-time one when called).
std::pair<graph::VarPtr, graph::VarPtr> random_draw(random::Distribution distribution, const graph::VarPtr& state,
                                                    const std::vector<graph::VarPtr>& shape, DType dtype,
                                                    uint32_t stream, const std::string& what);

}  // namespace theon::ops
