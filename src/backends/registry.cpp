#include "backends/registry.hpp"

#include <theon/config.hpp>

#include <map>
#include <mutex>

namespace theon::backends {

KernelOptions KernelOptions::from_config() {
  const Config& c = config();
  KernelOptions o;
  o.cxx = c.cxx;
  o.allow_tf32 = c.allow_tf32;
  o.deterministic = c.deterministic;
  o.fmad = c.fmad;
  o.openmp_elemwise_minsize = c.openmp_elemwise_minsize;
  return o;
}

const KernelOptions& options_of(const KernelPlan* plan) {
  if (plan) return plan->options();
  thread_local KernelOptions now;  // per thread: a caller may hold the reference while another thread asks
  now = KernelOptions::from_config();
  return now;
}

ExecContext ExecContext::of(Device device) {
  return {runtime::Context{device.str(), device}, runtime::Stream::of(device, runtime::StreamKind::Compute), 0};
}

void Kernel::run(const KernelPlan* plan, const graph::Apply& node, const std::vector<Array>& inputs,
                 std::vector<Array>& outputs) const {
  Device device = Device::cpu();
  for (const Array& a : outputs)
    if (a.defined() && a.device().is_cuda()) device = a.device();
  for (const Array& a : inputs)
    if (device.is_cpu() && a.defined() && a.device().is_cuda()) device = a.device();
  run(plan, ExecContext::of(device), node, inputs, outputs);
}

namespace {

struct Registry {
  std::mutex mutex;
  std::map<Device::Kind, BackendProvider> providers;
};

// The built-in backends are registered on first use.
Registry& registry() {
  static Registry* r = [] {
    auto* made = new Registry();  // never destroyed: kernels may run at exit
    made->providers[Device::Kind::CPU] = [](bool) { return &cpu_backend(); };
    made->providers[Device::Kind::CUDA] = [](bool even_without_device) { return cuda_backend(even_without_device); };
    return made;
  }();
  return *r;
}

}  // namespace

BackendProvider register_backend(Device::Kind kind, BackendProvider provider) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::swap(r.providers[kind], provider);
  return provider;
}

Backend* backend_for(Device device, bool even_without_device) {
  BackendProvider provider;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.providers.find(device.kind);
    if (it == r.providers.end()) return nullptr;
    provider = it->second;
  }
  return provider(even_without_device);
}

}  // namespace theon::backends
