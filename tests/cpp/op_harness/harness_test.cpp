// Runs every case of the op harness: each dtype x shape set x layout, against its reference.
#include "harness.hpp"

#include "ops/registry.hpp"

#include <gtest/gtest.h>

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

void compare(const Case& c, const Array& got, const Ref& want, const std::string& where) {
  ASSERT_EQ(dtype_name(got.dtype()), dtype_name(want.dtype)) << where << ": output dtype";
  ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape)) << where << ": output shape";
  std::vector<double> g = got.to_vector<double>();
  const bool f32 = want.dtype == DType::Float32, f64 = want.dtype == DType::Float64;
  const double rtol = f32 ? c.rtol32 : f64 ? c.rtol64 : 0, atol = f32 ? c.atol32 : f64 ? c.atol64 : 0;
  for (size_t i = 0; i < g.size(); ++i) {
    double w = want.v[i];
    if (std::isnan(w) && std::isnan(g[i])) continue;
    if (std::isinf(w) && g[i] == w) continue;
    ASSERT_LE(std::abs(g[i] - w), atol + rtol * std::abs(w))
        << where << ": element " << i << " is " << g[i] << ", reference " << w;
  }
}

TEST_P(OpHarness, MatchesFloat64Reference) {
  const Case& c = GetParam();
  // The GPU suite runs this binary with THEON_FLAGS=device=cuda,on_fallback=raise (ctest
  // label gpu): the same cases, every node on the GPU, against the same references.
  if (Device::parse(config().device).is_cuda() && !cuda_status().ok)
    GTEST_SKIP() << "device=" << config().device << " but no CUDA device available: " << cuda_status().reason;
  uint64_t seed = 1;
  for (DType dtype : c.dtypes) {
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
      std::string where = c.op + " " + c.label + " dtype " + std::string(dtype_name(dtype)) + " shapes";
      for (auto& s : shapes) where += " " + shape_str(s);
      compare(c, f(inputs)[0], want, where + " (contiguous)");
      if (!c.vary_layout) continue;
      for (int variant = 1; variant <= 2; ++variant) {
        std::vector<Array> nc;
        for (auto& a : inputs) nc.push_back(non_contiguous(a, variant));
        compare(c, f(nc)[0], want, where + (variant == 1 ? " (transposed inputs)" : " (strided inputs)"));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, OpHarness, ::testing::ValuesIn(all_cases()), case_name);

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
