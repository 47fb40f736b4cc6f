// A simulated module written by hand (what the stand-in NVRTC builds from CUDA source):
// kernel `fill` sets n floats at p to v, one element per CUDA thread, without the emulator.
#include "launch_abi.hpp"

#include <cstddef>
#include <cstring>

namespace {
struct FillArgs {
  float* p;
  float v;
  unsigned n;
};
}  // namespace

extern "C" {
void* fill__sim_bind(void** args) {
  auto* a = new FillArgs;
  std::memcpy(&a->p, args[0], sizeof a->p);
  std::memcpy(&a->v, args[1], sizeof a->v);
  std::memcpy(&a->n, args[2], sizeof a->n);
  return a;
}
void fill__sim_run(void* bound, const gpu_sim_launch* c) {
  const auto* a = static_cast<const FillArgs*>(bound);
  const size_t threads = size_t(c->grid[0]) * c->grid[1] * c->grid[2] * c->block[0] * c->block[1] * c->block[2];
  for (size_t i = 0; i < threads && i < a->n; ++i) a->p[i] = a->v;
}
void fill__sim_free(void* bound) { delete static_cast<FillArgs*>(bound); }
// Has a bind entry only: cudaLibraryGetKernel must refuse it.
void partial__sim_bind(void**) {}
}
