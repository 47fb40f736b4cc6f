#include "graph/type.hpp"

#include <theon/error.hpp>

namespace theon::graph {

std::string TensorType::str() const {
  std::string s = std::string(dtype_name(dtype)) + " (";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + (dims[i] == kUnknownDim ? std::string("?") : std::to_string(dims[i]));
  s += dims.size() == 1 ? ",)" : ")";
  if (!context.empty()) s += " @" + context;
  return s;
}

std::string TensorType::kind() const {
  switch (ndim()) {
    case 0: return "scalar";
    case 1: return "vector";
    case 2: return "matrix";
    default: return "tensor" + std::to_string(ndim());
  }
}

bool TensorType::accepts(const Shape& shape) const {
  if (static_cast<int>(shape.size()) != ndim()) return false;
  for (int d = 0; d < ndim(); ++d)
    if (dims[d] != kUnknownDim && dims[d] != shape[d]) return false;
  return true;
}

std::vector<int64_t> broadcast_static_dims(const std::vector<const TensorType*>& inputs, const std::string& what) {
  if (inputs.empty()) return {};
  int nd = inputs[0]->ndim();
  std::vector<int64_t> out(nd, 1);
  for (int d = 0; d < nd; ++d) {
    bool unknown = false;
    int64_t known = 1;
    for (const TensorType* t : inputs) {
      int64_t n = t->dims[d];
      if (n == kUnknownDim) {
        unknown = true;
      } else if (n != 1) {
        if (known != 1 && known != n)
          throw ShapeError(what + ": static shapes disagree in dimension " + std::to_string(d) + " (" +
                           std::to_string(known) + " vs " + std::to_string(n) + ")");
        known = n;
      }
    }
    out[d] = known != 1 ? known : (unknown ? kUnknownDim : 1);
  }
  return out;
}

}  // namespace theon::graph
