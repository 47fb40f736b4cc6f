#include "backends/registry.hpp"

#include <theon/config.hpp>

namespace theon::backends {

KernelOptions KernelOptions::from_config() {
  const Config& c = config();
  KernelOptions o;
  o.cxx = c.cxx;
  o.allow_tf32 = c.allow_tf32;
  o.deterministic = c.deterministic;
  o.fmad = c.fmad;
  return o;
}

const KernelOptions& options_of(const KernelPlan* plan) {
  if (plan) return plan->options();
  thread_local KernelOptions now;  // per thread: a caller may hold the reference while another thread asks
  now = KernelOptions::from_config();
  return now;
}

Backend* backend_for(Device device, bool even_without_device) {
  if (device.is_cpu()) return &cpu_backend();
  return cuda_backend(even_without_device);
}

}  // namespace theon::backends
