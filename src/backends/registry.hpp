// The backend registry: which backend runs nodes on a kind of device. Placement asks the
// backend of the device it considers whether it supports a node (with a reason when it does
// not); lowering takes each thunk's kernel from the same backend. Backends register
// explicitly (register_backend; static registrars vanish from static libraries): the CPU
// backend, always there, and the CUDA backend, libtheon_cuda, opened on first use. A new
// device kind registers its provider the same way.
#pragma once
#include "backends/backend.hpp"

#include <theon/device.hpp>

#include <functional>

namespace theon::backends {

/// Gives the backend for a device kind, or nullptr when it cannot be used; with
/// `even_without_device`, one that can place and compile without a device (plan-only).
using BackendProvider = std::function<Backend*(bool even_without_device)>;

/// Registers the provider for `kind`; returns the one it replaces (empty if none).
BackendProvider register_backend(Device::Kind kind, BackendProvider provider);

/// The backend that runs nodes on `device`, or nullptr when none can (the CUDA library is
/// missing, or no device and not `even_without_device`: see cuda_backend()).
Backend* backend_for(Device device, bool even_without_device = false);

}  // namespace theon::backends
