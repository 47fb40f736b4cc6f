// Harness cases for the elementwise ops. References are plain double arithmetic with
// NumPy's rules written out here (independent of src/ops/scalar).
#include "harness.hpp"

#include <cmath>

namespace theon::testing {
namespace {

using D = DType;
using Fn = std::function<double(const std::vector<double>&)>;

const std::vector<std::vector<Shape>> kUnaryShapes = {{{3, 4}}, {{0, 3}}, {{1, 1}}, {{2, 3, 4}}, {{}}, {{5}}};
const std::vector<std::vector<Shape>> kBinaryShapes = {
    {{3, 4}, {3, 4}}, {{3, 1}, {1, 4}}, {{2, 3, 4}, {4}}, {{0, 4}, {1, 4}}, {{}, {2, 3}}, {{1}, {5}}, {{4, 1, 3}, {2, 1}}};
const std::vector<std::vector<Shape>> kTernaryShapes = {
    {{3, 4}, {3, 4}, {3, 4}}, {{3, 1}, {1, 4}, {4}}, {{0, 2}, {1, 2}, {}}};

// NumPy's dtype for float-valued functions of integers (Theano's upgrade_to_float).
D float_of(D t) {
  if (is_float(t)) return t;
  return (t == D::Int32 || t == D::Int64) ? D::Float64 : D::Float32;
}

Case unary(const std::string& op, std::vector<D> dtypes, std::function<Var(const Var&)> build, Fn fn,
           std::function<D(D)> out_dtype, Domain domain = Domain::Normal) {
  Case c;
  c.op = op;
  c.dtypes = std::move(dtypes);
  c.shapes = kUnaryShapes;
  c.domain = domain;
  c.build = [build](const std::vector<Var>& v) { return build(v[0]); };
  c.reference = [fn, out_dtype](const std::vector<Ref>& r) { return ref_map(r, out_dtype(r[0].dtype), fn); };
  return c;
}

Case binary(const std::string& op, std::vector<D> dtypes, std::function<Var(const Var&, const Var&)> build, Fn fn,
            std::function<D(D)> out_dtype, Domain domain = Domain::Normal) {
  Case c;
  c.op = op;
  c.dtypes = std::move(dtypes);
  c.shapes = kBinaryShapes;
  c.domain = domain;
  c.build = [build](const std::vector<Var>& v) { return build(v[0], v[1]); };
  c.reference = [fn, out_dtype](const std::vector<Ref>& r) { return ref_map(r, out_dtype(r[0].dtype), fn); };
  return c;
}

D same(D t) { return t; }
D boolean(D) { return D::Bool; }

// Second input never zero (for division-like ops), signs mixed.
std::vector<Array> nonzero_divisor(D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
  Array a = random_array(dtype, shapes[0], Domain::SmallInt, seed);
  Array b = random_array(D::Float64, shapes[1], Domain::Positive, seed + 7);
  Array sign = random_array(D::Bool, shapes[1], Domain::Normal, seed + 13);
  std::vector<double> bv = b.to_vector<double>(), sv = sign.to_vector<double>();
  for (size_t i = 0; i < bv.size(); ++i) {
    double m = is_float(dtype) ? bv[i] : std::max(1.0, std::round(bv[i] * 2));
    if (dtype == D::UInt8) m = std::max(1.0, std::round(bv[i] * 2));
    bv[i] = (sv[i] != 0 && dtype != D::UInt8) ? -m : m;
  }
  Array bb = Array::from_vector<double>(bv, shapes[1]).astype(dtype);
  if (is_float(dtype)) a = random_array(dtype, shapes[0], Domain::Normal, seed);
  return {a, bb};
}

double floor_div(double a, double b) { return std::floor(a / b); }
double py_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace

void add_elemwise_cases(std::vector<Case>& cases) {
  const std::vector<D> floats = {D::Float32, D::Float64};
  const std::vector<D> numbers = {D::Float32, D::Float64, D::Int8, D::Int32, D::Int64, D::UInt8};
  const std::vector<D> float_fn_dtypes = {D::Float32, D::Float64, D::Int32, D::Int8};

  cases.push_back(binary("add", numbers, [](auto& a, auto& b) { return a + b; }, [](auto& x) { return x[0] + x[1]; }, same));
  cases.push_back(binary("add", {D::Bool}, [](auto& a, auto& b) { return a + b; },
                         [](auto& x) { return double(x[0] != 0 || x[1] != 0); }, same));
  cases.back().label = "bool_is_or";
  cases.push_back(binary("sub", numbers, [](auto& a, auto& b) { return a - b; }, [](auto& x) { return x[0] - x[1]; }, same));
  cases.push_back(binary("mul", numbers, [](auto& a, auto& b) { return a * b; }, [](auto& x) { return x[0] * x[1]; }, same));
  cases.push_back(binary("mul", {D::Bool}, [](auto& a, auto& b) { return a * b; },
                         [](auto& x) { return double(x[0] != 0 && x[1] != 0); }, same));
  cases.back().label = "bool_is_and";

  Case div = binary("true_div", {D::Float32, D::Float64, D::Int32, D::Int8}, [](auto& a, auto& b) { return a / b; },
                    [](auto& x) { return x[0] / x[1]; }, float_of);
  div.make_inputs = nonzero_divisor;
  cases.push_back(div);
  Case fdiv = binary("floor_div", numbers, [](auto& a, auto& b) { return tensor::floor_div(a, b); },
                     [](auto& x) { return floor_div(x[0], x[1]); }, same);
  fdiv.make_inputs = nonzero_divisor;
  cases.push_back(fdiv);
  Case mod = binary("mod", numbers, [](auto& a, auto& b) { return a % b; },
                    [](auto& x) { return py_mod(x[0], x[1]); }, same);
  mod.make_inputs = nonzero_divisor;
  mod.atol32 = 1e-5;
  cases.push_back(mod);

  Case pw = binary("pow", {D::Float32, D::Float64, D::Int32, D::Int64, D::UInt8},
                   [](auto& a, auto& b) { return tensor::pow(a, b); }, [](auto& x) { return std::pow(x[0], x[1]); }, same);
  pw.make_inputs = [](D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
    Array base = random_array(dtype, shapes[0], is_float(dtype) ? Domain::Positive : Domain::SmallInt, seed);
    Array e = random_array(D::Float64, shapes[1], Domain::Positive, seed + 1);  // 0.1..3
    if (!is_float(dtype)) {  // small non-negative integer exponents
      std::vector<double> v = e.to_vector<double>();
      for (double& x : v) x = std::round(x);
      e = Array::from_vector<double>(v, shapes[1]);
    }
    return std::vector<Array>{base, e.astype(dtype)};
  };
  cases.push_back(pw);

  cases.push_back(unary("neg", numbers, [](auto& a) { return -a; }, [](auto& x) { return -x[0]; }, same));
  cases.push_back(unary("abs", numbers, [](auto& a) { return tensor::abs(a); }, [](auto& x) { return std::fabs(x[0]); }, same));
  cases.push_back(unary("sign", numbers, [](auto& a) { return tensor::sign(a); },
                        [](auto& x) { return double((x[0] > 0) - (x[0] < 0)); }, same));
  cases.push_back(unary("sqr", numbers, [](auto& a) { return tensor::sqr(a); }, [](auto& x) { return x[0] * x[0]; }, same));
  cases.push_back(unary("relu", numbers, [](auto& a) { return tensor::relu(a); },
                        [](auto& x) { return x[0] > 0 ? x[0] : 0.0; }, same));

  const std::vector<D> comparable = {D::Float32, D::Float64, D::Int32, D::UInt8, D::Int64};
  auto cmp = [&](const std::string& op, std::function<Var(const Var&, const Var&)> b, std::function<bool(double, double)> f) {
    Case c = binary(op, comparable, b, [f](auto& x) { return double(f(x[0], x[1])); }, boolean, Domain::SmallInt);
    cases.push_back(c);
  };
  cmp("lt", [](auto& a, auto& b) { return a < b; }, [](double a, double b) { return a < b; });
  cmp("gt", [](auto& a, auto& b) { return a > b; }, [](double a, double b) { return a > b; });
  cmp("le", [](auto& a, auto& b) { return a <= b; }, [](double a, double b) { return a <= b; });
  cmp("ge", [](auto& a, auto& b) { return a >= b; }, [](double a, double b) { return a >= b; });
  cmp("eq", [](auto& a, auto& b) { return tensor::eq(a, b); }, [](double a, double b) { return a == b; });
  cmp("neq", [](auto& a, auto& b) { return tensor::neq(a, b); }, [](double a, double b) { return a != b; });

  const std::vector<D> logical = {D::Bool, D::Int8, D::Int32, D::UInt8};
  auto bits = [](double a) { return static_cast<int64_t>(a); };
  cases.push_back(binary("and", logical, [](auto& a, auto& b) { return a & b; },
                         [bits](auto& x) { return double(bits(x[0]) & bits(x[1])); }, same));
  cases.push_back(binary("or", logical, [](auto& a, auto& b) { return a | b; },
                         [bits](auto& x) { return double(bits(x[0]) | bits(x[1])); }, same));
  cases.push_back(binary("xor", logical, [](auto& a, auto& b) { return a ^ b; },
                         [bits](auto& x) { return double(bits(x[0]) ^ bits(x[1])); }, same));
  cases.push_back(unary("not", {D::Int8, D::Int32, D::UInt8}, [](auto& a) { return ~a; },
                        [bits](auto& x) { return double(~bits(x[0])); }, same));
  cases.push_back(unary("not", {D::Bool}, [](auto& a) { return ~a; }, [](auto& x) { return double(x[0] == 0); }, same));
  cases.back().label = "bool";

  auto fn = [&](const std::string& op, std::function<Var(const Var&)> b, double (*f)(double), Domain d = Domain::Normal) {
    cases.push_back(unary(op, float_fn_dtypes, b, [f](auto& x) { return f(x[0]); }, float_of, d));
  };
  fn("exp", [](auto& a) { return tensor::exp(a); }, [](double x) { return std::exp(x); });
  fn("log", [](auto& a) { return tensor::log(a); }, [](double x) { return std::log(x); }, Domain::Positive);
  fn("log1p", [](auto& a) { return tensor::log1p(a); }, [](double x) { return std::log1p(x); }, Domain::Positive);
  fn("expm1", [](auto& a) { return tensor::expm1(a); }, [](double x) { return std::expm1(x); });
  fn("sqrt", [](auto& a) { return tensor::sqrt(a); }, [](double x) { return std::sqrt(x); }, Domain::Positive);
  fn("tanh", [](auto& a) { return tensor::tanh(a); }, [](double x) { return std::tanh(x); });
  fn("sigmoid", [](auto& a) { return tensor::sigmoid(a); }, [](double x) { return 1 / (1 + std::exp(-x)); });
  fn("softplus", [](auto& a) { return tensor::softplus(a); }, [](double x) { return std::log1p(std::exp(x)); });
  fn("sin", [](auto& a) { return tensor::sin(a); }, [](double x) { return std::sin(x); });
  fn("cos", [](auto& a) { return tensor::cos(a); }, [](double x) { return std::cos(x); });
  fn("erf", [](auto& a) { return tensor::erf(a); }, [](double x) { return std::erf(x); });
  cases.back().check_grad = true;
  fn("erfc", [](auto& a) { return tensor::erfc(a); }, [](double x) { return std::erfc(x); });
  cases.back().check_grad = true;

  // Rounding: piecewise constant, so their gradient rows check the zeros Theano gives.
  fn("floor", [](auto& a) { return tensor::floor(a); }, [](double x) { return std::floor(x); });
  cases.back().check_grad = true;
  fn("ceil", [](auto& a) { return tensor::ceil(a); }, [](double x) { return std::ceil(x); });
  cases.back().check_grad = true;
  fn("trunc", [](auto& a) { return tensor::trunc(a); }, [](double x) { return std::trunc(x); });
  cases.back().check_grad = true;
  // Values on multiples of 0.75 put exact ties (±1.5, ±4.5) among the inputs; no gradient row
  // (finite differences across a tie are not a gradient).
  auto with_ties = [](D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
    Array a = random_array(is_float(dtype) ? D::Float64 : dtype, shapes[0], Domain::SmallInt, seed);
    if (!is_float(dtype)) return std::vector<Array>{a};
    std::vector<double> v = a.to_vector<double>();
    for (double& x : v) x *= 0.75;
    return std::vector<Array>{Array::from_vector<double>(v, shapes[0]).astype(dtype)};
  };
  fn("round_half_to_even", [](auto& a) { return tensor::round_half_to_even(a); },
     [](double x) { return std::nearbyint(x); });  // the default FP environment rounds ties to even
  cases.back().make_inputs = with_ties;
  fn("round_half_away_from_zero", [](auto& a) { return tensor::round_half_away_from_zero(a); },
     [](double x) { return std::round(x); });
  cases.back().make_inputs = with_ties;

  cases.push_back(binary("maximum", {D::Float32, D::Float64, D::Int32, D::UInt8, D::Bool},
                         [](auto& a, auto& b) { return tensor::maximum(a, b); },
                         [](auto& x) { return std::max(x[0], x[1]); }, same));
  cases.push_back(binary("minimum", {D::Float32, D::Float64, D::Int32, D::UInt8, D::Bool},
                         [](auto& a, auto& b) { return tensor::minimum(a, b); },
                         [](auto& x) { return std::min(x[0], x[1]); }, same));

  Case clip;
  clip.op = "clip";
  clip.dtypes = {D::Float32, D::Float64, D::Int32, D::Int8};
  clip.shapes = kTernaryShapes;
  clip.build = [](const std::vector<Var>& v) { return tensor::clip(v[0], v[1], v[1] + 1); };
  clip.reference = [](const std::vector<Ref>& r) {
    return ref_map({r[0], r[1]}, r[0].dtype, [](auto& x) { return std::min(std::max(x[0], x[1]), x[1] + 1); });
  };
  cases.push_back(clip);

  Case sw;
  sw.op = "switch";
  sw.dtypes = {D::Float32, D::Float64, D::Int32, D::Bool};
  sw.shapes = kTernaryShapes;
  sw.make_inputs = [](D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
    return std::vector<Array>{random_array(D::Bool, shapes[0], Domain::Normal, seed),
                              random_array(dtype, shapes[1], Domain::Normal, seed + 1),
                              random_array(dtype, shapes[2], Domain::Normal, seed + 2)};
  };
  sw.build = [](const std::vector<Var>& v) { return tensor::switch_(v[0], v[1], v[2]); };
  sw.reference = [](const std::vector<Ref>& r) {
    return ref_map(r, r[1].dtype, [](auto& x) { return x[0] != 0 ? x[1] : x[2]; });
  };
  cases.push_back(sw);

  for (D to : {D::Float32, D::Float64, D::Int32, D::Int8, D::UInt8, D::Int64, D::Bool, D::Float16}) {
    Case c = unary("cast", {D::Float32, D::Float64, D::Int32, D::Int8, D::UInt8, D::Bool, D::Float16},
                   [to](auto& a) { return tensor::cast(a, to); }, [](auto& x) { return x[0]; },
                   [to](D) { return to; }, Domain::Normal);
    c.label = "to_" + std::string(dtype_name(to));
    // Normal floats cast to integers truncate toward zero, as C and NumPy do.
    c.reference = [to](const std::vector<Ref>& r) {
      return ref_map(r, to, [to](auto& x) { return is_float(to) || to == D::Bool ? x[0] : std::trunc(x[0]); });
    };
    cases.push_back(c);
  }
}

}  // namespace theon::testing
