// tensor:: neural-network ops (softmax, log_softmax, categorical_crossentropy, one_hot).
#include <theon/config.hpp>
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "api/need_var.hpp"

#include "ops/nnet.hpp"

namespace theon::tensor {

using detail::need;

Var softmax(const Var& x, int axis) { return Var(ops::softmax(need(x, "softmax"), axis, /*log=*/false)); }

Var log_softmax(const Var& x, int axis) { return Var(ops::softmax(need(x, "log_softmax"), axis, /*log=*/true)); }

Var categorical_crossentropy(const Var& coding_dist, const Var& true_dist) {
  return Var(ops::categorical_crossentropy(need(coding_dist, "categorical_crossentropy"),
                                           need(true_dist, "categorical_crossentropy")));
}

Var one_hot(const Var& indices, int64_t n, std::optional<DType> dtype) {
  return Var(ops::one_hot(need(indices, "one_hot"), n, dtype.value_or(config().floatX)));
}

}  // namespace theon::tensor
