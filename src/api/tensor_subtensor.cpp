// tensor:: indexing (subtensor, take, set_subtensor, inc_subtensor) and Var::operator[].
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "graph/node.hpp"
#include "ops/subtensor.hpp"

namespace theon {

namespace {
const graph::VarPtr& need(const Var& v, const char* what) {
  if (!v.defined()) throw ValueError(std::string(what) + ": use of an undefined Var");
  return v.node();
}
}  // namespace

Var Var::operator[](const Index& index) const { return Var(ops::subtensor(need(*this, "operator[]"), {index})); }
Var Var::operator[](const std::vector<Index>& indices) const {
  return Var(ops::subtensor(need(*this, "operator[]"), indices));
}

namespace tensor {

Var subtensor(const Var& x, const std::vector<Index>& indices) { return x[indices]; }
Var take(const Var& x, const Var& indices, int axis) {
  return Var(ops::take(need(x, "take"), need(indices, "take"), axis));
}
Var set_subtensor(const Var& sub, const Var& y) {
  return Var(ops::inc_subtensor(need(sub, "set_subtensor"), need(y, "set_subtensor"), /*set=*/true));
}
Var inc_subtensor(const Var& sub, const Var& y) {
  return Var(ops::inc_subtensor(need(sub, "inc_subtensor"), need(y, "inc_subtensor"), /*set=*/false));
}

}  // namespace tensor
}  // namespace theon
