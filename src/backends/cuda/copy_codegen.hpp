// Strided copies on a CUDA device, for any dtype and rank <= 8: the building block of the
// shape family (Reshape copies, Join, IncSubtensor, Alloc) and of anything else that must
// turn a view into contiguous memory on the device (DeviceOps copies, casts' inputs).
//
//   copy_strided(src, dst, device, stream);   // dst = src broadcast to dst's shape (async, on `stream`)
//   add_strided(src, dst, device, stream);    // dst += src broadcast (integers wrap, bools or)
//
// `stream` is the kernel's (ExecContext::stream), a stream of `device`: every helper here
// issues its work, and takes its temporaries' blocks, on it.
//
// A copy first collapses the layout (merging dims contiguous in both operands, dropping
// size-1 dims), then widens the element to 16/8/4/2-byte units where the inner dim is
// contiguous and aligned in both operands, then picks:
//   - one cudaMemcpyAsync when both sides are a single contiguous run;
//   - one cudaMemcpy2DAsync for rows of >= 128 bytes with pitched outer strides;
//   - else a generated grid-stride kernel keyed by (unit bytes, collapsed rank, contiguous
//     destination, 32/64-bit index math) - never by sizes.
#pragma once
#include "backends/cuda/nvrtc_compiler.hpp"

#include <theon/array.hpp>

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace theon::backends::cuda {

/// dst = src broadcast to dst's shape. Same itemsize on both sides (the bytes are moved, so
/// any dtype works, float16 included); any strides (0 = broadcast, negative allowed); the
/// two must not overlap. Both arrays live on `device` (a host `src` is uploaded first).
/// Asynchronous on `stream`. `what` names the caller in errors.
void copy_strided(const Array& src, const Array& dst, int device, cudaStream_t stream,
                  const std::string& what = "copy_strided");

/// dst += src broadcast to dst's shape (theon::scalar::Add: integers wrap, bools or). dst's
/// elements must be distinct memory (a basic-indexing view is). Same dtype on both sides.
void add_strided(const Array& src, const Array& dst, int device, cudaStream_t stream,
                 const std::string& what = "add_strided");

/// Fills `dst` (contiguous, on `device`) with the value of the 0-d array `value` (converted
/// to dst's dtype; a device value is read on `stream`, the host waiting): cudaMemsetAsync when
/// every byte of the value is equal, else a widened fill kernel taking the value as an argument.
void fill_value(const Array& dst, const Array& value, int device, cudaStream_t stream,
                const std::string& what = "fill");

/// A new contiguous array on `device` from the runtime's caching allocator (uninitialised),
/// for use on `stream` (its home stream).
Array device_empty(const Shape& shape, DType dtype, int device, cudaStream_t stream);
/// `a` when it already lives on `device`, else a contiguous copy there, made on `stream`.
Array on_device(const Array& a, int device, cudaStream_t stream);
/// `a` when it is contiguous, else a contiguous copy on `device` (a must live there) made on
/// `stream`.
Array contiguous_on_device(const Array& a, int device, cudaStream_t stream, const std::string& what);
/// `a` on the host: a device array is read on `stream` (after the work issued to it so far),
/// the host waiting for the copy.
Array host_copy(const Array& a, cudaStream_t stream, const std::string& what);

/// The NVRTC programs copy_strided / add_strided / fill_value would compile for arrays with
/// these layouts (placeholders are fine: only dtype, shape, strides and offset are read;
/// buffers are assumed 256-byte aligned, as the device allocator gives them).
std::vector<KernelSource> copy_sources(const Array& src, const Array& dst);
std::vector<KernelSource> add_sources(const Array& src, const Array& dst);
std::vector<KernelSource> fill_sources(const Array& dst, DType value_dtype);

/// The generic strided kernel's source. `unit` is the element size in bytes for copies
/// (1, 2, 4, 8 or 16); `add` makes it dst += src on `dtype` instead.
KernelSource strided_source(bool add, DType dtype, int unit, int rank, bool dst_contiguous, bool wide_index);
/// Whether index math for `n` elements spanning at most `span` elements fits in 32 bits.
bool fits_int32(int64_t n, int64_t span);
/// A CUDA type of `bytes` bytes for moving raw elements ("unsigned int", "uint4", ...).
const char* unit_type(int bytes);

}  // namespace theon::backends::cuda
