// The backend registry: which backend runs nodes on a device. Placement asks the backend of
// the device it considers whether it supports a node (with a reason when it does not);
// lowering takes each thunk's kernel from the same backend. The CPU backend is always
// there; the CUDA backend is libtheon_cuda, opened on first use.
#pragma once
#include "backends/backend.hpp"

#include <theon/device.hpp>

namespace theon::backends {

/// The backend that runs nodes on `device`, or nullptr when none can (the CUDA library is
/// missing, or no device and not `even_without_device`: see cuda_backend()).
Backend* backend_for(Device device, bool even_without_device = false);

}  // namespace theon::backends
