// contexts_bench: the seed's multi-context program (../shared/seeds/001, "Using multiple
// GPUs"): two independent 1024x1024 float32 products, each on its own context, against the
// same program on one context, in one run.
//
//   contexts_bench [--gpu] [--quick]
//
// CPU rows (always): the seed program with its four shared variables
//   - on one context (device=cpu) whose OpenMP loops and GEMMs use every core (N threads);
//   - on two cpu contexts (contexts=dev0->cpu;dev1->cpu) with N/2 threads each
//     (context_threads=dev0=N/2;dev1=N/2), each context on its own worker thread.
// GPU rows (--gpu, on cuda0; on the simulated device they count, they do not time): W4 of
// ../shared/bench/WORKLOADS.md (two_dots, resident, outputs on the device) on one context
// (device=cuda0) and on two contexts of one GPU (dev0->cuda0;dev1->cuda0); each row gives
// the host waits per call (DeviceMemoryStats::host_waits); then each transfer kind's GB/s
// (host to device from pageable memory, device to host, device to device) on 64 MiB.
//
// Correctness before timing: each row's outputs against a float64 product of the same
// operands on 16 sampled rows, rel. L2 error <= 5e-5 (WORKLOADS.md strict fp32).
// Timing: 3 warm-up calls, then R samples (R = 15, --quick 5) of K calls; the figure is the
// median per-call time. Output: one line per row, "name,us_per_call,note".
#include <theon/theon.hpp>


#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

using namespace theon;

namespace {

constexpr int64_t kN = 1024;

struct Operands {
  std::vector<Array> values;  // v01, v02, v11, v12
};

Operands draw() {
  Operands o;
  for (uint64_t s = 0; s < 4; ++s) o.values.push_back(Array::randn({kN, kN}, 40 + s, DType::Float32));
  return o;
}

// ||got - ref|| / ||ref|| over 16 rows of a @ b, the reference in float64.
double rel_err(const Array& a, const Array& b, const Array& got_any) {
  const Array got = got_any.to_host().contiguous();
  const Array ah = a.to_host().contiguous(), bh = b.to_host().contiguous();
  const float* A = static_cast<const float*>(ah.data());
  const float* B = static_cast<const float*>(bh.data());
  const float* G = static_cast<const float*>(got.data());
  double num = 0, den = 0;
  for (int64_t r = 0; r < kN; r += kN / 16) {
    for (int64_t c = 0; c < kN; ++c) {
      double ref = 0;
      for (int64_t k = 0; k < kN; ++k) ref += double(A[r * kN + k]) * double(B[k * kN + c]);
      const double d = double(G[r * kN + c]) - ref;
      num += d * d;
      den += ref * ref;
    }
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

double median_us(const Function& f, int samples, int per_sample, Device sync_device) {
  for (int i = 0; i < 3; ++i) f();
  if (sync_device.is_cuda()) synchronize(sync_device);
  std::vector<double> t;
  for (int s = 0; s < samples; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < per_sample; ++k) f();
    if (sync_device.is_cuda()) synchronize(sync_device);
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
                per_sample);
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

// The seed program: its four shared variables on `targets` ("" = the default context).
Function seed_program(const Operands& o, const std::string& t0, const std::string& t1, bool outputs_on_device) {
  SharedVar v01 = shared(o.values[0], "v01", {.target = t0});
  SharedVar v02 = shared(o.values[1], "v02", {.target = t0});
  SharedVar v11 = shared(o.values[2], "v11", {.target = t1});
  SharedVar v12 = shared(o.values[3], "v12", {.target = t1});
  return function({}, {tensor::dot(v01, v02), tensor::dot(v11, v12)},
                  {.name = "seed_two_dots", .outputs_on_device = outputs_on_device});
}

bool check(const Function& f, const Operands& o, const std::string& row) {
  std::vector<Array> out = f();
  const double e0 = rel_err(o.values[0], o.values[1], out[0]), e1 = rel_err(o.values[2], o.values[3], out[1]);
  if (e0 <= 5e-5 && e1 <= 5e-5) return true;
  std::cout << row << ",FAILED,rel_err " << e0 << " / " << e1 << " > 5e-5\n";
  return false;
}

struct Row {
  std::string name;
  std::string contexts, threads, device, t0, t1;
};

}  // namespace

int main(int argc, char** argv) {
  bool gpu = false, quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--gpu")) gpu = true;
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else {
      std::cerr << "usage: contexts_bench [--gpu] [--quick]\n";
      return 2;
    }
  }
  const int samples = quick ? 5 : 15;
  const int cores = std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  const Operands o = draw();
  config().print_active_device = false;
  bool ok = true;
  std::cout << "name,us_per_call,note\n";

  const std::string half = std::to_string(cores / 2);
  std::vector<Row> rows = {
      {"seed_cpu_one_context_x" + std::to_string(cores), "", "", "cpu", "", ""},
      {"seed_cpu_two_contexts_x" + half, "dev0->cpu;dev1->cpu", "dev0=" + half + ";dev1=" + half, "cpu", "dev0",
       "dev1"},
  };
  if (gpu) {
    rows.push_back({"w4_gpu_one_context", "", "", "cuda0", "", ""});
    rows.push_back({"w4_gpu_two_contexts_one_gpu", "dev0->cuda0;dev1->cuda0", "", "cuda0", "dev0", "dev1"});
  }
  for (const Row& r : rows) {
    config().device = r.device;
    config().contexts = r.contexts;
    config().context_threads = r.threads;
    const Device dev = Device::parse(r.device);
    Function f = seed_program(o, r.t0, r.t1, dev.is_cuda());
    if (!check(f, o, r.name)) {
      ok = false;
      continue;
    }
    const int64_t waits0 = dev.is_cuda() ? memory_stats(dev).host_waits : 0;
    const int per_sample = dev.is_cuda() ? 20 : 4;
    const double us = median_us(f, samples, per_sample, dev);
    std::string note = "float32 1024^3 x2";
    if (dev.is_cuda()) {
      const int64_t calls = 3 + int64_t(samples) * per_sample;
      const double waits = double(memory_stats(dev).host_waits - waits0 - (samples + 1)) / double(calls);
      note += "; host waits per call " + std::to_string(waits) + "; " +
              std::to_string(2.0 * 2.0 * double(kN) * kN * kN / (us * 1e6)) + " TFLOP/s";
    }
    std::cout << r.name << "," << us << "," << note << "\n";
  }
  config().contexts = "";
  config().context_threads = "";
  config().device = "cpu";

  if (gpu) {
    const Device dev = Device::cuda(0);
    const Array host = Array::randn({16 * kN * kN}, 7, DType::Float32);  // 64 MiB
    const double bytes = double(host.nbytes());
    auto gbps = [&](const char* name, auto&& copy) {
      copy();
      synchronize(dev);
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 5; ++i) copy();
      synchronize(dev);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 5;
      std::cout << name << "," << s * 1e6 << "," << bytes / s / 1e9 << " GB/s on 64 MiB\n";
    };
    Array on_device = to_device(host, dev);
    gbps("transfer_h2d_pageable", [&] { Array d = to_device(host, dev); });
    gbps("transfer_d2h", [&] { Array h = on_device.to_host(); });
    gbps("transfer_d2d_same_gpu", [&] { Array d = on_device.copy(); });
  }
  return ok ? 0 : 1;
}
