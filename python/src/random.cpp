// theon::RandomStreams for theon.tensor.shared_randomstreams and theon.sandbox.rng_mrg, which
// convert sizes and parameters to Vars and give Theano's signatures.
#include "bindings.hpp"

#include <theon/random.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace theon::py {
namespace {

std::optional<DType> opt_dtype(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return parse_dtype(*s);
}

// A size from Python: a list of int scalar Vars, or one int vector Var (x.shape).
RandomSize size_of(const std::vector<Var>& dims, const std::optional<Var>& shape_vector) {
  if (shape_vector) return RandomSize(*shape_vector);
  return RandomSize(dims);
}

}  // namespace

void init_random(nb::module_& m) {
  nb::class_<RandomStreams>(m, "RandomStreams", "theon::RandomStreams: Philox4x32-10 random variables")
      .def(nb::init<int64_t>(), nb::arg("seed"))
      .def("uniform",
           [](RandomStreams& r, const std::vector<Var>& dims, std::optional<Var> shape, const Var& low,
              const Var& high, std::optional<std::string> dtype) {
             return r.uniform(size_of(dims, shape), low, high, opt_dtype(dtype));
           })
      .def("normal",
           [](RandomStreams& r, const std::vector<Var>& dims, std::optional<Var> shape, const Var& avg,
              const Var& std, std::optional<std::string> dtype) {
             return r.normal(size_of(dims, shape), avg, std, opt_dtype(dtype));
           })
      .def("binomial",
           [](RandomStreams& r, const std::vector<Var>& dims, std::optional<Var> shape, int64_t n, const Var& p,
              const std::string& dtype) { return r.binomial(size_of(dims, shape), n, p, parse_dtype(dtype)); })
      .def("random_integers",
           [](RandomStreams& r, const std::vector<Var>& dims, std::optional<Var> shape, const Var& low,
              const Var& high, const std::string& dtype) {
             return r.random_integers(size_of(dims, shape), low, high, parse_dtype(dtype));
           })
      .def("multinomial", [](RandomStreams& r, const Var& pvals, int64_t n,
                             const std::string& dtype) { return r.multinomial(pvals, n, parse_dtype(dtype)); })
      .def("choice",
           [](RandomStreams& r, const std::vector<Var>& dims, std::optional<Var> shape, int64_t a, bool replace,
              std::optional<Var> p, const std::string& dtype) {
             return r.choice(size_of(dims, shape), a, replace, p ? *p : Var(), parse_dtype(dtype));
           })
      .def("permutation", [](RandomStreams& r, int64_t n,
                             const std::string& dtype) { return r.permutation(n, parse_dtype(dtype)); })
      .def("seed", &RandomStreams::seed)
      .def("state_updates", &RandomStreams::state_updates)
      .def("state_update_of", &RandomStreams::state_update_of);
}

}  // namespace theon::py
