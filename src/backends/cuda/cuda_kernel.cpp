#include "backends/cuda/cuda_kernel.hpp"

#include <algorithm>

namespace theon::backends::cuda {

namespace {

bool device_usable(int device) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: not an error for prepare
    return false;
  }
  return device >= 0 && device < count;
}

}  // namespace

std::vector<KernelSource> CudaKernel::sources(const graph::Apply& node, const std::vector<Array>& inputs) const {
  return sources(node, inputs, options_of(nullptr));
}

std::shared_ptr<KernelPlan> CudaKernel::prepare(const graph::Apply& node, const PrepareInfo& info) const {
  std::shared_ptr<KernelPlan> plan = Kernel::prepare(node, info);
  const bool layouts_known = std::all_of(info.layout_known.begin(), info.layout_known.end(), [](bool k) { return k; });
  if (!layouts_known || !info.device.is_cuda() || !device_usable(info.device.index)) return plan;
  std::vector<KernelSource> programs;
  try {
    programs = sources(node, info.inputs, info.options);
  } catch (const std::exception&) {
    // The placeholders guess unknown dims (2), which may not fit the node (a static 3 it
    // broadcasts against): what is not foreseen here compiles when run() sees real inputs.
    return plan;
  }
  // get_kernel's caches, by source: run()'s cached_kernel makes the same source on its first
  // call and finds the kernel loaded here.
  for (const KernelSource& program : programs)
    for (const std::string& kernel : program.kernels) get_kernel(program, kernel, info.device.index, info.options.fmad);
  return plan;
}

}  // namespace theon::backends::cuda
