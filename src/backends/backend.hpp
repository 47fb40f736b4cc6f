// Backend: what a device offers the compiler. Placement asks supports(node) and gets a
// reason when the answer is no, so on_fallback and explain() report facts, not guesses.
// Kernels run in two steps: prepare(node, shapes) makes a plan that is cached per shape,
// run(plan, ...) executes it.
#pragma once
#include "graph/op.hpp"

#include <memory>
#include <string>
#include <vector>

namespace theon::backends {

struct Support {
  bool ok = true;
  std::string reason;  // why not (or which implementation, when ok)
};

/// Whatever a kernel wants to keep between calls at fixed shapes (library plans, workspace sizes).
class KernelPlan {
 public:
  virtual ~KernelPlan() = default;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  /// A short name for explain() and the profiler ("reference", "onednn", "cblas").
  virtual std::string name() const = 0;
  virtual std::shared_ptr<KernelPlan> prepare(const graph::Apply&, const std::vector<Shape>&) const { return nullptr; }
  /// Outputs arrive allocated (contiguous, infer_shape's shapes) except outputs in the op's
  /// view_map, which the kernel sets.
  virtual void run(const KernelPlan* plan, const graph::Apply& node, const std::vector<Array>& inputs,
                   std::vector<Array>& outputs) const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// Whether the device can be used at all, and why not.
  virtual Support available() const = 0;
  virtual Support supports(const graph::Apply& node) const = 0;
  /// The kernel for a supported node.
  virtual const Kernel& kernel(const graph::Apply& node) const = 0;
  /// Inputs the kernel reads on the host although it runs on this device (shape vectors,
  /// index scalars: values that decide output shapes). Placement keeps them on the host.
  virtual bool host_input(const graph::Apply&, int /*input*/) const { return false; }
};

/// The CPU backend (always available).
Backend& cpu_backend();
/// The CUDA backend's availability: ok=false with the reason on machines without it
/// (libtheon_cuda missing, no driver, no device).
Support cuda_available();
/// The CUDA backend (libtheon_cuda, opened on first use), or nullptr when the library is
/// missing. It is returned even without a device when `even_without_device` is set, so
/// the NVRTC sweep can place and compile kernels on a machine with no GPU.
Backend* cuda_backend(bool even_without_device = false);

}  // namespace theon::backends
