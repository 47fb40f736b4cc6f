// Opens libtheon_cuda.so on first use. The library is looked for next to libtheon (build
// tree and install), then through the loader's search path; THEON_CUDA_LIBRARY names
// it explicitly. When it is missing, or present on a machine without a driver or GPU,
// the reason is kept as text for cuda_status(), on_fallback warnings and explain().
#pragma once
#include <string>

namespace theon::runtime {

struct CudaLibrary {
  void* handle = nullptr;  // dlopen handle (null when the library could not be opened)
  bool ok = false;         // opened, and at least one device usable
  int device_count = 0;
  std::string reason;      // why not ok
};

/// Loads once (thread-safe); later calls return the same record.
const CudaLibrary& cuda_library();
/// A symbol of the loaded library, or nullptr.
void* cuda_symbol(const char* name);

}  // namespace theon::runtime
