// Var: a symbolic tensor. Operators build graph nodes; nothing is computed until a
// Function made by theon::function() is called.
//
//   Var x = tensor::matrix("x");
//   Var y = tensor::exp(x * 2.0) + 1;     // C++ literals are weak: y stays float32
//   Var row = x[{Slice(0, 10), 3}];       // basic indexing, Python semantics
//
// Copies of a Var refer to the same graph variable.
#pragma once
#include <theon/array.hpp>
#include <theon/dtype.hpp>
#include <theon/index.hpp>

#include <concepts>
#include <initializer_list>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace theon {

namespace graph {
class Variable;
}

class Var;

class Var {
 public:
  Var() = default;
  explicit Var(std::shared_ptr<graph::Variable> v) : v_(std::move(v)) {}

  const std::shared_ptr<graph::Variable>& node() const { return v_; }
  bool defined() const { return v_ != nullptr; }
  std::string name() const;
  /// Sets the user's name (shown by debugprint and in errors); returns *this.
  Var& set_name(const std::string& name);
  DType dtype() const;
  int ndim() const;
  std::vector<bool> broadcastable() const;
  /// Static sizes, -1 where unknown.
  std::vector<int64_t> static_shape() const;
  /// "float32 (?, 5)"
  std::string type_str() const;
  /// True for the result of an op (not an input, a constant or a shared variable).
  bool is_output() const;
  /// The context this variable is pinned to (shared(target=), transfer(), a ContextScope);
  /// "" when unpinned (placement decides: docs/guide/contexts.md).
  std::string context() const;

  Var T() const;
  Var transpose(std::vector<int> axes = {}) const;
  /// Theano's dimshuffle: -1 stands for 'x' (a new broadcastable dim).
  Var dimshuffle(const std::vector<int>& pattern) const;
  Var reshape(const std::vector<int64_t>& shape) const;
  Var flatten(int ndim = 1) const;
  Var astype(DType dtype) const;
  Var operator[](const Index& index) const;
  Var operator[](const std::vector<Index>& indices) const;
  /// x[{Slice{0, 10}, 3}] and x[{i}]: a braced list picks this overload unambiguously.
  Var operator[](std::initializer_list<Index> indices) const { return (*this)[std::vector<Index>(indices)]; }
  /// The symbolic shape (an int64 vector).
  Var shape() const;

 protected:
  std::shared_ptr<graph::Variable> v_;
};

/// A variable with a value that persists across calls and is changed by `updates`.
class SharedVar : public Var {
 public:
  SharedVar() = default;
  explicit SharedVar(std::shared_ptr<graph::Variable> v) : Var(std::move(v)) {}
  /// A copy of the current value (borrow=true returns the stored array itself: do not modify it).
  Array get_value(bool borrow = false) const;
  /// Replaces the value; dtype and rank must match, static dims too. The array is copied
  /// unless borrow=true.
  void set_value(const Array& value, bool borrow = false);
};

struct SharedOptions {
  bool borrow = false;        // keep `value` itself instead of a copy
  std::string target = "";    // context name ("dev0", "cpu", "cuda1"): stored and pinned there; "" = unpinned
  std::vector<bool> broadcastable = {};  // dims declared broadcastable (size 1, static)
};
SharedVar shared(const Array& value, const std::string& name = "", const SharedOptions& options = {});

/// The symbolic inputs `outputs` depend on (variables made by tensor::matrix and friends; not
/// constants or shared variables), each once, in the order a depth-first walk meets them.
std::vector<Var> symbolic_inputs(const std::vector<Var>& outputs);

/// A constant; literals in expressions become weak constants automatically.
Var constant(const Array& value, const std::string& name = "");

/// Makes a weak literal (NEP 50): a C++ number in an expression.
Var literal(double value, bool integral);

template <class S>
concept Scalar = std::is_arithmetic_v<S>;

template <Scalar S> Var as_var(S s) {
  return literal(static_cast<double>(s), std::is_integral_v<S>);
}

// Operators. Theano's names are in tensor:: (add, sub, lt, ...). == and != are not
// overloaded (a Var compares by identity, as in Theano); use tensor::eq / tensor::neq.
Var operator+(const Var& a, const Var& b);
Var operator-(const Var& a, const Var& b);
Var operator*(const Var& a, const Var& b);
Var operator/(const Var& a, const Var& b);
Var operator%(const Var& a, const Var& b);
Var operator-(const Var& a);
Var operator<(const Var& a, const Var& b);
Var operator>(const Var& a, const Var& b);
Var operator<=(const Var& a, const Var& b);
Var operator>=(const Var& a, const Var& b);
Var operator&(const Var& a, const Var& b);
Var operator|(const Var& a, const Var& b);
Var operator^(const Var& a, const Var& b);
Var operator~(const Var& a);

#define THEON_SCALAR_OPERATOR(op)                                                     \
  template <Scalar S> Var operator op(const Var& a, S b) { return a op as_var(b); } \
  template <Scalar S> Var operator op(S a, const Var& b) { return as_var(a) op b; }
THEON_SCALAR_OPERATOR(+)
THEON_SCALAR_OPERATOR(-)
THEON_SCALAR_OPERATOR(*)
THEON_SCALAR_OPERATOR(/)
THEON_SCALAR_OPERATOR(%)
THEON_SCALAR_OPERATOR(<)
THEON_SCALAR_OPERATOR(>)
THEON_SCALAR_OPERATOR(<=)
THEON_SCALAR_OPERATOR(>=)
THEON_SCALAR_OPERATOR(&)
THEON_SCALAR_OPERATOR(|)
THEON_SCALAR_OPERATOR(^)
#undef THEON_SCALAR_OPERATOR

}  // namespace theon
