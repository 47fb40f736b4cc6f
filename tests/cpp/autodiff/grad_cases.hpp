// Shared by the verify_grad suites: a named case (graph builder + float64 points), input
// generators, and the check every suite runs.
#pragma once
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace theon::testing {

using VarFn = std::function<Var(const std::vector<Var>&)>;

struct GradCase {
  std::string name;
  VarFn fn;
  std::vector<Array> points;
};

inline void PrintTo(const GradCase& c, std::ostream* os) { *os << c.name; }

/// N(0, 1) float64 points.
inline Array nrm(const Shape& s, uint64_t seed) { return Array::randn(s, seed, DType::Float64); }
/// Values in (0.5, 1.5): safe for log, sqrt, pow, division.
inline Array pos(const Shape& s, uint64_t seed) {
  std::vector<double> v = Array::rand(s, seed, DType::Float64).to_vector<double>();
  for (double& x : v) x += 0.5;
  return Array::from_vector<double>(v, s);
}

/// Adapters from f(Var) / f(Var, Var) to a VarFn.
template <class F> VarFn unary(F f) {
  return [f](const std::vector<Var>& v) { return f(v[0]); };
}
template <class F> VarFn binary(F f) {
  return [f](const std::vector<Var>& v) { return f(v[0], v[1]); };
}

/// The check of every suite: the symbolic gradient against finite differences.
inline void expect_matches_finite_differences(const GradCase& c) {
  try {
    verify_grad(c.fn, c.points);
  } catch (const std::exception& e) {
    ADD_FAILURE() << c.name << ": " << e.what();
  }
}

}  // namespace theon::testing
