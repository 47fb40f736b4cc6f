// Memory plan: intermediates are recycled as soon as their last reader has run (and written
// in place where the inplace pass allows), so a long elementwise chain needs a couple of
// buffers, not one per node; explain() reports the last call's peak and buffer counts.
#include <theon/theon.hpp>

#include "exec/function_impl.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace theon {
namespace {

struct ExcludeGuard {
  std::string saved;
  explicit ExcludeGuard(const std::string& what) : saved(config().optimizer_excluding) {
    config().optimizer_excluding = what;
  }
  ~ExcludeGuard() { config().optimizer_excluding = saved; }
};

// Ten elementwise ops in a chain; values stay in a modest range.
Var chain(const Var& x) {
  Var y = tensor::tanh(x);
  y = y * 0.5;
  y = tensor::exp(y);
  y = tensor::sin(y);
  y = y + 1.5;
  y = tensor::log(y);
  y = tensor::abs(y);
  y = tensor::sqrt(y);
  y = y - 0.25;
  y = tensor::cos(y);
  return y;
}

double reference(double v) {
  double y = std::tanh(v) * 0.5;
  y = std::log(std::sin(std::exp(y)) + 1.5);
  y = std::sqrt(std::abs(y)) - 0.25;
  return std::cos(y);
}

constexpr int64_t kN = 1 << 20;
constexpr size_t kBytes = kN * sizeof(float);

void check_values(const Array& out, const Array& in) {
  auto o = out.to_vector<float>(), x = in.to_vector<float>();
  for (int64_t i = 0; i < kN; i += 4099) ASSERT_NEAR(o[i], reference(x[i]), 1e-5) << i;
}

TEST(MemoryPlan, ChainOfTenNeedsFewBuffersWithInplace) {
  ExcludeGuard guard("fusion");
  Var x = tensor::vector("x");
  Function f = function({x}, {chain(x)});
  EXPECT_EQ(f.explain().find("memory: no call yet") != std::string::npos, true) << f.explain();
  Array xv = Array::randn({kN}, 1);
  Array out = f({xv})[0];
  check_values(out, xv);
  auto m = f.impl()->memory_report();
  ASSERT_TRUE(m.has_value());
  EXPECT_LE(m->peak_bytes, 3 * kBytes) << f.explain();
  EXPECT_GE(m->peak_bytes, kBytes);
  EXPECT_GE(m->inplace, 8) << f.explain();  // all but the first node (it reads the input)
  // Second call: the pool's buffers are reused.
  out = f({xv})[0];
  check_values(out, xv);
  m = f.impl()->memory_report();
  EXPECT_LE(m->peak_bytes, 3 * kBytes);
  std::string e = f.explain();
  EXPECT_NE(e.find("memory: peak " + std::to_string(m->peak_bytes) + " bytes in the last call, " +
                   std::to_string(m->reused) + " buffers reused, " + std::to_string(m->allocated) + " allocated, " +
                   std::to_string(m->inplace) + " inplace"),
            std::string::npos)
      << e;
  EXPECT_EQ(m->reused + m->allocated + m->inplace, 10) << e;  // every node's output got memory
  EXPECT_NE(xv.to_vector<float>(), out.to_vector<float>());
}

TEST(MemoryPlan, ChainOfTenRecyclesBuffersWithoutInplace) {
  ExcludeGuard guard("fusion:inplace");
  Var x = tensor::vector("x");
  Function f = function({x}, {chain(x)});
  Array xv = Array::randn({kN}, 2);
  check_values(f({xv})[0], xv);
  auto m = f.impl()->memory_report();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->inplace, 0);
  EXPECT_LE(m->peak_bytes, 3 * kBytes) << f.explain();  // liveness: ~2 live buffers, not 10
  EXPECT_LE(m->allocated, 3) << f.explain();
  EXPECT_EQ(m->reused + m->allocated, 10);
  check_values(f({xv})[0], xv);
  m = f.impl()->memory_report();
  EXPECT_LE(m->peak_bytes, 3 * kBytes);
}

TEST(MemoryPlan, ReportIsPerCallNotCumulative) {
  Var x = tensor::vector("x");
  Function f = function({x}, {tensor::exp(tensor::softmax(x)) + 1.0});
  Array small = Array::randn({10}, 3), big = Array::randn({100000}, 4);
  f({big});
  auto m_big = f.impl()->memory_report();
  f({small});
  auto m_small = f.impl()->memory_report();
  ASSERT_TRUE(m_big && m_small);
  EXPECT_LT(m_small->peak_bytes, m_big->peak_bytes);
  EXPECT_LE(m_small->peak_bytes, 4 * 10 * sizeof(float) + 1024);
  for (int i = 0; i < 20; ++i) f({small});
  EXPECT_EQ(f.impl()->memory_report()->peak_bytes, m_small->peak_bytes);
  auto per_program = f.impl()->memory_report({big});
  ASSERT_TRUE(per_program.has_value());
}

}  // namespace
}  // namespace theon
