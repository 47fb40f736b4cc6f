// tensor:: transpose and dimshuffle.
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "ops/dimshuffle.hpp"

namespace theon::tensor {

Var transpose(const Var& x, std::vector<int> axes) { return x.transpose(std::move(axes)); }
Var dimshuffle(const Var& x, const std::vector<int>& pattern) { return x.dimshuffle(pattern); }

}  // namespace theon::tensor
