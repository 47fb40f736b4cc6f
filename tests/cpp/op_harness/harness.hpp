// The op harness: one table of cases over the op registry (include/theon/ops.def). Each case
// builds a graph from input Vars, runs it through theon::function on random inputs of
// several shapes (broadcasting, size-0 and size-1 dims) and layouts (contiguous, transposed,
// strided), and compares with an independent float64 reference written here in the tests.
// An op in the registry without a case fails OpHarness.EveryRegisteredOpHasACase.
//
// Environment:
//   THEON_HARNESS_DTYPES=first   each case runs with its first dtype only (for slow runs: the
//                                GPU simulator's deferred/guard/random modes); unset or `all`:
//                                every dtype of every case.
// On a GPU (device=cuda...), a case with `float_atomics` runs twice: with atomics, compared
// to `atomics_rtol`/`atomics_atol` (float atomics add in an unspecified order), and with
// config().deterministic, compared as strictly as on the CPU.
#pragma once
#include <theon/theon.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace theon::testing {

/// A float64 reference tensor: row-major values plus the dtype the op must produce.
struct Ref {
  DType dtype = DType::Float64;
  Shape shape;
  std::vector<double> v;
  static Ref of(const Array& a);
  int ndim() const { return static_cast<int>(shape.size()); }
  int64_t size() const { return static_cast<int64_t>(v.size()); }
};

/// How the harness fills float inputs.
enum class Domain { Normal, Positive, Unit /* (-1, 1) */, SmallInt /* integers -9..9 as values */ };

struct Case {
  std::string op;     // registry name, e.g. "add"
  std::string label;  // distinguishes several cases of one op (dtype, variant)
  /// Dtypes of the value inputs to run with (one run per dtype).
  std::vector<DType> dtypes;
  /// Shape sets: one shape per input.
  std::vector<std::vector<Shape>> shapes;
  Domain domain = Domain::Normal;
  /// Makes the inputs for one run (default: every input of `dtype`, filled per domain).
  std::function<std::vector<Array>(DType dtype, const std::vector<Shape>& shapes, uint64_t seed)> make_inputs;
  std::function<Var(const std::vector<Var>&)> build;
  std::function<Ref(const std::vector<Ref>&)> reference;
  bool vary_layout = true;  // also run with transposed / strided views of the inputs
  double rtol32 = 2e-5, atol32 = 1e-6;   // float32 outputs
  double rtol64 = 1e-12, atol64 = 1e-13; // float64 outputs (integers and bools must be exact)
  double rtol16 = 4e-3, atol16 = 1e-3;   // float16 outputs (computed in float32, rounded to half)
  /// Float sums whose order the GPU leaves open (inc_subtensor with repeated indices uses
  /// float atomicAdd unless config().deterministic): on a GPU, compared to these tolerances
  /// (relative to the largest term) without deterministic, and exactly (the tolerances above)
  /// with it. Integer results are exact either way (integer atomics commute).
  bool float_atomics = false;
  double atomics_tol32 = 1e-6, atomics_tol64 = 1e-14;
  /// Also check the gradient against central finite differences (theon::verify_grad) at
  /// float64 inputs of every non-empty shape set: the op's gradient row. Cases whose op has
  /// no gradient (integer outputs) or a separate gradient suite (tests/cpp/autodiff) leave it off.
  bool check_grad = false;
};

/// The dtypes of `c` this run covers (THEON_HARNESS_DTYPES, above).
std::vector<DType> harness_dtypes(const Case& c);

/// Random inputs following the domain; integer dtypes get values in -9..9 (0..9 unsigned),
/// bools half true.
Array random_array(DType dtype, const Shape& shape, Domain domain, uint64_t seed);
/// A non-contiguous array with the same values (variant 1: transposed, 2: strided).
Array non_contiguous(const Array& a, int variant);

/// NumPy broadcast of the references, applying `fn` to each element tuple.
Ref ref_map(const std::vector<Ref>& ins, DType out, const std::function<double(const std::vector<double>&)>& fn);
/// Reduction over `axes` (empty: all) with an initial value and a combiner; `finish` gets
/// the accumulated value and the count.
Ref ref_reduce(const Ref& x, std::vector<int> axes, bool keepdims, DType out, double init,
               const std::function<double(double, double)>& combine,
               const std::function<double(double, int64_t)>& finish = nullptr);
/// Issue 29's softmax rows (nnet_cases.cpp): a (rows, n) matrix of `dtype` (float) holding the
/// dtype's largest values of both signs (spreads beyond its range), +-inf, NaN and denormals
/// at every lane class of the CPU's vectors and the GPU's warps (or at `lanes`), and an int64
/// label per row.
std::pair<Array, Array> extreme_softmax_rows(DType dtype, int64_t n, const std::vector<int64_t>& lanes = {});
/// Rounds/wraps a double to what `dtype` stores (ints wrap, bools are 0/1, float32 and float16
/// round to nearest even).
double to_dtype(double x, DType dtype);

// Case tables, one per op family (tests/cpp/op_harness/<family>_cases.cpp).
void add_elemwise_cases(std::vector<Case>& cases);
void add_reduce_cases(std::vector<Case>& cases);
void add_blas_cases(std::vector<Case>& cases);
void add_shape_cases(std::vector<Case>& cases);
void add_nnet_cases(std::vector<Case>& cases);
void add_pool_cases(std::vector<Case>& cases);
void add_conv_cases(std::vector<Case>& cases);
void add_api_cases(std::vector<Case>& cases);  // issue 17's everyday names (api_cases.cpp)

const std::vector<Case>& all_cases();
/// The (op, label) rows ("": every row of the op that runs float32) that also run with float16 inputs: a representative sample of every
/// family (float16 is storage, computed in float32: docs/guide/float16.md). all_cases() adds
/// float16 to their dtypes and fails if a row is missing.
const std::vector<std::pair<std::string, std::string>>& float16_rows();
/// gtest prints cases by name, not as bytes.
void PrintTo(const Case& c, std::ostream* os);

}  // namespace theon::testing
