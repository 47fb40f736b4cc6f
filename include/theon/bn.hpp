// Batch normalization, Theano's theano.tensor.nnet.bn (docs/guide/pooling.md), built from
// elementwise ops and reductions: gradients of every order come from theirs, and the
// optimizer fuses the elementwise parts.
#pragma once
#include <theon/var.hpp>

#include <optional>
#include <string>
#include <vector>

namespace theon::nnet {

/// Theano's batch_normalization(inputs, gamma, beta, mean, std, mode): (inputs - mean) *
/// (gamma / std) + beta, broadcasting; mode "low_mem" or "high_mem" (the same values; Theano's
/// modes differ only in what its gradient keeps in memory).
Var batch_normalization(const Var& inputs, const Var& gamma, const Var& beta, const Var& mean, const Var& std,
                        const std::string& mode = "low_mem");

/// The normalization axes: "per-activation" (axis 0), "spatial" (every axis but 1), or a list.
struct BnAxes {
  std::string name;       // "per-activation", "spatial", or "" for `axes`
  std::vector<int> axes;  // when name is ""
  BnAxes(const char* n) : name(n) {}
  BnAxes(std::string n) : name(std::move(n)) {}
  BnAxes(std::vector<int> a) : axes(std::move(a)) {}
  BnAxes(std::initializer_list<int> a) : axes(a) {}
};

/// What batch_normalization_train returns: out, mean, invstd, and with running averages
/// given, the new running mean and variance (undefined Vars otherwise).
struct BnTrainResult {
  Var out, mean, invstd, running_mean, running_var;
};

/// Theano's batch_normalization_train: mean and variance over `axes` (keepdims), out =
/// (inputs - mean) * invstd * gamma + beta with invstd = 1 / sqrt(var + epsilon); running
/// averages: new_mean = running_mean * (1 - f) + mean * f, new_var = running_var * (1 - f) +
/// var * m / (m - 1) * f, m the number of values averaged. gamma, beta and the running values
/// have inputs' rank with size 1 on the normalized axes (Theano's rule).
BnTrainResult batch_normalization_train(const Var& inputs, const Var& gamma, const Var& beta,
                                        const BnAxes& axes = "per-activation", double epsilon = 1e-4,
                                        double running_average_factor = 0.1, const Var& running_mean = Var(),
                                        const Var& running_var = Var());

/// Theano's batch_normalization_test: (inputs - mean) / sqrt(var + epsilon) * gamma + beta.
Var batch_normalization_test(const Var& inputs, const Var& gamma, const Var& beta, const Var& mean, const Var& var,
                             const BnAxes& axes = "per-activation", double epsilon = 1e-4);

}  // namespace theon::nnet
