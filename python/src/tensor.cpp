// theon::tensor builders. Python's theon.tensor converts operands (literals, arrays) to Vars
// and gives the Theano signatures; these are the C++ functions one to one.
#include "bindings.hpp"

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

}  // namespace

void init_tensor(nb::module_& m) {
  using namespace theon::tensor;
  nb::module_ t = m.def_submodule("tensor", "theon::tensor builders");

  t.def("make", [](const std::string& kind, const std::string& name, std::optional<std::string> dtype) {
    auto dt = opt_dtype(dtype);
    if (kind == "scalar") return scalar(name, dt);
    if (kind == "vector") return vector(name, dt);
    if (kind == "matrix") return matrix(name, dt);
    if (kind == "tensor3") return tensor3(name, dt);
    if (kind == "tensor4") return tensor4(name, dt);
    throw ValueError("unknown variable kind '" + kind + "'");
  }, nb::arg("kind"), nb::arg("name") = "", nb::arg("dtype") = nb::none());
  t.def("tensor", [](const std::string& dtype, const std::vector<int64_t>& shape, const std::string& name) {
    return tensor::tensor(parse_dtype(dtype), shape, name);
  }, nb::arg("dtype"), nb::arg("shape"), nb::arg("name") = "");

  // Generated from the registry rows (theon/scalar_ops.def, theon/ops.def): each builder under
  // its C++ name, and `generated_builders()` listing them with their signature so the Python
  // package gives each a theon.tensor name without a hand-written line.
  std::vector<std::pair<std::string, std::string>> generated;
#define THEON_SCALAR_BUILDER(builder, functor, arity) THEON_BIND_ELEMWISE_##arity(builder)
#define THEON_BIND_ELEMWISE_1(fn) t.def(#fn, &fn, nb::arg("x")); generated.emplace_back(#fn, "Elemwise1");
#define THEON_BIND_ELEMWISE_2(fn) t.def(#fn, &fn, nb::arg("a"), nb::arg("b")); generated.emplace_back(#fn, "Elemwise2");
#define THEON_BIND_ELEMWISE_3(fn) \
  t.def(#fn, &fn, nb::arg("a"), nb::arg("b"), nb::arg("c")); generated.emplace_back(#fn, "Elemwise3");
#include <theon/scalar_ops.def>
#undef THEON_BIND_ELEMWISE_1
#undef THEON_BIND_ELEMWISE_2
#undef THEON_BIND_ELEMWISE_3
#undef THEON_SCALAR_BUILDER
#define THEON_OP(name, family, signature) THEON_BIND_##signature(name)
#define THEON_BIND_Custom(name)
#define THEON_BIND_AxisScan(name) \
  t.def(#name, &name, nb::arg("x"), nb::arg("axis") = nb::none()); generated.emplace_back(#name, "AxisScan");
#define THEON_BIND_ArgReduce(name)                                                                    \
  t.def(#name, &name, nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false);       \
  generated.emplace_back(#name, "ArgReduce");
#define THEON_BIND_Reduce(name)                                                                       \
  t.def(#name, [](const Var& x, std::optional<std::vector<int>> axis, bool keepdims) {                \
    return name(x, Axes(std::move(axis)), keepdims);                                                  \
  }, nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false);                        \
  generated.emplace_back(#name, "Reduce");
#include <theon/ops.def>
#undef THEON_BIND_Custom
#undef THEON_BIND_AxisScan
#undef THEON_BIND_Reduce
#undef THEON_BIND_ArgReduce
#undef THEON_OP
  t.def("generated_builders", [generated] { return generated; });

#define BIN(name) t.def(#name, &name, nb::arg("a"), nb::arg("b"));
  BIN(dot) BIN(matmul)
#undef BIN
#define UN(name) t.def(#name, &name, nb::arg("x"));
  UN(shape) UN(size)
#undef UN
  t.def("cast", [](const Var& x, const std::string& dt) { return cast(x, parse_dtype(dt)); });

  t.def("transpose", &tensor::transpose, nb::arg("x"), nb::arg("axes") = std::vector<int>{});
  t.def("broadcast_to", &broadcast_to, nb::arg("x"), nb::arg("shape"));
  t.def("concatenate", &concatenate, nb::arg("xs"), nb::arg("axis") = 0);
  t.def("stack", &stack, nb::arg("xs"), nb::arg("axis") = 0);
  t.def("take", &take, nb::arg("x"), nb::arg("indices"), nb::arg("axis") = 0);
  t.def("set_subtensor", &set_subtensor, nb::arg("sub"), nb::arg("y"));
  t.def("inc_subtensor", &inc_subtensor, nb::arg("sub"), nb::arg("y"));
  t.def("zeros_like", [](const Var& x, std::optional<std::string> dt) { return zeros_like(x, opt_dtype(dt)); },
        nb::arg("x"), nb::arg("dtype") = nb::none());
  t.def("ones_like", [](const Var& x, std::optional<std::string> dt) { return ones_like(x, opt_dtype(dt)); },
        nb::arg("x"), nb::arg("dtype") = nb::none());
  t.def("alloc", [](const Var& v, const std::vector<Var>& s) { return alloc(v, s); });
  t.def("alloc_static", [](const Var& v, const std::vector<int64_t>& s) { return alloc(v, s); });
  t.def("softmax", &softmax, nb::arg("x"), nb::arg("axis") = -1);
  t.def("log_softmax", &log_softmax, nb::arg("x"), nb::arg("axis") = -1);
  t.def("categorical_crossentropy", &categorical_crossentropy, nb::arg("coding_dist"), nb::arg("true_dist"));
  t.def("one_hot", [](const Var& i, int64_t n, std::optional<std::string> dt) { return one_hot(i, n, opt_dtype(dt)); },
        nb::arg("indices"), nb::arg("n"), nb::arg("dtype") = nb::none());

  // ---- arange and the products built from other ops (tensordot, batched_dot, outer, shape_pad*) ----
  t.def("arange", [](const Var& start, const Var& stop, const Var& step, std::optional<std::string> dt) {
    return arange(start, stop, step, opt_dtype(dt));
  }, nb::arg("start"), nb::arg("stop"), nb::arg("step"), nb::arg("dtype") = nb::none());
  t.def("tensordot", [](const Var& a, const Var& b, const std::vector<int>& a_axes, const std::vector<int>& b_axes) {
    return tensordot(a, b, a_axes, b_axes);
  }, nb::arg("a"), nb::arg("b"), nb::arg("a_axes"), nb::arg("b_axes"));
  t.def("tensordot_n", [](const Var& a, const Var& b, int axes) { return tensordot(a, b, axes); },
        nb::arg("a"), nb::arg("b"), nb::arg("axes"));
  t.def("batched_tensordot", &batched_tensordot, nb::arg("a"), nb::arg("b"), nb::arg("a_axes"), nb::arg("b_axes"));
  t.def("batched_dot", &batched_dot, nb::arg("a"), nb::arg("b"));
  t.def("outer", &outer, nb::arg("x"), nb::arg("y"));
  t.def("shape_padleft", &shape_padleft, nb::arg("x"), nb::arg("n_ones") = 1);
  t.def("shape_padright", &shape_padright, nb::arg("x"), nb::arg("n_ones") = 1);
  t.def("shape_padaxis", &shape_padaxis, nb::arg("x"), nb::arg("axis"));

  // ---- Theano's everyday names composed from other ops (src/api/tensor_extra.cpp) ----
  auto scalar_args = [](const std::vector<Var>& vs) { return std::vector<ScalarArg>(vs.begin(), vs.end()); };
  t.def("eye", [](const Var& n, const Var& m, const Var& k, std::optional<std::string> dt) {
    return eye(n, m, k, opt_dtype(dt));
  }, nb::arg("n"), nb::arg("m"), nb::arg("k"), nb::arg("dtype") = nb::none());
  t.def("identity_like", &identity_like, nb::arg("x"));
  t.def("tile", [scalar_args](const Var& x, const std::vector<Var>& reps) { return tile(x, scalar_args(reps)); },
        nb::arg("x"), nb::arg("reps"));
  t.def("repeat", &repeat, nb::arg("x"), nb::arg("repeats"), nb::arg("axis") = nb::none());
  t.def("linspace", [](const Var& a, const Var& b, int64_t num, bool endpoint) { return linspace(a, b, num, endpoint); },
        nb::arg("start"), nb::arg("stop"), nb::arg("num"), nb::arg("endpoint") = true);
  t.def("squeeze", &squeeze, nb::arg("x"), nb::arg("axes") = nb::none());
  t.def("addbroadcast", &addbroadcast, nb::arg("x"), nb::arg("axes"));
  t.def("unbroadcast", &unbroadcast, nb::arg("x"), nb::arg("axes"));
  t.def("patternbroadcast", &patternbroadcast, nb::arg("x"), nb::arg("pattern"));
  t.def("specify_shape", [scalar_args](const Var& x, const std::vector<Var>& s) { return specify_shape(x, scalar_args(s)); },
        nb::arg("x"), nb::arg("shape"));
  t.def("roll", [](const Var& x, const Var& shift, std::optional<int> axis) { return roll(x, shift, axis); },
        nb::arg("x"), nb::arg("shift"), nb::arg("axis") = nb::none());
  t.def("diagonal", &diagonal, nb::arg("x"), nb::arg("offset") = 0, nb::arg("axis1") = 0, nb::arg("axis2") = 1);
  t.def("diag", &diag, nb::arg("x"), nb::arg("k") = 0);
  t.def("sort", [](const Var& x, std::optional<int> axis) { return tensor::sort(x, axis); }, nb::arg("x"),
        nb::arg("axis") = nb::none());
  t.def("argsort", [](const Var& x, std::optional<int> axis) { return tensor::argsort(x, axis); }, nb::arg("x"),
        nb::arg("axis") = nb::none());
  t.def("flatnonzero", &flatnonzero, nb::arg("x"));
  t.def("nonzero", &nonzero, nb::arg("x"));
  t.def("nonzero_values", &nonzero_values, nb::arg("x"));
}

}  // namespace theon::py
