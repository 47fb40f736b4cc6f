// libtheon's side of the CUDA backend: the backend object comes from libtheon_cuda through
// the runtime's loader, so nothing here links CUDA.
#include "backends/backend.hpp"

#include "runtime/cuda_library.hpp"

namespace theon::backends {

Support cuda_available() {
  const auto& lib = runtime::cuda_library();
  return {lib.ok, lib.reason};
}

Backend* cuda_backend(bool even_without_device) {
  const auto& lib = runtime::cuda_library();
  if (!lib.ok && !even_without_device) return nullptr;
  using Entry = void* (*)();
  auto entry = reinterpret_cast<Entry>(runtime::cuda_symbol("theon_cuda_backend"));
  return entry ? static_cast<Backend*>(entry()) : nullptr;
}

}  // namespace theon::backends
