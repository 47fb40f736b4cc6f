#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <random>

namespace theon::testing {

std::vector<DType> harness_dtypes(const Case& c) {
  const char* v = std::getenv("THEON_HARNESS_DTYPES");
  const std::string mode = v ? v : "all";
  if (mode == "first") return c.dtypes.empty() ? c.dtypes : std::vector<DType>{c.dtypes.front()};
  if (mode != "all" && !mode.empty())
    throw ValueError("THEON_HARNESS_DTYPES must be 'first' or 'all', got '" + mode + "'");
  return c.dtypes;
}

Ref Ref::of(const Array& a) {
  Ref r;
  r.dtype = a.dtype();
  r.shape = a.shape();
  r.v = a.to_vector<double>();
  return r;
}

Array random_array(DType dtype, const Shape& shape, Domain domain, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Array a = Array::empty(shape, DType::Float64);
  double* p = a.data<double>();
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(-1, 1), pos(0.1, 3.0);
  std::uniform_int_distribution<int> small(is_signed(dtype) ? -9 : 0, 9), coin(0, 1);
  for (int64_t i = 0; i < a.size(); ++i) {
    if (dtype == DType::Bool) p[i] = coin(rng);
    else if (!is_float(dtype) || domain == Domain::SmallInt) {
      int v = small(rng);
      if (domain == Domain::Positive && v <= 0) v = 1 - v;
      p[i] = v;
    } else if (domain == Domain::Positive) p[i] = pos(rng);
    else if (domain == Domain::Unit) p[i] = unit(rng);
    else p[i] = normal(rng);
  }
  return a.astype(dtype);
}

Array non_contiguous(const Array& a, int variant) {
  if (variant == 1 && a.ndim() >= 2) {
    // Same values, stored transposed: build the transpose contiguously, then view it back.
    return a.transpose().copy().transpose();
  }
  if (variant == 2 && a.ndim() >= 1) {
    Shape wide = a.shape();
    wide.back() = wide.back() * 2;
    Array big = Array::zeros(wide, a.dtype());
    Array view = big.slice(a.ndim() - 1, 0, wide.back(), 2);
    // Write a's values into the strided view element by element (row-major order).
    std::vector<double> vals = a.to_vector<double>();
    Strides st = view.strides();
    for (int64_t i = 0; i < a.size(); ++i) {
      int64_t off = 0, rest = i;
      for (int d = a.ndim() - 1; d >= 0; --d) {
        off += (rest % a.shape()[d]) * st[d];
        rest /= a.shape()[d];
      }
      Array one = Array::scalar(vals[i], a.dtype());
      std::memcpy(static_cast<char*>(view.data()) + off * itemsize(a.dtype()), one.data(), itemsize(a.dtype()));
    }
    return view;
  }
  return a;
}

double to_dtype(double x, DType dtype) {
  switch (dtype) {
    case DType::Bool: return x != 0 ? 1 : 0;
    case DType::Float32: return static_cast<double>(static_cast<float>(x));
    case DType::Float16: return static_cast<double>(half_bits_to_float(double_to_half_bits(x)));
    case DType::Float64: return x;
    default: {
      if (std::isnan(x) || std::isinf(x)) return x;
      auto bits = static_cast<uint64_t>(static_cast<int64_t>(x));
      switch (dtype) {
        case DType::Int8: return static_cast<int8_t>(bits);
        case DType::Int16: return static_cast<int16_t>(bits);
        case DType::Int32: return static_cast<int32_t>(bits);
        case DType::UInt8: return static_cast<uint8_t>(bits);
        default: return static_cast<double>(static_cast<int64_t>(bits));
      }
    }
  }
}

Ref ref_map(const std::vector<Ref>& ins, DType out, const std::function<double(const std::vector<double>&)>& fn) {
  int nd = 0;
  for (auto& r : ins) nd = std::max(nd, r.ndim());
  Shape shape(nd, 1);
  for (auto& r : ins)
    for (int d = 0; d < r.ndim(); ++d) {
      int64_t n = r.shape[d];
      int64_t& o = shape[nd - r.ndim() + d];
      if (n != 1) o = n;
    }
  Ref res;
  res.dtype = out;
  res.shape = shape;
  int64_t total = shape_size(shape);
  res.v.resize(total);
  std::vector<double> args(ins.size());
  for (int64_t i = 0; i < total; ++i) {
    for (size_t k = 0; k < ins.size(); ++k) {
      const Ref& r = ins[k];
      int64_t off = 0, stride = 1, rest = i;
      for (int d = nd - 1; d >= 0; --d) {
        int64_t idx = rest % shape[d];
        rest /= shape[d];
        int rd = d - (nd - r.ndim());
        if (rd >= 0) {
          if (r.shape[rd] != 1) off += idx * stride;
          stride *= r.shape[rd];
        }
      }
      args[k] = r.v[off];
    }
    res.v[i] = to_dtype(fn(args), out);
  }
  return res;
}

Ref ref_reduce(const Ref& x, std::vector<int> axes, bool keepdims, DType out, double init,
               const std::function<double(double, double)>& combine,
               const std::function<double(double, int64_t)>& finish) {
  const int nd = x.ndim();
  if (axes.empty())
    for (int d = 0; d < nd; ++d) axes.push_back(d);
  for (int& a : axes)
    if (a < 0) a += nd;
  std::vector<bool> red(nd, false);
  for (int a : axes) red[a] = true;
  Shape out_shape, kept_shape;
  int64_t count = 1;
  for (int d = 0; d < nd; ++d) {
    if (red[d]) {
      count *= x.shape[d];
      if (keepdims) out_shape.push_back(1);
    } else {
      out_shape.push_back(x.shape[d]);
      kept_shape.push_back(x.shape[d]);
    }
  }
  std::vector<double> acc(shape_size(kept_shape), init);
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t rest = i, o = 0, stride = 1;
    for (int d = nd - 1; d >= 0; --d) {
      int64_t idx = rest % x.shape[d];
      rest /= x.shape[d];
      if (!red[d]) {
        o += idx * stride;
        stride *= x.shape[d];
      }
    }
    acc[o] = combine(acc[o], x.v[i]);
  }
  Ref r;
  r.dtype = out;
  r.shape = out_shape;
  for (double a : acc) r.v.push_back(to_dtype(finish ? finish(a, count) : a, out));
  return r;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.op << (c.label.empty() ? "" : " " + c.label); }

const std::vector<std::pair<std::string, std::string>>& float16_rows() {
  static const std::vector<std::pair<std::string, std::string>> rows = {
      {"add", ""},        {"mul", ""},       {"exp", ""},        {"tanh", ""},        {"sum", ""},
      {"mean", ""},       {"max", ""},       {"dot", ""},        {"softmax", ""},     {"reshape", "all"},
      {"dimshuffle", ""}, {"subtensor", ""}, {"concatenate", ""}, {"inc_subtensor", ""}, {"log_softmax", ""},
      {"conv2d", ""},     {"pool_2d", ""}};
  return rows;
}

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> c;
    add_elemwise_cases(c);
    add_reduce_cases(c);
    add_blas_cases(c);
    add_shape_cases(c);
    add_nnet_cases(c);
    add_pool_cases(c);
    add_conv_cases(c);
    add_api_cases(c);
    for (const auto& [op, label] : float16_rows()) {
      bool found = false;
      for (Case& k : c)
        if (k.op == op && (label.empty() || k.label == label) && std::find(k.dtypes.begin(), k.dtypes.end(), DType::Float32) != k.dtypes.end()) {
          k.dtypes.push_back(DType::Float16);
          found = true;
        }
      if (!found) throw InternalError("float16_rows: no float32 case " + op + " '" + label + "'");
    }
    return c;
  }();
  return cases;
}

}  // namespace theon::testing
