// Random streams: Theano's RandomStreams / MRG_RandomStreams (one engine for both).
//
//   RandomStreams rng(1234);
//   Var mask = rng.binomial({batch, 100}, 1, 0.8, DType::Float32);   // dropout mask
//   Var noise = rng.normal(x.shape(), 0.0, 0.1);                      // size from a shape vector
//   Function f = function({x}, {x * mask + noise});                   // each call: new numbers
//
// Each random variable owns a state, a shared int64 vector [seed, calls], whose default update
// (the next state, [seed, calls + 1]) every function that draws it applies unless
// FunctionOptions::no_default_updates says not to. Element i of a draw is Philox4x32-10 of
// (seed, the variable's creation index in its stream, calls, i): the same numbers on the CPU
// and every GPU, whatever the thread count or launch shape (docs/guide/random.md). They are
// not Theano's MRG31k3p numbers.
#pragma once
#include <theon/var.hpp>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace theon {

/// A draw's size: integers, integer scalar Vars, or one int vector Var of static length
/// (`x.shape()`). Sizes may be symbolic; a negative one is an error when it is known.
class RandomSize {
 public:
  RandomSize(std::initializer_list<int64_t> dims);
  RandomSize(const std::vector<int64_t>& dims);
  RandomSize(std::initializer_list<Var> dims);
  RandomSize(std::vector<Var> dims);
  RandomSize(const Var& shape_vector);
  const std::vector<Var>& dims() const { return dims_; }

 private:
  std::vector<Var> dims_;
};

class RandomStreams {
 public:
  /// `seed`: 0 <= seed < 2^32 (ValueError otherwise).
  explicit RandomStreams(int64_t seed = 0);

  /// Uniform in (low, high) (floats never equal low, and equal high only by rounding). dtype
  /// defaults to floatX, or to low's and high's dtype when they are float64 Vars.
  Var uniform(const RandomSize& size, const Var& low, const Var& high, std::optional<DType> dtype = std::nullopt);
  Var uniform(const RandomSize& size, double low = 0.0, double high = 1.0, std::optional<DType> dtype = std::nullopt);
  /// Normal with mean `avg` and standard deviation `std` (Box-Muller). ValueError for a
  /// negative std: a constant now, a run-time one when the function runs.
  Var normal(const RandomSize& size, const Var& avg, const Var& std, std::optional<DType> dtype = std::nullopt);
  Var normal(const RandomSize& size, double avg = 0.0, double std = 1.0, std::optional<DType> dtype = std::nullopt);
  /// Successes in `n` Bernoulli(p) trials per element (n a constant; p broadcasts; ValueError
  /// for a constant p outside [0, 1], and at call time for a run-time one).
  Var binomial(const RandomSize& size, int64_t n, const Var& p, DType dtype = DType::Int64);
  Var binomial(const RandomSize& size, int64_t n = 1, double p = 0.5, DType dtype = DType::Int64);
  /// Integers uniform in [low, high] (both included, Theano's random_integers). ValueError for
  /// high < low: constants now, run-time values when the function runs.
  Var random_integers(const RandomSize& size, const Var& low, const Var& high, DType dtype = DType::Int64);
  Var random_integers(const RandomSize& size, int64_t low = 0, int64_t high = 1, DType dtype = DType::Int64);
  /// MRG_RandomStreams.multinomial: `pvals` a matrix of probability rows (each summing to 1
  /// within 1e-5, checked at call time); per row, the counts of `n` draws (a matrix like pvals).
  Var multinomial(const Var& pvals, int64_t n = 1, DType dtype = DType::Int64);
  /// numpy's choice: `size` draws from range(a), with or without replacement; with
  /// probabilities `p` (a vector of a, with replacement only).
  Var choice(const RandomSize& size, int64_t a, bool replace = true, const Var& p = Var(),
             DType dtype = DType::Int64);
  /// A random permutation of range(n) (an int vector; uses n^2 comparisons: for n up to a few
  /// thousand).
  Var permutation(int64_t n, DType dtype = DType::Int64);

  /// Reseeds every random variable made so far (their calls go back to 0) and those made later.
  void seed(int64_t seed);
  /// (state, next state) of every random variable made so far, in creation order.
  const std::vector<std::pair<SharedVar, Var>>& state_updates() const { return state_updates_; }
  /// The state of a random variable made by this stream and its next state (ValueError for a
  /// Var this stream did not return).
  std::pair<SharedVar, Var> state_update_of(const Var& draw) const;

 private:
  /// The standard uniform or normal draw of a new random variable, and its state.
  Var draw(bool normal, const RandomSize& size, DType dtype, const std::string& what);
  int64_t seed_;
  std::vector<std::pair<SharedVar, Var>> state_updates_;
  /// Remembers `out` as what the last random variable's call returned.
  Var returned(const Var& out);
  std::vector<std::pair<std::weak_ptr<graph::Variable>, size_t>> draws_;  // returned Var -> its state_updates_ entry
};

}  // namespace theon
