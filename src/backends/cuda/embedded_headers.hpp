// The semantics headers of src/ops/scalar/ that CUDA kernels paste into their NVRTC source
// (embedded as strings at build time: CMakeLists.txt), so the CPU loops and the kernels run
// the same functions and the kernel cache key covers them.
#pragma once
#include <string>

namespace theon::detail {
extern const char* const kNnetOpsHeader;    // ops/scalar/nnet_ops.hpp
extern const char* const kPoolOpsHeader;    // ops/scalar/pool_ops.hpp
extern const char* const kRandomOpsHeader;  // ops/scalar/philox.hpp
extern const char* const kReduceOpsHeader;  // ops/scalar/reduce_ops.hpp
}  // namespace theon::detail

namespace theon::backends::cuda {

/// `embedded` without its `#pragma once`, ready to paste into a kernel's source.
inline std::string pasteable(const char* embedded) {
  std::string t = embedded;
  if (auto pos = t.find("#pragma once"); pos != std::string::npos) t.erase(pos, 12);
  return t;
}

}  // namespace theon::backends::cuda
