// tensor::: Theano's tensor module in C++: variable constructors and every op builder.
//
//   Var x = tensor::matrix("x");                 // floatX, shape (?, ?)
//   Var i = tensor::ivector("i");                // int32
//   Var y = tensor::sum(tensor::exp(x), {1});    // reduce axis 1
//   Var p = tensor::softmax(tensor::dot(x, w) + b);
#pragma once
#include <theon/var.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace theon::tensor {

/// A scalar operand given as a Var or as a C++ number (a weak literal, as in expressions).
struct ScalarArg : Var {
  ScalarArg(const Var& v) : Var(v) {}
  template <Scalar S> ScalarArg(S s) : Var(as_var(s)) {}
};

// ---- variables (dtype defaults to config().floatX at the time of the call) ----
Var scalar(const std::string& name = "", std::optional<DType> dtype = std::nullopt);
Var vector(const std::string& name = "", std::optional<DType> dtype = std::nullopt);
Var matrix(const std::string& name = "", std::optional<DType> dtype = std::nullopt);
Var tensor3(const std::string& name = "", std::optional<DType> dtype = std::nullopt);
Var tensor4(const std::string& name = "", std::optional<DType> dtype = std::nullopt);
/// Any rank: `shape` gives static sizes (-1 unknown, 1 = broadcastable).
Var tensor(DType dtype, const std::vector<int64_t>& shape, const std::string& name = "");
// Typed forms, as in Theano: f = float32, d = float64, b = int8, w = int16, i = int32, l = int64.
#define THEON_TYPED_VARS(prefix)                                            \
  Var prefix##scalar(const std::string& name = "");                         \
  Var prefix##vector(const std::string& name = "");                         \
  Var prefix##matrix(const std::string& name = "");                         \
  Var prefix##tensor3(const std::string& name = "");                        \
  Var prefix##tensor4(const std::string& name = "");
THEON_TYPED_VARS(f)
THEON_TYPED_VARS(d)
THEON_TYPED_VARS(b)
THEON_TYPED_VARS(w)
THEON_TYPED_VARS(i)
THEON_TYPED_VARS(l)
#undef THEON_TYPED_VARS

// ---- elementwise (NumPy broadcasting, NEP 50 promotion) ----
// One builder per THEON_SCALAR_BUILDER row of theon/scalar_ops.def: add, sub, mul, true_div,
// floor_div, mod, pow, neg, abs, sign, sqr, maximum, minimum, clip(x, lo, hi), relu, lt, gt,
// le, ge, eq, neq, and_, or_, xor_, invert (logical not for bool, bitwise for integers), exp,
// log, log1p, expm1, sqrt, tanh, sigmoid, softplus, sin, cos, switch_(cond, a, b) (Theano's
// T.switch; numpy.where), ... (docs/OPS.md lists them all).
#define THEON_SCALAR_BUILDER(builder, functor, arity) THEON_TENSOR_ELEMWISE_##arity(builder)
#define THEON_TENSOR_ELEMWISE_1(builder) Var builder(const Var& a);
#define THEON_TENSOR_ELEMWISE_2(builder) Var builder(const Var& a, const Var& b);
#define THEON_TENSOR_ELEMWISE_3(builder) Var builder(const Var& a, const Var& b, const Var& c);
#include <theon/scalar_ops.def>
#undef THEON_TENSOR_ELEMWISE_1
#undef THEON_TENSOR_ELEMWISE_2
#undef THEON_TENSOR_ELEMWISE_3
#undef THEON_SCALAR_BUILDER
Var where(const Var& cond, const Var& a, const Var& b);
Var cast(const Var& x, DType dtype);

// ---- reductions (axis std::nullopt = all axes; negative axes count from the end) ----
/// Reduction axes: all of them (the default, or std::nullopt), one (`sum(x, 0)`) or a list
/// (`mean(x, {0, 1})`, a std::vector<int>). A bool is refused: `sum(x, true)` is a mistake
/// for keepdims.
struct Axes : std::optional<std::vector<int>> {
  Axes() = default;
  Axes(std::nullopt_t) {}
  Axes(int axis) : std::optional<std::vector<int>>(std::vector<int>{axis}) {}
  Axes(std::initializer_list<int> axes) : std::optional<std::vector<int>>(std::vector<int>(axes)) {}
  Axes(std::vector<int> axes) : std::optional<std::vector<int>>(std::move(axes)) {}
  Axes(std::optional<std::vector<int>> axes) : std::optional<std::vector<int>>(std::move(axes)) {}
  Axes(bool) = delete;
};
// sum, mean, prod, max, min, any, all: Var f(const Var& x, Axes axis = std::nullopt,
// bool keepdims = false), generated from their theon/ops.def rows (below).
// argmax, argmin: the index of the extremum along one axis (std::nullopt: of the flattened
// tensor), int64: Var f(const Var& x, std::optional<int> axis = std::nullopt, bool keepdims =
// false), generated from their theon/ops.def rows (below).

// ---- products ----
/// Theano's dot: vectors and matrices as numpy.dot; a scalar scales the other operand; higher
/// ranks sum over a's last axis and b's second-to-last (tensordot(a, b, {{a.ndim-1}, {b.ndim-2}})).
Var dot(const Var& a, const Var& b);
/// numpy.matmul: batched over leading dims, which broadcast; vectors promoted as NumPy does.
Var matmul(const Var& a, const Var& b);
/// numpy.tensordot: sums over a's last `axes` axes and b's first `axes`, or over a_axes[i] of
/// a paired with b_axes[i] of b (negative axes count from the end). The result's dims are a's
/// other dims, then b's.
Var tensordot(const Var& a, const Var& b, int axes = 2);
Var tensordot(const Var& a, const Var& b, const std::vector<int>& a_axes, const std::vector<int>& b_axes);
/// Theano's batched_dot: a[i] . b[i] for each i of the leading (batch) axis: (B, m, k) x (B, k, n)
/// -> (B, m, n); (B, k) operands act as vectors; a (B,) operand scales the other's rows.
Var batched_dot(const Var& a, const Var& b);
/// tensordot per batch element: axis 0 of both is the batch axis, the axes listed are summed.
Var batched_tensordot(const Var& a, const Var& b, const std::vector<int>& a_axes, const std::vector<int>& b_axes);
/// Theano's outer: the outer product of x and y, both flattened: (x.size, y.size).
Var outer(const Var& x, const Var& y);
/// x with `n_ones` broadcastable dims added in front / at the end; one inserted at `axis`
/// (negative counts from the end of the result: -1 appends).
Var shape_padleft(const Var& x, int n_ones = 1);
Var shape_padright(const Var& x, int n_ones = 1);
Var shape_padaxis(const Var& x, int axis);

// ---- shape ----
Var transpose(const Var& x, std::vector<int> axes = {});
Var dimshuffle(const Var& x, const std::vector<int>& pattern);
/// One entry may be -1 (inferred). The symbolic form takes an int64 vector.
Var reshape(const Var& x, const std::vector<int64_t>& shape);
Var reshape(const Var& x, const Var& shape);
/// Keeps the first ndim-1 dims and flattens the rest (Theano's flatten(ndim)).
Var flatten(const Var& x, int ndim = 1);
Var broadcast_to(const Var& x, const std::vector<int64_t>& shape);
Var concatenate(const std::vector<Var>& xs, int axis = 0);
Var stack(const std::vector<Var>& xs, int axis = 0);
/// The shape as an int64 vector; size as an int64 scalar.
Var shape(const Var& x);
Var size(const Var& x);

// ---- indexing ----
/// x[indices]: basic slicing (bounds may be symbolic scalars) and integer-vector indexing.
Var subtensor(const Var& x, const std::vector<Index>& indices);
/// numpy.take(x, indices, axis): out-of-range indices raise IndexError at call time.
Var take(const Var& x, const Var& indices, int axis = 0);
/// Theano's set_subtensor(x[idx], y) / inc_subtensor(x[idx], y): `sub` must be an indexing
/// result; returns a new tensor (x is not modified).
Var set_subtensor(const Var& sub, const Var& y);
Var inc_subtensor(const Var& sub, const Var& y);

// ---- construction ----
Var zeros_like(const Var& x, std::optional<DType> dtype = std::nullopt);
Var ones_like(const Var& x, std::optional<DType> dtype = std::nullopt);
/// A tensor of `shape` filled with scalar `value` (Theano's alloc); shape entries symbolic.
Var alloc(const Var& value, const std::vector<Var>& shape);
Var alloc(const Var& value, const std::vector<int64_t>& shape);
/// numpy.arange / Theano's T.arange: start, stop and step are scalars (symbolic or numbers);
/// the dtype defaults to Theano's rule (integers give int64, floats their promoted float dtype,
/// literal floats floatX). A step of 0 is a ValueError (when the function runs if symbolic).
///   tensor::arange(n); tensor::arange(1, n, 2); tensor::arange(0.0, 1.0, 0.1, DType::Float64)
Var arange(const ScalarArg& stop);
Var arange(const ScalarArg& start, const ScalarArg& stop, const ScalarArg& step = 1,
           std::optional<DType> dtype = std::nullopt);

// ---- Theano's everyday names composed from other ops (src/api/tensor_extra.cpp) ----
// Differentiable wherever Theano's are; sizes and counts may be symbolic scalars.
/// n x m matrix with ones on diagonal k (Theano's eye; m defaults to n, dtype to floatX).
Var eye(const ScalarArg& n);
Var eye(const ScalarArg& n, const ScalarArg& m, const ScalarArg& k = 0, std::optional<DType> dtype = std::nullopt);
/// eye of x's (matrix) shape and dtype.
Var identity_like(const Var& x);
/// numpy.tile: x repeated reps[i] times along dim i (reps shorter than x.ndim pads with 1s on
/// the left; longer adds leading dims to x).
Var tile(const Var& x, const std::vector<ScalarArg>& reps);
/// numpy.repeat: each element repeated `repeats` times along `axis` (std::nullopt: of the
/// flattened x); `repeats` a scalar or an integer vector of one count per element.
Var repeat(const Var& x, const Var& repeats, std::optional<int> axis = std::nullopt);
/// numpy.linspace: `num` evenly spaced values from start to stop (stop included when endpoint).
Var linspace(const ScalarArg& start, const ScalarArg& stop, int64_t num = 50, bool endpoint = true);
/// x without its broadcastable dims (Theano's squeeze), or without the listed ones (each must be
/// broadcastable).
Var squeeze(const Var& x, std::optional<std::vector<int>> axes = std::nullopt);
/// x with the listed dims broadcastable (checked to be 1 when the function runs) / not
/// broadcastable / following `pattern` (Theano's addbroadcast, unbroadcast, patternbroadcast).
Var addbroadcast(const Var& x, const std::vector<int>& axes);
Var unbroadcast(const Var& x, const std::vector<int>& axes);
Var patternbroadcast(const Var& x, const std::vector<bool>& pattern);
/// x, checked to have `shape` when the function runs (ValueError naming x otherwise); integer
/// entries become x's static sizes.
Var specify_shape(const Var& x, const std::vector<ScalarArg>& shape);
/// numpy.roll: elements shifted by `shift` along `axis` (std::nullopt: of the flattened x,
/// reshaped back), wrapping around.
Var roll(const Var& x, const ScalarArg& shift, std::optional<int> axis = std::nullopt);
/// numpy.diagonal: the diagonal `offset` of the (axis1, axis2) planes, as the last dim.
Var diagonal(const Var& x, int offset = 0, int axis1 = 0, int axis2 = 1);
/// numpy.diag: a vector's square matrix with it on diagonal k, or a matrix's diagonal k.
Var diag(const Var& x, int k = 0);
/// numpy.sort / numpy.argsort along `axis` (std::nullopt: the flattened x), ascending, stable,
/// NaN last; argsort gives int64 positions. Theano's theano.tensor.sort / argsort.
Var sort(const Var& x, std::optional<int> axis = -1);
Var argsort(const Var& x, std::optional<int> axis = -1);
/// numpy.flatnonzero (int64 row-major positions of x's non-zero elements), numpy.nonzero (one
/// int64 index vector per dim) and Theano's nonzero_values (x's non-zero elements, flattened).
/// Their length is data: counted when the function runs (on a GPU, a synchronising read).
Var flatnonzero(const Var& x);
std::vector<Var> nonzero(const Var& x);
Var nonzero_values(const Var& x);

// ---- neural-network ops (also in nnet::) ----
Var softmax(const Var& x, int axis = -1);
Var log_softmax(const Var& x, int axis = -1);
/// Theano's categorical_crossentropy(coding_dist, true_dist): true_dist is an integer vector
/// of class indices or a one-hot (probability) matrix; one value per row.
Var categorical_crossentropy(const Var& coding_dist, const Var& true_dist);
/// One-hot rows of length n for integer indices (dtype defaults to floatX).
Var one_hot(const Var& indices, int64_t n, std::optional<DType> dtype = std::nullopt);

// ---- generated from the THEON_OP rows of theon/ops.def with a signature other than Custom ----
#define THEON_OP(name, family, signature) THEON_TENSOR_BUILDER_##signature(name)
#define THEON_TENSOR_BUILDER_Custom(name)
#define THEON_TENSOR_BUILDER_AxisScan(name) Var name(const Var& x, std::optional<int> axis = std::nullopt);
#define THEON_TENSOR_BUILDER_Reduce(name) Var name(const Var& x, Axes axis = std::nullopt, bool keepdims = false);
#define THEON_TENSOR_BUILDER_ArgReduce(name) \
  Var name(const Var& x, std::optional<int> axis = std::nullopt, bool keepdims = false);
#include <theon/ops.def>
#undef THEON_TENSOR_BUILDER_Custom
#undef THEON_TENSOR_BUILDER_AxisScan
#undef THEON_TENSOR_BUILDER_Reduce
#undef THEON_TENSOR_BUILDER_ArgReduce
#undef THEON_OP

}  // namespace theon::tensor

#include <theon/conv.hpp>  // conv2d and its gradients (tensor:: and nnet::)

namespace theon::nnet {
using tensor::categorical_crossentropy;
using tensor::log_softmax;
using tensor::relu;
using tensor::sigmoid;
using tensor::softmax;
using tensor::softplus;
using tensor::softsign;
}  // namespace theon::nnet
