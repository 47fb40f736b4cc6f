// tensor::matmul (numpy.matmul).
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "ops/matmul.hpp"

namespace theon::tensor {

Var matmul(const Var& a, const Var& b) {
  if (!a.defined() || !b.defined()) throw ValueError("matmul: use of an undefined Var");
  return Var(ops::matmul(a.node(), b.node()));
}

}  // namespace theon::tensor
