// parallel_threads (backends/cpu/parallel.hpp): the one rule, from the work's size and the
// openmp_elemwise_minsize option (frozen when a function is compiled, handed to the loops by
// the executor's LoopBudgetScope), by which every CPU loop goes parallel or stays on the
// calling thread; and the loops give the same results either way (a Gemm's addend copy too).
#include "backends/backend.hpp"
#include "backends/cpu/parallel.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace theon {
namespace {

using backends::cpu::parallel_threads;

struct MinsizeGuard {
  int64_t saved = config().openmp_elemwise_minsize;
  ~MinsizeGuard() { config().openmp_elemwise_minsize = saved; }
};

TEST(CpuParallel, BelowTheThresholdNoTeam) {
  MinsizeGuard guard;
  config().set("openmp_elemwise_minsize", "1000");
  EXPECT_EQ(config().openmp_elemwise_minsize, 1000);
  EXPECT_EQ(backends::KernelOptions::from_config().openmp_elemwise_minsize, 1000);
  backends::cpu::LoopBudgetScope scope({1000, 0});  // as the executor sets it for a call
  EXPECT_EQ(parallel_threads(0), 1);
  EXPECT_EQ(parallel_threads(999), 1);
#ifdef _OPENMP
  const int max = omp_get_max_threads();
  EXPECT_EQ(parallel_threads(1000), std::min(2, max));      // from the threshold: two threads...
  EXPECT_EQ(parallel_threads(1499), std::min(2, max));
  EXPECT_EQ(parallel_threads(2000), std::min(4, max));      // ...then one per half threshold
  EXPECT_EQ(parallel_threads(int64_t(1) << 40), max);       // never more than OpenMP's count
#endif
  EXPECT_THROW(config().set("openmp_elemwise_minsize", "-1"), ConfigError);
  EXPECT_EQ(config().openmp_elemwise_minsize, 1000);  // a refused value changes nothing
  // The default (Theano's): 50,000 elements on a shared 2-core machine start no team.
  backends::cpu::LoopBudgetScope defaults({200000, 0});
  EXPECT_EQ(parallel_threads(50000), 1);
  // A thread budget caps the count (a CPU context's, thread_budget.hpp).
  backends::cpu::LoopBudgetScope budget({1000, 1});
  EXPECT_EQ(parallel_threads(int64_t(1) << 40), 1);
}

TEST(CpuParallel, TheThresholdIsFrozenWhenTheFunctionIsCompiled) {
  MinsizeGuard guard;
  std::vector<int> seen;
  FunctionOptions o;
  o.mode = "fast_compile";
  o.monitor.before = [&](size_t, const ApplyInfo&, const std::vector<Array>&) {
    seen.push_back(parallel_threads(1500));
  };
  Var x = tensor::vector("x", DType::Float32);
  config().openmp_elemwise_minsize = 1000;
  Function f = function({x}, {tensor::exp(x)}, o);
  config().openmp_elemwise_minsize = int64_t(1) << 40;  // after compiling: changes nothing for f
  f({Array::from_vector<float>({1})});
  ASSERT_EQ(seen.size(), 1u);
#ifdef _OPENMP
  EXPECT_EQ(seen[0], std::min(2, omp_get_max_threads()));
#endif
}

TEST(CpuParallel, SameResultsOnOneThreadAndOnMany) {
  MinsizeGuard guard;
  // Softmax rows (softmax_rows), a fused elementwise chain (fused_cpu or the interpreter) and
  // a row sort (reduce_cpu) over 600 x 500 elements, once with every loop on the calling
  // thread and once split as far as OpenMP allows.
  // (The threshold is frozen when a function is compiled: each setting compiles its own.)
  Var x = tensor::matrix("x", DType::Float32);
  auto make_f = [&] {
    return function({x}, {tensor::softmax(x), tensor::tanh(x * 2.0f + 1.0f) * tensor::exp(-x), tensor::sort(x, 1)});
  };
  const Array xv = Array::randn({600, 500}, 18);
  config().openmp_elemwise_minsize = int64_t(1) << 40;
  const std::vector<Array> one = make_f()({xv});
  config().openmp_elemwise_minsize = 2;
  const std::vector<Array> many = make_f()({xv});
  ASSERT_EQ(one.size(), many.size());
  for (size_t k = 0; k < one.size(); ++k)
    EXPECT_EQ(one[k].to_vector<float>(), many[k].to_vector<float>()) << "output " << k;

  // The softmax cross-entropy and its gradient (nnet_cpu) and max pooling (pool_cpu).
  Var y = tensor::vector("y", DType::Int64);
  Var loss = tensor::sum(tensor::categorical_crossentropy(tensor::softmax(x), y));
  Var im = tensor::tensor4("im", DType::Float32);
  auto make_g = [&] { return function({x, y, im}, {loss, grad(loss, x), tensor::pool_2d(im, {2, 2}, true)}); };
  std::vector<int64_t> labels(600);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>((i * 7) % 500);
  const Array yv = Array::from_vector<int64_t>(labels, Shape{600});
  const Array imv = Array::randn({4, 8, 64, 64}, 19);
  config().openmp_elemwise_minsize = int64_t(1) << 40;
  const std::vector<Array> g1 = make_g()({xv, yv, imv});
  config().openmp_elemwise_minsize = 2;
  const std::vector<Array> gn = make_g()({xv, yv, imv});
  for (size_t k = 0; k < g1.size(); ++k)
    EXPECT_EQ(g1[k].to_vector<float>(), gn[k].to_vector<float>()) << "output " << k;

  // A Gemm whose matrix addend is copied into the output on the threads (gemm_kernel's
  // parallel_memcpy), an odd byte count so the chunks do not divide it.
  Var a = tensor::matrix("a", DType::Float32), b = tensor::matrix("b", DType::Float32);
  Var c = tensor::matrix("c", DType::Float32);
  auto make_h = [&] { return function({a, b, c}, {c - 0.5f * tensor::dot(a, b)}); };
  ASSERT_NE(make_h().debugprint().find("Gemm"), std::string::npos) << make_h().debugprint();
  const Array av = Array::randn({601, 33}, 20), bv = Array::randn({33, 499}, 21), cv = Array::randn({601, 499}, 22);
  config().openmp_elemwise_minsize = int64_t(1) << 40;
  const std::vector<float> h1 = make_h()({av, bv, cv})[0].to_vector<float>();
  config().openmp_elemwise_minsize = 2;
  const std::vector<float> hn = make_h()({av, bv, cv})[0].to_vector<float>();
  EXPECT_EQ(h1, hn);
  const std::vector<float> as = av.to_vector<float>(), bs = bv.to_vector<float>(), cs = cv.to_vector<float>();
  double worst = 0;  // and against c - a.b / 2 computed here
  for (int64_t i = 0; i < 601; i += 50)
    for (int64_t j = 0; j < 499; j += 7) {
      double dot = 0;
      for (int64_t k = 0; k < 33; ++k) dot += double(as[i * 33 + k]) * bs[k * 499 + j];
      worst = std::max(worst, std::abs(hn[i * 499 + j] - (cs[i * 499 + j] - 0.5 * dot)));
    }
  EXPECT_LT(worst, 1e-4);
}

}  // namespace
}  // namespace theon
