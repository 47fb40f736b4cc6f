// Array: an n-dimensional, strided view of a reference-counted buffer.
//
//   Array a = Array::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
//   Array t = a.transpose();            // a view: shape {3, 2}, strides {1, 3}
//   std::vector<float> v = t.to_vector<float>();   // {1, 4, 2, 5, 3, 6}
//   Array r = Array::randn({100, 10}, /*seed=*/3); // floatX, N(0, 1)
//
// Strides and offsets count elements, not bytes. Copies of an Array share the buffer; use
// copy() for an independent one. Buffers live on a device: host memory by default, GPU
// memory for arrays a function returns with outputs_on_device or made by to_device();
// to_host() copies back (reading values of a device array copies it implicitly).
#pragma once
#include <theon/device.hpp>
#include <theon/dtype.hpp>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace theon {

namespace detail {
struct ArrayAccess;  // the executor's hook to reuse an Array's shape storage (src/exec/executor.cpp)
}

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

/// "(2, 3)" — NumPy's tuple notation, used by every error message.
std::string shape_str(const Shape& shape);
int64_t shape_size(const Shape& shape);
/// Row-major (C-contiguous) strides for a shape.
Strides contiguous_strides(const Shape& shape);

/// Memory owned by an Array; freed when the last Array that views it dies.
class Buffer {
 public:
  /// 64-byte aligned host memory, uninitialised.
  static std::shared_ptr<Buffer> allocate_host(size_t bytes);
  Buffer(void* data, size_t bytes, void (*deleter)(void*), Device device = Device::cpu())
      : data_(data), bytes_(bytes), deleter_(deleter), device_(device) {}
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  void* data_;
  size_t bytes_;
  void (*deleter_)(void*);
  Device device_;
};

class Array {
 public:
  Array() = default;
  /// A view of `buffer` (used by kernels and views; most code uses the factories below).
  /// ShapeError, naming the view (shape, strides, offset, dtype) and the buffer's bytes, when a
  /// non-empty view reaches outside its buffer or a dimension is negative; a null `buffer`
  /// makes a shape-only placeholder.
  Array(std::shared_ptr<Buffer> buffer, DType dtype, Shape shape, Strides strides, int64_t offset = 0);

  /// Uninitialised, contiguous.
  static Array empty(const Shape& shape, DType dtype);
  static Array zeros(const Shape& shape, DType dtype);
  static Array ones(const Shape& shape, DType dtype);
  static Array full(const Shape& shape, double value, DType dtype);
  /// A 0-d array holding `value` converted to `dtype`.
  static Array scalar(double value, DType dtype);
  /// 0, 1, ..., n-1 (int64 unless a dtype is given).
  static Array arange(int64_t n, DType dtype = DType::Int64);
  /// Standard normal / uniform [0, 1) numbers from a fixed seed; dtype defaults to floatX.
  static Array randn(const Shape& shape, uint64_t seed, std::optional<DType> dtype = std::nullopt);
  static Array rand(const Shape& shape, uint64_t seed, std::optional<DType> dtype = std::nullopt);
  /// Copies `values` (size must equal the product of `shape`; a 1-d shape when omitted).
  template <class T>
  static Array from_vector(const std::vector<T>& values, std::optional<Shape> shape = std::nullopt);
  /// The same with a braced shape: `Array::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3})`.
  template <class T>
  static Array from_vector(const std::vector<T>& values, const Shape& shape) {
    return from_vector(values, std::optional<Shape>(shape));
  }

  bool defined() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t size() const { return shape_size(shape_); }
  size_t nbytes() const { return static_cast<size_t>(size()) * itemsize(dtype_); }
  bool is_contiguous() const;
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  /// Where the data lives (the CPU for arrays without a buffer).
  Device device() const { return buffer_ ? buffer_->device() : Device::cpu(); }
  bool on_host() const { return device().is_cpu(); }
  /// A host array with the same values (this array when already on the host); waits for
  /// the device work that produces it.
  Array to_host() const;

  /// Pointer to element 0 of the view (a device pointer for device arrays).
  void* data() const;
  template <class T> T* data() const { return static_cast<T*>(data()); }

  /// Element values in row-major order, converted to T.
  template <class T> std::vector<T> to_vector() const;
  /// Value of element `index` (row-major flat index) as a double.
  double item(int64_t index = 0) const;

  /// An independent contiguous copy (optionally converted).
  Array copy() const;
  Array astype(DType dtype) const;
  /// This array when contiguous, else a contiguous copy.
  Array contiguous() const;

  // Views (no copy).
  Array transpose() const;                          // reverse the axes
  Array transpose(const std::vector<int>& perm) const;
  Array slice(int axis, int64_t start, int64_t stop, int64_t step = 1) const;  // Python semantics
  Array reshape(const Shape& shape) const;          // a view when contiguous, else a copy
  Array broadcast_to(const Shape& shape) const;     // stride-0 view

  std::string to_string() const;

 private:
  friend struct detail::ArrayAccess;
  std::shared_ptr<Buffer> buffer_;
  DType dtype_ = DType::Float32;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Array& a);

/// True when `a` and `b` have the same shape and every element differs by at most
/// atol + rtol * |b| (NaN equals NaN).
bool allclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8);

}  // namespace theon
