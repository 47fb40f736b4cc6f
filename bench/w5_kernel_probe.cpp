// w5_kernel_probe: W5's fused kernel alone, without the executor. Writes the source that
// fused_cpu generates for W5 (contiguous rank 1), compiles it with the same compiler and flags
// (config().cxx; -O3 -march=native -fopenmp, SLEEF), and times it on n = 2^24 float32 (N(0,1)
// inputs) into (reuse) one preallocated output, (fresh) a new aligned_alloc'd output per call
// (what Function does today: the executor hands each output to the caller), and (fresh+thp)
// the same with MADV_HUGEPAGE on it (what the fused kernel now does for outputs of 4 MiB and
// more); 1 and 2 OpenMP threads; median of 9 calls after 2 warm-ups. GB/s at 16 B/element.
//
//   w5_kernel_probe [LOG2_N]
#include <theon/theon.hpp>

#include "backends/cpu/fused_cpu.hpp"
#include "ops/composite.hpp"

#include <dlfcn.h>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace theon;
using ops::ScalarOpId;

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 24;
  const int64_t n = int64_t{1} << log2n;
  const auto F = DType::Float32;
  // tanh(a*b + c) * exp(-a*a) + sigmoid(c), as the fusion pass builds it (values: 0-2 inputs).
  ops::Composite op({F, F, F},
                    {{ScalarOpId::Mul, F, {0, 1}}, {ScalarOpId::Add, F, {3, 2}}, {ScalarOpId::Tanh, F, {4}},
                     {ScalarOpId::Neg, F, {0}}, {ScalarOpId::Mul, F, {6, 0}}, {ScalarOpId::Exp, F, {7}},
                     {ScalarOpId::Mul, F, {5, 8}}, {ScalarOpId::Sigmoid, F, {2}}, {ScalarOpId::Add, F, {9, 10}}},
                    {11});
  const std::string src = backends::cpu::fused_source(op, 1, {0, 0, 0, 0}, {true, true, true, true});
  const std::string dir = "/tmp/theon-w5-probe-" + std::to_string(getpid());
  std::string cmd = "mkdir -p " + dir;
  if (std::system(cmd.c_str()) != 0) return 1;
  std::ofstream(dir + "/k.cpp") << src;
  const std::string cxx = config().cxx.empty() ? "c++" : config().cxx;
  cmd = cxx + " -std=c++20 -O3 -march=native -fPIC -shared -fopenmp -fno-math-errno -w -DTHEON_SLEEF=1 " + dir +
        "/k.cpp -o " + dir + "/k.so -lsleef";
  auto c0 = std::chrono::steady_clock::now();
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "compile failed: %s\n", cmd.c_str());
    return 1;
  }
  const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  void* h = dlopen((dir + "/k.so").c_str(), RTLD_NOW);
  using Fn = void (*)(const int64_t*, char* const*, const int64_t*);
  auto fn = h ? reinterpret_cast<Fn>(dlsym(h, "theon_fused_kernel")) : nullptr;
  if (!fn) return 1;
  std::printf("compile of the W5 module: %.3f s (%s)\n", compile_s, cxx.c_str());

  const size_t bytes = static_cast<size_t>(n) * 4;
  auto alloc = [&] { return static_cast<float*>(std::aligned_alloc(64, bytes)); };
  float *a = alloc(), *b = alloc(), *c = alloc(), *o = alloc();
  std::mt19937_64 rng(5);
  std::normal_distribution<float> n01;
  for (int64_t i = 0; i < n; ++i) a[i] = n01(rng), b[i] = n01(rng), c[i] = n01(rng), o[i] = 0;
  const int64_t shape[4] = {n, 0, 0, 0};
  const int64_t strides[16] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  for (int th : {1, 2}) {
    omp_set_num_threads(th);
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<double> t;
      for (int r = 0; r < 11; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        float* out = mode == 0 ? o : alloc();
        if (mode == 2) {
          const uintptr_t hp = uintptr_t{1} << 21, p = reinterpret_cast<uintptr_t>(out);
          const uintptr_t lo = (p + hp - 1) & ~(hp - 1), hi = (p + bytes) & ~(hp - 1);
          if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
        }
        char* ptrs[4] = {reinterpret_cast<char*>(out), reinterpret_cast<char*>(a), reinterpret_cast<char*>(b),
                         reinterpret_cast<char*>(c)};
        fn(shape, ptrs, strides);
        if (mode != 0) std::free(out);
        if (r >= 2) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(t.begin(), t.end());
      const double med = t[t.size() / 2];
      std::printf("PROBE W5 kernel n=2^%d threads=%d %-9s %7.3f GB/s %8.2f ms  (min %.2f, max %.2f ms)\n", log2n, th,
                  mode == 0 ? "reuse" : mode == 1 ? "fresh" : "fresh+thp", 16.0 * n / med / 1e9, med * 1e3,
                  t.front() * 1e3, t.back() * 1e3);
    }
  }
  cmd = "rm -rf " + dir;
  return std::system(cmd.c_str());
}
