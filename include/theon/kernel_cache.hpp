// The on-disk cache of compiled kernels (CPU modules and CUDA cubins) and how to inspect or
// empty it. Its rules (docs/guide/config.md): a private folder (mode 0700) owned by you;
// every entry is loaded only when its bytes match the SHA-256 recorded when it was written;
// at most `config().compiledir_max_mb` megabytes, least recently used entries evicted first.
#pragma once
#include <cstdint>
#include <string>

namespace theon {

struct KernelCacheInfo {
  std::string root;     ///< the folder in use (a private temporary one when `refused` is set)
  std::string refused;  ///< the configured folder that was refused, and why ("" when none was)
  int64_t entries = 0;  ///< cached kernels (CPU modules and cubins)
  int64_t bytes = 0;    ///< their size on disk, records included
  int64_t limit_bytes = 0;  ///< config().compiledir_max_mb in bytes (0: no limit)
};

/// Where the kernel cache is and how big it is (resolving and creating the folder if needed).
KernelCacheInfo kernel_cache_info();

/// Removes every cached kernel, record, compiler log and leftover temporary file under the
/// cache in use. Kernels this process already loaded keep working. Returns the bytes removed.
int64_t clear_kernel_cache();

}  // namespace theon
