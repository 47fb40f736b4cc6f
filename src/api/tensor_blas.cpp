// tensor:: matrix products.
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "ops/blas.hpp"

namespace theon::tensor {

Var dot(const Var& a, const Var& b) {
  if (!a.defined() || !b.defined()) throw ValueError("dot: use of an undefined Var");
  return Var(ops::dot(a.node(), b.node()));
}

}  // namespace theon::tensor
