#include "util/strided.hpp"

namespace theon::detail {

OuterLoop::OuterLoop(const Shape& shape, std::vector<const Strides*> strides, std::vector<int64_t> offsets)
    : shape_(shape), strides_(std::move(strides)), offsets_(std::move(offsets)) {
  int outer = static_cast<int>(shape_.size()) - 1;
  index_.assign(outer > 0 ? outer : 0, 0);
  count_ = 1;
  for (int d = 0; d < outer; ++d) count_ *= shape_[d];
}

void OuterLoop::next() {
  for (int d = static_cast<int>(index_.size()) - 1; d >= 0; --d) {
    for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] += (*strides_[k])[d];
    if (++index_[d] < shape_[d]) return;
    for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] -= (*strides_[k])[d] * shape_[d];
    index_[d] = 0;
  }
}

void collapse_dims(Shape& shape, std::vector<Strides>& strides) {
  Shape new_shape;
  std::vector<Strides> new_strides(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !new_shape.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k)
      if (new_strides[k].back() != strides[k][d] * shape[d]) merge = false;
    if (merge) {
      new_shape.back() *= shape[d];
      for (size_t k = 0; k < strides.size(); ++k) new_strides[k].back() = strides[k][d];
    } else {
      new_shape.push_back(shape[d]);
      for (size_t k = 0; k < strides.size(); ++k) new_strides[k].push_back(strides[k][d]);
    }
  }
  if (new_shape.empty()) {  // 0-d, or all dims were 1: one element
    new_shape.push_back(1);
    for (auto& s : new_strides) s.push_back(0);
  }
  for (int64_t n : shape)
    if (n == 0) {  // empty: nothing to iterate, keep a single 0-length dim
      new_shape = {0};
      for (auto& s : new_strides) s = {0};
      break;
    }
  shape = std::move(new_shape);
  strides = std::move(new_strides);
}

Strides broadcast_strides(const Array& a, const Shape& out_shape) {
  Strides s(out_shape.size(), 0);
  int lead = static_cast<int>(out_shape.size()) - a.ndim();
  for (int d = 0; d < a.ndim(); ++d) s[lead + d] = a.shape()[d] == 1 ? 0 : a.strides()[d];
  return s;
}

}  // namespace theon::detail
