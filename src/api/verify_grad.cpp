// verify_grad: symbolic gradients against central finite differences, in float64.
#include <theon/function.hpp>
#include <theon/grad.hpp>
#include <theon/tensor.hpp>

#include <cmath>
#include <sstream>

namespace theon {

namespace {

std::string index_str(const Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s = "(";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + (idx.size() == 1 ? ",)" : ")");
}

}  // namespace

void verify_grad(const std::function<Var(const std::vector<Var>&)>& fn, const std::vector<Array>& points,
                 const VerifyGradOptions& opt) {
  std::vector<Array> pts;
  std::vector<Var> vars;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!is_float(points[i].dtype()))
      throw TypeError("verify_grad: point " + std::to_string(i) + " has dtype " +
                      std::string(dtype_name(points[i].dtype())) + "; only float inputs can be checked");
    pts.push_back(points[i].astype(DType::Float64));
    vars.push_back(tensor::tensor(DType::Float64, std::vector<int64_t>(points[i].ndim(), -1), "x" + std::to_string(i)));
  }
  Var out = fn(vars);
  if (!out.defined() || !is_float(out.dtype()))
    throw TypeError("verify_grad: fn must return a float tensor");
  FunctionOptions quiet;
  quiet.on_unused_input = "ignore";
  Array out_val = function(vars, {out}, quiet)(pts)[0];
  // A random projection makes every output element matter with a different weight.
  Var proj = constant(Array::randn(out_val.shape(), opt.seed, out.dtype()), "R");
  Var cost = tensor::sum(out * proj);
  GradOptions gopt;
  gopt.disconnected_inputs = "ignore";
  std::vector<Var> grads = grad(cost, vars, gopt);
  Function f_cost = function(vars, {cost}, quiet);
  Function f_grad = function(vars, grads, quiet);
  std::vector<Array> symbolic = f_grad(pts);

  for (size_t i = 0; i < pts.size(); ++i) {
    std::vector<double> sym = symbolic[i].to_vector<double>();
    double worst_excess = 0, worst_sym = 0, worst_num = 0;
    int64_t worst = -1;
    for (int64_t j = 0; j < pts[i].size(); ++j) {
      std::vector<Array> plus = pts, minus = pts;
      plus[i] = pts[i].copy();
      minus[i] = pts[i].copy();
      plus[i].data<double>()[j] += opt.eps;
      minus[i].data<double>()[j] -= opt.eps;
      double numeric = (f_cost(plus)[0].item() - f_cost(minus)[0].item()) / (2 * opt.eps);
      double excess = std::abs(sym[j] - numeric) - (opt.atol + opt.rtol * std::abs(numeric));
      if (std::isnan(sym[j]) != std::isnan(numeric)) excess = INFINITY;
      if (excess > worst_excess) {
        worst_excess = excess;
        worst = j;
        worst_sym = sym[j];
        worst_num = numeric;
      }
    }
    if (worst >= 0) {
      std::ostringstream os;
      os.precision(10);
      os << "verify_grad: the gradient with respect to input " << i << " (shape " << shape_str(pts[i].shape())
         << ") differs from finite differences; worst element " << index_str(pts[i].shape(), worst) << ": symbolic "
         << worst_sym << ", numeric " << worst_num << ", difference " << std::abs(worst_sym - worst_num)
         << " (rtol " << opt.rtol << ", atol " << opt.atol << ", eps " << opt.eps << ")";
      throw GradientError(os.str());
    }
  }
}

}  // namespace theon
