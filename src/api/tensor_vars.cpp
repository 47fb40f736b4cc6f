// tensor:: variable constructors (scalar ... tensor4 and Theano's typed forms).
#include <theon/config.hpp>
#include <theon/tensor.hpp>

#include "graph/node.hpp"

namespace theon::tensor {

Var tensor(DType dtype, const std::vector<int64_t>& shape, const std::string& name) {
  require_supported(dtype, "tensor('" + name + "')");
  graph::TensorType t;
  t.dtype = dtype;
  t.dims = shape;
  return Var(graph::Variable::make_input(t, name));
}

namespace {
Var of_rank(int ndim, const std::string& name, std::optional<DType> dtype) {
  return tensor(dtype.value_or(config().floatX), std::vector<int64_t>(ndim, graph::kUnknownDim), name);
}
}  // namespace

Var scalar(const std::string& name, std::optional<DType> dtype) { return of_rank(0, name, dtype); }
Var vector(const std::string& name, std::optional<DType> dtype) { return of_rank(1, name, dtype); }
Var matrix(const std::string& name, std::optional<DType> dtype) { return of_rank(2, name, dtype); }
Var tensor3(const std::string& name, std::optional<DType> dtype) { return of_rank(3, name, dtype); }
Var tensor4(const std::string& name, std::optional<DType> dtype) { return of_rank(4, name, dtype); }

#define THEON_TYPED_VARS(prefix, dtype)                                                            \
  Var prefix##scalar(const std::string& name) { return of_rank(0, name, dtype); }                  \
  Var prefix##vector(const std::string& name) { return of_rank(1, name, dtype); }                  \
  Var prefix##matrix(const std::string& name) { return of_rank(2, name, dtype); }                  \
  Var prefix##tensor3(const std::string& name) { return of_rank(3, name, dtype); }                 \
  Var prefix##tensor4(const std::string& name) { return of_rank(4, name, dtype); }
THEON_TYPED_VARS(f, DType::Float32)
THEON_TYPED_VARS(d, DType::Float64)
THEON_TYPED_VARS(b, DType::Int8)
THEON_TYPED_VARS(w, DType::Int16)
THEON_TYPED_VARS(i, DType::Int32)
THEON_TYPED_VARS(l, DType::Int64)
#undef THEON_TYPED_VARS

}  // namespace theon::tensor
