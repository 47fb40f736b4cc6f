// blas_probe: GFLOP/s of 1024x1024x1024 matrix products in the CPU libraries Theon can use.
//
//   blas_probe [--n 1024] [--threads 1,2]
//
// sgemm: oneDNN (dnnl_sgemm, what Theon's float32 Dot uses), OpenBLAS (cblas_sgemm), BLIS.
// dgemm: OpenBLAS (cblas_dgemm, what Theon's float64 Dot uses), BLIS (bli_dgemm).
// Row-major C = A @ B, A and B N(0,1); 2 warm-up calls, then the median of 10 timed calls
// (std::chrono::steady_clock); each result checked on 16 rows against a float64 product.
// Each library is compiled in only when CMake found it (THEON_PROBE_HAVE_*). Threads are
// set per library (openblas_set_num_threads, bli_thread_set_num_threads, omp_set_num_threads
// for oneDNN's OpenMP runtime). OpenBLAS picks its kernels from the CPU model; the core name
// it chose is printed (OPENBLAS_CORETYPE would override it; this probe never sets it).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifdef THEON_PROBE_HAVE_DNNL
#include <dnnl.h>
#endif
#ifdef THEON_PROBE_HAVE_OPENBLAS
#include <cblas.h>
#include <dlfcn.h>
#endif
#ifdef THEON_PROBE_HAVE_BLIS
// blas_probe_blis.cpp (blis.h's own CBLAS would clash with OpenBLAS's cblas.h here)
std::string probe_blis_info();
void probe_blis_threads(int n);
void probe_blis_sgemm(int64_t n, const float* A, const float* B, float* C);
void probe_blis_dgemm(int64_t n, const double* A, const double* B, double* C);
#endif
#ifdef THEON_PROBE_HAVE_OPENMP
#include <omp.h>
#endif

namespace {

template <class T>
double check_rows(const std::vector<T>& A, const std::vector<T>& B, const std::vector<T>& C, int64_t n) {
  double num = 0, den = 0;
  for (int64_t r = 0; r < 16; ++r) {
    int64_t i = (r * 997) % n;
    std::vector<double> ref(static_cast<size_t>(n), 0.0);
    for (int64_t k = 0; k < n; ++k) {
      double a = A[i * n + k];
      for (int64_t j = 0; j < n; ++j) ref[j] += a * static_cast<double>(B[k * n + j]);
    }
    for (int64_t j = 0; j < n; ++j) {
      double d = static_cast<double>(C[i * n + j]) - ref[j];
      num += d * d;
      den += ref[j] * ref[j];
    }
  }
  return std::sqrt(num / den);
}

template <class T>
void probe(const char* what, int threads, int64_t n, std::vector<T>& A, std::vector<T>& B,
           const std::function<void(T*)>& gemm) {
  std::vector<T> C(static_cast<size_t>(n * n), T(NAN));
  gemm(C.data());
  double err = check_rows(A, B, C, n);
  for (int i = 0; i < 2; ++i) gemm(C.data());
  std::vector<double> t;
  for (int i = 0; i < 10; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    gemm(C.data());
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  double med = 0.5 * (t[4] + t[5]);
  double flop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  std::printf("%-26s threads=%d  n=%lld  %8.2f ms  %8.1f GFLOP/s  (best %.1f)  rel_err %.2e\n", what, threads,
              static_cast<long long>(n), med * 1e3, flop / med / 1e9, flop / t.front() / 1e9, err);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 1024;
  std::vector<int> thread_counts = {1, 2};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) {
      n = std::atoll(argv[++i]);
    } else if (a == "--threads" && i + 1 < argc) {
      thread_counts.clear();
      std::stringstream ss(argv[++i]);
      std::string t;
      while (std::getline(ss, t, ',')) thread_counts.push_back(std::atoi(t.c_str()));
    } else {
      std::printf("usage: blas_probe [--n 1024] [--threads 1,2]\n");
      return a == "-h" || a == "--help" ? 0 : 2;
    }
  }

  std::mt19937_64 rng(8);
  std::normal_distribution<double> n01;
  std::vector<float> As(static_cast<size_t>(n * n)), Bs(static_cast<size_t>(n * n));
  for (auto& v : As) v = static_cast<float>(n01(rng));
  for (auto& v : Bs) v = static_cast<float>(n01(rng));
  std::vector<double> Ad(As.begin(), As.end()), Bd(Bs.begin(), Bs.end());

#ifdef THEON_PROBE_HAVE_DNNL
  const dnnl_version_t* v = dnnl_version();
  std::printf("oneDNN %d.%d.%d (cpu_runtime %d, isa %d)\n", v->major, v->minor, v->patch, v->cpu_runtime,
              static_cast<int>(dnnl_get_effective_cpu_isa()));
#else
  std::printf("oneDNN: not found at build time\n");
#endif
#ifdef THEON_PROBE_HAVE_OPENBLAS
  std::printf("OpenBLAS: %s; core %s\n", openblas_get_config(), openblas_get_corename());
  if (const char* ct = std::getenv("OPENBLAS_CORETYPE")) std::printf("  OPENBLAS_CORETYPE=%s\n", ct);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cblas_sgemm), &info) && info.dli_fname)
    std::printf("  cblas_sgemm resolves to %s\n", info.dli_fname);
#else
  std::printf("OpenBLAS: not found at build time\n");
#endif
#ifdef THEON_PROBE_HAVE_BLIS
  std::printf("%s\n", probe_blis_info().c_str());
#else
  std::printf("BLIS: not found at build time\n");
#endif

  for (int th : thread_counts) {
#ifdef THEON_PROBE_HAVE_OPENMP
    omp_set_num_threads(th);
#endif
#ifdef THEON_PROBE_HAVE_DNNL
    probe<float>("sgemm oneDNN dnnl_sgemm", th, n, As, Bs, [&](float* C) {
      dnnl_sgemm('N', 'N', n, n, n, 1.0f, As.data(), n, Bs.data(), n, 0.0f, C, n);
    });
#endif
#ifdef THEON_PROBE_HAVE_OPENBLAS
    openblas_set_num_threads(th);
    probe<float>("sgemm OpenBLAS cblas", th, n, As, Bs, [&](float* C) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, As.data(), n, Bs.data(), n, 0.0f, C, n);
    });
#endif
#ifdef THEON_PROBE_HAVE_BLIS
    probe_blis_threads(th);
    probe<float>("sgemm BLIS bli_sgemm", th, n, As, Bs, [&](float* C) { probe_blis_sgemm(n, As.data(), Bs.data(), C); });
#endif
#ifdef THEON_PROBE_HAVE_OPENBLAS
    probe<double>("dgemm OpenBLAS cblas", th, n, Ad, Bd, [&](double* C) {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, Ad.data(), n, Bd.data(), n, 0.0, C, n);
    });
#endif
#ifdef THEON_PROBE_HAVE_BLIS
    probe<double>("dgemm BLIS bli_dgemm", th, n, Ad, Bd, [&](double* C) { probe_blis_dgemm(n, Ad.data(), Bd.data(), C); });
#endif
  }
  return 0;
}
