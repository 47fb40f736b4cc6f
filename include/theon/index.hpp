// Index, Slice and Bound: the entries of an index expression (x[{Slice(0, 10), 3}]).
// A header of their own so that the indexing ops (src/ops/subtensor.hpp) can take them
// without including the public Var API; a Var appears here only as a forward declaration.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>

namespace theon {

namespace graph {
class Variable;
}

class Var;

/// A slice bound or a scalar index: a C++ integer or a symbolic integer scalar.
struct Bound {
  Bound() = default;
  Bound(std::nullopt_t) {}
  Bound(int64_t v) : value(v) {}
  Bound(int v) : value(v) {}
  Bound(const Var& v);
  bool empty() const { return !value && !var; }
  std::optional<int64_t> value;
  std::shared_ptr<graph::Variable> var;
};

/// start:stop:step; empty bounds mean "from the start", "to the end", "step 1".
struct Slice {
  Bound start{}, stop{}, step{};
};

/// One entry of an index expression: an integer (drops the dim), a Slice, or an integer
/// Var (a scalar drops the dim; a vector selects rows like numpy.take).
struct Index {
  Index(int64_t i) : scalar(i) {}
  Index(int i) : scalar(i) {}
  Index(Slice s) : slice(std::move(s)), is_slice(true) {}
  Index(const Var& v);
  Bound scalar;
  Slice slice;
  bool is_slice = false;
  std::shared_ptr<graph::Variable> array;  // integer vector (advanced indexing)
};

}  // namespace theon
