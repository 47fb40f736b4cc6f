// theon::nnet batch normalization (theon/bn.hpp), Theano's theano.tensor.nnet.bn, composed
// from tensor:: builders: elementwise ops, mean, dimshuffle. Gradients follow from theirs.
#include <theon/bn.hpp>
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include <algorithm>
#include <set>

namespace theon::nnet {

namespace {

std::string label(const Var& v) { return v.name().empty() ? std::string("<unnamed>") : v.name(); }

void need(const Var& v, const std::string& what, const char* role) {
  if (!v.defined()) throw ValueError(what + ": " + role + " is an undefined Var");
}

// Theano's axes: 'per-activation' (0,), 'spatial' (0, 2, 3, ...), or a list (negative count
// from the end), sorted without repeats.
std::vector<int> bn_axes(const BnAxes& a, int ndim, const std::string& what) {
  std::vector<int> axes;
  if (a.name == "per-activation") {
    axes = {0};
  } else if (a.name == "spatial") {
    axes = {0};
    for (int d = 2; d < ndim; ++d) axes.push_back(d);
  } else if (!a.name.empty()) {
    throw ValueError(what + ": axes should be 'per-activation', 'spatial' or a tuple of ints, got '" + a.name + "'");
  } else {
    for (int ax : a.axes) {
      const int d = ax < 0 ? ax + ndim : ax;
      if (d < 0 || d >= ndim)
        throw ValueError(what + ": axis " + std::to_string(ax) + " is out of range for inputs of rank " +
                         std::to_string(ndim));
      axes.push_back(d);
    }
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  }
  if (axes.empty()) throw ValueError(what + ": no axes to normalize over");
  if (axes.back() >= ndim)
    throw ValueError(what + ": axes " + (a.name.empty() ? std::string("given") : "'" + a.name + "'") +
                     " need inputs of rank > " + std::to_string(axes.back()) + ", got rank " + std::to_string(ndim));
  return axes;
}

// A parameter of rank ndim - len(axes) gets size-1 dims inserted at `axes` (Theano's rule);
// one of rank ndim is used as it is.
Var broadcast_param(const Var& p, int ndim, const std::vector<int>& axes, const std::string& what, const char* role) {
  need(p, what, role);
  const int kept = ndim - static_cast<int>(axes.size());
  if (p.ndim() == ndim) return p;
  if (p.ndim() != kept)
    throw ShapeError(what + ": " + role + " " + label(p) + " must have rank " + std::to_string(ndim) + " or " +
                     std::to_string(kept) + " (inputs' rank without the normalized axes), got rank " +
                     std::to_string(p.ndim()));
  std::vector<int> pattern;
  const std::set<int> ax(axes.begin(), axes.end());
  int next = 0;
  for (int d = 0; d < ndim; ++d) pattern.push_back(ax.count(d) ? -1 : next++);
  return p.dimshuffle(pattern);
}

// The inverse of broadcast_param: drops the normalized (size-1) axes.
Var squeeze_axes(const Var& v, int ndim, const std::vector<int>& axes) {
  const std::set<int> ax(axes.begin(), axes.end());
  std::vector<int> pattern;
  for (int d = 0; d < ndim; ++d)
    if (!ax.count(d)) pattern.push_back(d);
  return v.dimshuffle(pattern);
}

}  // namespace

Var batch_normalization(const Var& inputs, const Var& gamma, const Var& beta, const Var& mean, const Var& std,
                        const std::string& mode) {
  const std::string what = "batch_normalization";
  if (mode != "low_mem" && mode != "high_mem")
    throw ValueError(what + ": mode must be 'low_mem' or 'high_mem', got '" + mode + "'");
  need(inputs, what, "inputs");
  need(gamma, what, "gamma");
  need(beta, what, "beta");
  need(mean, what, "mean");
  need(std, what, "std");
  return (inputs - mean) * (gamma / std) + beta;
}

BnTrainResult batch_normalization_train(const Var& inputs, const Var& gamma, const Var& beta, const BnAxes& axes_in,
                                        double epsilon, double running_average_factor, const Var& running_mean,
                                        const Var& running_var) {
  const std::string what = "batch_normalization_train";
  need(inputs, what, "inputs");
  if (running_mean.defined() != running_var.defined())
    throw ValueError(what + ": running_mean and running_var must either both be given or both be None");
  if (!(epsilon > 0)) throw ValueError(what + ": epsilon must be positive, got " + std::to_string(epsilon));
  const int ndim = inputs.ndim();
  const std::vector<int> axes = bn_axes(axes_in, ndim, what);
  const int kept = ndim - static_cast<int>(axes.size());
  const bool squeeze = gamma.defined() && gamma.ndim() == kept && kept != ndim;
  const Var g = broadcast_param(gamma, ndim, axes, what, "gamma");
  const Var b = broadcast_param(beta, ndim, axes, what, "beta");
  const tensor::Axes ax(std::vector<int>(axes.begin(), axes.end()));
  const Var mean = tensor::mean(inputs, ax, true);
  const Var centered = inputs - mean;
  const Var var = tensor::mean(centered * centered, ax, true);
  const Var invstd = 1.0 / tensor::sqrt(var + epsilon);
  BnTrainResult r;
  r.out = centered * invstd * g + b;
  r.mean = mean;
  r.invstd = invstd;
  if (running_mean.defined()) {
    const Var rm = broadcast_param(running_mean, ndim, axes, what, "running_mean");
    const Var rv = broadcast_param(running_var, ndim, axes, what, "running_var");
    const double f = running_average_factor;
    // m / (m - 1): m values averaged per statistic (Theano's unbiased running variance).
    const Var m = tensor::cast(tensor::size(inputs), var.dtype()) / tensor::cast(tensor::size(mean), var.dtype());
    r.running_mean = rm * (1.0 - f) + mean * f;
    r.running_var = rv * (1.0 - f) + var * (m / (m - 1.0)) * f;
  }
  if (squeeze) {
    r.mean = squeeze_axes(r.mean, ndim, axes);
    r.invstd = squeeze_axes(r.invstd, ndim, axes);
    if (r.running_mean.defined()) {
      r.running_mean = squeeze_axes(r.running_mean, ndim, axes);
      r.running_var = squeeze_axes(r.running_var, ndim, axes);
    }
  }
  return r;
}

Var batch_normalization_test(const Var& inputs, const Var& gamma, const Var& beta, const Var& mean, const Var& var,
                             const BnAxes& axes_in, double epsilon) {
  const std::string what = "batch_normalization_test";
  need(inputs, what, "inputs");
  if (!(epsilon > 0)) throw ValueError(what + ": epsilon must be positive, got " + std::to_string(epsilon));
  const int ndim = inputs.ndim();
  const std::vector<int> axes = bn_axes(axes_in, ndim, what);
  const Var g = broadcast_param(gamma, ndim, axes, what, "gamma");
  const Var b = broadcast_param(beta, ndim, axes, what, "beta");
  const Var m = broadcast_param(mean, ndim, axes, what, "mean");
  const Var v = broadcast_param(var, ndim, axes, what, "var");
  return (inputs - m) * (g / tensor::sqrt(v + epsilon)) + b;
}

}  // namespace theon::nnet
