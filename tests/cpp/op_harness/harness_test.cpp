// Runs every case of the op harness: each dtype x shape set x layout, against its reference.
#include "harness.hpp"

#include "backends/cuda/gpu_test_support.hpp"

#include "ops/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace theon::testing {
namespace {

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.op + (info.param.label.empty() ? "" : "_" + info.param.label);
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n + "_" + std::to_string(info.index);
}

class OpHarness : public ::testing::TestWithParam<Case> {};

struct Tolerance {
  double rtol32, atol32, rtol64, atol64;
  bool scaled;
  double rtol16 = 4e-3, atol16 = 1e-3;  // atol is relative to the largest reference magnitude (float atomics)
};

Tolerance tolerance(const Case& c, bool float_atomics) {
  if (!float_atomics) return {c.rtol32, c.atol32, c.rtol64, c.atol64, false, c.rtol16, c.atol16};
  return {std::max(c.rtol32, c.atomics_tol32), c.atomics_tol32, std::max(c.rtol64, c.atomics_tol64), c.atomics_tol64,
          true, c.rtol16, c.atol16};
}

void compare(const Tolerance& t, const Array& got, const Ref& want, const std::string& where) {
  ASSERT_EQ(dtype_name(got.dtype()), dtype_name(want.dtype)) << where << ": output dtype";
  ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape)) << where << ": output shape";
  std::vector<double> g = got.to_vector<double>();
  const bool f32 = want.dtype == DType::Float32, f64 = want.dtype == DType::Float64, f16 = want.dtype == DType::Float16;
  const double rtol = f32 ? t.rtol32 : f64 ? t.rtol64 : f16 ? t.rtol16 : 0;
  double atol = f32 ? t.atol32 : f64 ? t.atol64 : f16 ? t.atol16 : 0;
  if (t.scaled) {
    double scale = 1;
    for (double w : want.v)
      if (std::isfinite(w)) scale = std::max(scale, std::abs(w));
    atol *= scale;
  }
  for (size_t i = 0; i < g.size(); ++i) {
    double w = want.v[i];
    if (std::isnan(w) && std::isnan(g[i])) continue;
    if (std::isinf(w) && g[i] == w) continue;
    ASSERT_LE(std::abs(g[i] - w), atol + rtol * std::abs(w))
        << where << ": element " << i << " is " << g[i] << ", reference " << w;
  }
}

// Every dtype x shape set x layout of `c`, compared with `tol`; `note` goes into messages.
void run_case(const Case& c, const Tolerance& tol, const std::string& note) {
  uint64_t seed = 1;
  for (DType dtype : harness_dtypes(c)) {
    for (const auto& shapes : c.shapes) {
      std::vector<Array> inputs = c.make_inputs ? c.make_inputs(dtype, shapes, seed++)
                                                : std::vector<Array>{};
      if (!c.make_inputs)
        for (size_t k = 0; k < shapes.size(); ++k) inputs.push_back(random_array(dtype, shapes[k], c.domain, seed++));
      std::vector<Var> vars;
      for (size_t k = 0; k < inputs.size(); ++k)
        vars.push_back(tensor::tensor(inputs[k].dtype(), std::vector<int64_t>(inputs[k].ndim(), -1),
                                      "in" + std::to_string(k)));
      Var out = c.build(vars);
      std::vector<Ref> refs;
      for (auto& a : inputs) refs.push_back(Ref::of(a));
      Ref want = c.reference(refs);
      Function f = function(vars, {out}, {.on_unused_input = "ignore"});
      std::string where = c.op + " " + c.label + note + " dtype " + std::string(dtype_name(dtype)) + " shapes";
      for (auto& s : shapes) where += " " + shape_str(s);
      compare(tol, f(inputs)[0], want, where + " (contiguous)");
      if (::testing::Test::HasFatalFailure() || !c.vary_layout) continue;
      for (int variant = 1; variant <= 2; ++variant) {
        std::vector<Array> nc;
        for (auto& a : inputs) nc.push_back(non_contiguous(a, variant));
        compare(tol, f(nc)[0], want, where + (variant == 1 ? " (transposed inputs)" : " (strided inputs)"));
      }
    }
  }
}

TEST_P(OpHarness, MatchesFloat64Reference) {
  const Case& c = GetParam();
  // The GPU suite runs this binary with THEON_FLAGS=device=cuda,on_fallback=raise (ctest
  // label gpu): the same cases, every node on the GPU, against the same references.
  const Device device = Device::parse(config().device);
  const bool on_gpu = device.is_cuda();
  if (on_gpu) THEON_REQUIRE_CUDA_DEVICES(device.index + 1);
  if (!on_gpu || !c.float_atomics || config().deterministic) {
    run_case(c, tolerance(c, false), "");
    return;
  }
  // Float atomics on a GPU add in an unspecified order: to a tolerance as they come, and
  // exactly (the CPU's order) with config().deterministic, which the kernels read when they run.
  run_case(c, tolerance(c, true), " (float atomics)");
  struct Restore {
    ~Restore() { config().deterministic = false; }
  } restore;
  config().deterministic = true;
  run_case(c, tolerance(c, false), " (deterministic)");
}

// The cases with a gradient row (check_grad), as their own suite: a skip would fail the
// simulator's runs, which refuse skipped tests.
std::vector<Case> gradient_cases() {
  std::vector<Case> out;
  for (const Case& c : all_cases())
    if (c.check_grad) out.push_back(c);
  return out;
}

class OpHarnessGradient : public ::testing::TestWithParam<Case> {};

TEST_P(OpHarnessGradient, MatchesFiniteDifferences) {
  const Case& c = GetParam();
  const Device device = Device::parse(config().device);
  if (device.is_cuda()) THEON_REQUIRE_CUDA_DEVICES(device.index + 1);
  uint64_t seed = 1000;
  for (const auto& shapes : c.shapes) {
    std::vector<Array> points;
    bool empty = false;
    for (const Shape& s : shapes) {
      points.push_back(random_array(DType::Float64, s, c.domain, seed++));
      empty = empty || shape_size(s) == 0;
    }
    if (empty) continue;
    // Integer inputs a case's make_inputs adds (indices) are constants of the graph.
    std::vector<Var> fixed;
    if (c.make_inputs) {
      const std::vector<Array> all = c.make_inputs(DType::Float64, shapes, seed++);
      for (size_t i = points.size(); i < all.size(); ++i) fixed.push_back(constant(all[i]));
    }
    auto build = [&](const std::vector<Var>& v) {
      std::vector<Var> all = v;
      all.insert(all.end(), fixed.begin(), fixed.end());
      return c.build(all);
    };
    std::string where = c.op + " " + c.label + " shapes";
    for (auto& s : shapes) where += " " + shape_str(s);
    try {
      verify_grad(build, points);
    } catch (const std::exception& e) {
      ADD_FAILURE() << where << ": " << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, OpHarness, ::testing::ValuesIn(all_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Ops, OpHarnessGradient, ::testing::ValuesIn(gradient_cases()), case_name);

TEST(OpHarnessRegistry, EveryRegisteredOpHasACase) {
  std::set<std::string> covered;
  for (auto& c : all_cases()) covered.insert(c.op);
  for (auto& op : ops::registered_ops()) EXPECT_TRUE(covered.count(op.name)) << "op '" << op.name << "' has no harness case";
}

TEST(OpHarnessRegistry, EveryCaseNamesARegisteredOp) {
  std::set<std::string> registered;
  for (auto& op : ops::registered_ops()) registered.insert(op.name);
  for (auto& c : all_cases()) EXPECT_TRUE(registered.count(c.op)) << "case for unregistered op '" << c.op << "'";
}

}  // namespace
}  // namespace theon::testing
