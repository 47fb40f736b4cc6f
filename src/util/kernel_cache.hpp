// What the on-disk caches of generated kernels share (the CPU's .so modules, the CUDA
// backend's cubins): where they live and how their content is keyed.
#pragma once
#include <string>

namespace theon::detail {

/// The cache folder of one backend's compiled kernels: `config().compiledir`, else
/// $XDG_CACHE_HOME/theon, else ~/.cache/theon, else /tmp/theon-cache; then "/<backend>".
std::string kernel_cache_dir(const std::string& backend);

/// A 32-hex-digit key of `text` (two 64-bit FNV-1a hashes with different seeds): stable
/// across processes and builds, unlike std::hash.
std::string content_key(const std::string& text);

}  // namespace theon::detail
