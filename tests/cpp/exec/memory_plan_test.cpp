// Memory plan: intermediates are recycled as soon as their last reader has run (and written
// in place where the inplace pass allows), so a long elementwise chain needs a couple of
// buffers, not one per node; explain() reports the last call's peak and buffer counts.
#include <theon/theon.hpp>

#include "exec/function_impl.hpp"
#include "ops/sum_to.hpp"

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


// sum_to(g, like) where g already has like's run-time shape (a gradient that broadcast
// nothing) hands g over: no buffer, no copy, no kernel. Where like has a size-1 dim that g
// lacks it sums as before; a handed-over value read by an inplace candidate leaves g, still
// read afterwards, intact; a strided g is handed over as it is.
TEST(MemoryPlan, SumToHandsItsInputOverWhenTheShapesAgree) {
  Var x = tensor::matrix("x"), like = tensor::matrix("like");
  Var e = tensor::exp(x);
  Var s = Var(ops::sum_to(e.node(), like.node()));
  ASSERT_EQ(s.node()->owner->op().kind(), graph::OpKind::SumTo);  // unknown dims: a SumTo node
  Function f = function({x, like}, {s});
  Function ref = function({x, like}, {s}, {.mode = "none"});
  const Array xv = Array::randn({3, 4}, 1), same = Array::randn({3, 4}, 2), row = Array::randn({1, 4}, 3);
  for (int call = 0; call < 2; ++call) {
    EXPECT_TRUE(allclose(f({xv, same})[0], ref({xv, same})[0], 1e-6, 1e-6));
    auto m = f.impl()->memory_report();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->reused + m->allocated + m->inplace, 1) << "exp's buffer only: " << f.explain();
  }
  Array summed = f({xv, row})[0];
  EXPECT_EQ(summed.shape(), (Shape{1, 4}));
  EXPECT_TRUE(allclose(summed, ref({xv, row})[0], 1e-6, 1e-6));
  EXPECT_EQ(f.impl()->memory_report()->reused + f.impl()->memory_report()->allocated, 2);

  // The handed-over value feeds an elementwise op (an inplace candidate) while exp's value is
  // read again afterwards.
  Var two = s * 2.0 + 1.0;
  Var later = e - 1.0;
  Function g = function({x, like}, {two, later});
  Function gref = function({x, like}, {two, later}, {.mode = "none"});
  for (const Array& lv : {same, row}) {
    std::vector<Array> a = g({xv, lv}), b = gref({xv, lv});
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(allclose(a[i], b[i], 1e-6, 1e-6)) << i << "\n" << a[i] << b[i];
  }

  // A strided g (a transpose of the input) is handed over as the view it is.
  Var t = Var(ops::sum_to(x.T().node(), like.node()));
  Function h = function({x, like}, {t});
  const Array lt = Array::randn({4, 3}, 4);
  EXPECT_TRUE(allclose(h({xv, lt})[0], function({x, like}, {t}, {.mode = "none"})({xv, lt})[0], 0, 0));
  EXPECT_TRUE(allclose(h({xv, lt})[0], xv.transpose({1, 0}), 0, 0));
}

}  // namespace
}  // namespace theon
