#include <theon/array.hpp>
#include <theon/config.hpp>
#include <theon/error.hpp>

#include "util/checked_size.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <sanitizer/asan_interface.h>  // ASAN_(UN)POISON_MEMORY_REGION: no-ops without ASan

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <numeric>
#include <ostream>
#include <sstream>

namespace theon {

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

int64_t shape_size(const Shape& shape) {
  int64_t n;
  if (!detail::try_shape_size(shape, n)) detail::throw_too_big("", shape, std::nullopt);
  return n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides s(shape.size());
  int64_t acc = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    s[d] = acc;
    if (d > 0 && !detail::checked_mul(acc, std::max<int64_t>(shape[d], 1), acc))
      detail::throw_too_big("contiguous_strides", shape, std::nullopt);
  }
  return s;
}

namespace {

// Large host blocks are recycled process-wide. malloc serves them with a fresh mmap and
// munmaps them on free, so without this every call of a function with a large output
// page-faults on all of it and the kernel zeroes it (W5's 64 MiB output, with transparent
// huge pages: ~550 faults and 7-12 ms of system time per call; 18 faults and ~1 ms with).
// A block of at least kLargeBlock bytes goes back to this cache when the last Array viewing
// it dies (an output the user dropped, a pool's buffer) and the next allocation of the same
// rounded size takes it, already faulted in. Bounded: at most kCacheBytes held, the oldest
// block freed first; a block never returns to a caller while any Array still views it, so
// outputs still never alias anything live. Each block starts with a kHeader-byte header
// holding its size (Buffer's deleter is a plain function pointer).
constexpr size_t kLargeBlock = size_t{1} << 20;
constexpr size_t kLargeRound = size_t{64} << 10;  // sizes within 64 KiB share blocks
constexpr size_t kCacheBytes = size_t{256} << 20;
constexpr size_t kHeader = 64;  // keeps the data 64-byte aligned

class LargeBlockCache {
 public:
  // A cached block of exactly `size` bytes (the newest: likeliest still in cache/TLB), or nullptr.
  void* take(size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = blocks_.size(); i-- > 0;)
      if (blocks_[i].first == size) {
        void* block = blocks_[i].second;
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        bytes_ -= size;
        ASAN_UNPOISON_MEMORY_REGION(block, size);
        return block;
      }
    return nullptr;
  }
  // Frees every cached block (an allocation failed: the memory may be needed elsewhere).
  void clear() {
    std::deque<std::pair<size_t, void*>> all;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      all.swap(blocks_);
      bytes_ = 0;
    }
    for (auto& [n, p] : all) {
      ASAN_UNPOISON_MEMORY_REGION(p, n);
      std::free(p);
    }
  }
  void give(void* block, size_t size) {
    std::vector<std::pair<size_t, void*>> evicted;  // freed outside the lock
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (size > kCacheBytes) {
        evicted.push_back({size, block});
      } else {
        while (bytes_ + size > kCacheBytes) {
          evicted.push_back(blocks_.front());
          bytes_ -= blocks_.front().first;
          blocks_.pop_front();
        }
        ASAN_POISON_MEMORY_REGION(block, size);  // a use after release is still caught
        blocks_.push_back({size, block});
        bytes_ += size;
      }
    }
    for (auto& [n, p] : evicted) {
      ASAN_UNPOISON_MEMORY_REGION(p, n);
      std::free(p);
    }
  }

 private:
  std::mutex mutex_;
  std::deque<std::pair<size_t, void*>> blocks_;  // (block bytes incl. header, block), oldest first
  size_t bytes_ = 0;
};

LargeBlockCache& large_blocks() {
  static auto* cache = new LargeBlockCache;  // never destroyed: Buffers may die during static destruction
  return *cache;
}

void release_large_block(void* data) {
  void* block = static_cast<char*>(data) - kHeader;
  size_t size;
  std::memcpy(&size, block, sizeof size);
  large_blocks().give(block, size);
}

void release_small_block(void* data) {
  void* base;
  std::memcpy(&base, static_cast<char*>(data) - sizeof base, sizeof base);
  std::free(base);
}

}  // namespace

std::shared_ptr<Buffer> Buffer::allocate_host(size_t bytes) {
  // Beyond PTRDIFF_MAX no allocation can succeed (and the rounding below could wrap).
  if (bytes > static_cast<size_t>(PTRDIFF_MAX) - kLargeRound - kHeader)
    detail::throw_out_of_memory(bytes, Device::cpu());
  if (bytes >= kLargeBlock) {
    const size_t size = (bytes + kHeader + kLargeRound - 1) / kLargeRound * kLargeRound;
    void* block = large_blocks().take(size);
    if (!block) block = std::aligned_alloc(64, size);
    if (!block) {  // give the cached blocks back and try once more
      large_blocks().clear();
      block = std::aligned_alloc(64, size);
    }
    if (!block) detail::throw_out_of_memory(bytes, Device::cpu());
    std::memcpy(block, &size, sizeof size);
    return std::make_shared<Buffer>(static_cast<char*>(block) + kHeader, bytes, &release_large_block);
  }
  // Small blocks: malloc and align by hand (glibc's aligned_alloc costs several times a
  // malloc, which showed in the per-call overhead); the block's start is kept just below
  // the data. malloc's 16-byte alignment puts the data 16..64 bytes in.
  static_assert(alignof(std::max_align_t) >= 16);
  const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void* base = std::malloc(rounded + 64);
  if (!base) detail::throw_out_of_memory(bytes, Device::cpu());
  const auto addr = (reinterpret_cast<std::uintptr_t>(base) + sizeof(void*) + 63) & ~std::uintptr_t{63};
  char* data = static_cast<char*>(base) + (addr - reinterpret_cast<std::uintptr_t>(base));
  std::memcpy(data - sizeof base, &base, sizeof base);
  return std::make_shared<Buffer>(data, bytes, &release_small_block);
}

Buffer::~Buffer() {
  if (deleter_) deleter_(data_);
}

namespace {

// A view must stay inside its buffer: every element it can reach (offset plus, per dim,
// 0..(n-1) times the stride, negative strides reaching down) lies in [0, bytes). Checked once
// when the view is made, so kernels that read it never go out of bounds. An empty view reads
// nothing and is not checked (as NumPy: its offset may sit anywhere, e.g. at the end).
void check_view(const Buffer& buffer, DType dtype, const Shape& shape, const Strides& strides, int64_t offset) {
  const auto fail = [&](const std::string& why) {
    throw ShapeError("Array: a view of shape " + shape_str(shape) + ", strides " + shape_str(strides) + ", offset " +
                     std::to_string(offset) + " and dtype " + std::string(dtype_name(dtype)) + " " + why +
                     ", but its buffer holds " + std::to_string(buffer.bytes()) + " bytes");
  };
  bool empty = false;
  for (int64_t n : shape) {
    if (n < 0) fail("has a negative dimension");
    empty = empty || n == 0;
  }
  if (empty) return;
  int64_t lo = offset, hi = offset, reach, bytes;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!detail::checked_mul(strides[d], shape[d] - 1, reach) ||
        !detail::checked_add(reach < 0 ? lo : hi, reach, reach < 0 ? lo : hi))
      fail("reaches beyond the int64 range");
  }
  const auto isz = static_cast<int64_t>(itemsize(dtype));
  if (!detail::checked_add(hi, 1, bytes) || !detail::checked_mul(bytes, isz, bytes))
    fail("reaches beyond the int64 range");
  if (lo < 0)
    fail("reaches element " + std::to_string(lo) + " (before the buffer's start)");
  if (static_cast<uint64_t>(bytes) > buffer.bytes())
    fail("reaches elements " + std::to_string(lo) + " to " + std::to_string(hi) + " (" + std::to_string(bytes) +
         " bytes)");
}

}  // namespace

Array::Array(std::shared_ptr<Buffer> buffer, DType dtype, Shape shape, Strides strides, int64_t offset)
    : buffer_(std::move(buffer)), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)),
      offset_(offset) {
  if (strides_.size() != shape_.size()) throw InternalError("Array: strides and shape differ in rank");
  if (buffer_) check_view(*buffer_, dtype_, shape_, strides_, offset_);  // a null buffer: a shape-only placeholder
}

Array Array::empty(const Shape& shape, DType dtype) {
  require_supported(dtype, "Array");
  for (int64_t n : shape)
    if (n < 0) throw ShapeError("Array: negative dimension in shape " + shape_str(shape));
  const size_t bytes = detail::checked_nbytes(shape, dtype, "Array");  // before the strides: they could overflow
  return Array(Buffer::allocate_host(bytes), dtype, shape, contiguous_strides(shape));
}

Array Array::zeros(const Shape& shape, DType dtype) {
  Array a = empty(shape, dtype);
  std::memset(a.data(), 0, a.nbytes());
  return a;
}

Array Array::full(const Shape& shape, double value, DType dtype) {
  Array a = empty(shape, dtype);
  detail::visit_storage_dtype(dtype, [&]<class T>() {
    T v = static_cast<T>(value);
    T* p = a.data<T>();
    for (int64_t i = 0, n = a.size(); i < n; ++i) p[i] = v;
  });
  return a;
}

Array Array::ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }
Array Array::scalar(double value, DType dtype) { return full({}, value, dtype); }

Array Array::arange(int64_t n, DType dtype) {
  Array a = empty({n}, dtype);
  detail::visit_storage_dtype(dtype, [&]<class T>() {
    T* p = a.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(i);
  });
  return a;
}

namespace {

// splitmix64: small, fast and the same on every platform, so seeded arrays are reproducible.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

template <class Gen>
Array fill_random(const Shape& shape, std::optional<DType> dtype, Gen gen) {
  DType t = dtype.value_or(config().floatX);
  if (!is_float(t)) throw TypeError("Array::randn/rand: dtype must be a float type, got " + std::string(dtype_name(t)));
  Array a = Array::empty(shape, t);
  detail::visit_storage_dtype(t, [&]<class T>() {
    T* p = a.data<T>();
    for (int64_t i = 0, n = a.size(); i < n; ++i) p[i] = static_cast<T>(gen());
  });
  return a;
}

}  // namespace

Array Array::randn(const Shape& shape, uint64_t seed, std::optional<DType> dtype) {
  SplitMix64 rng{seed};
  bool have_spare = false;
  double spare = 0;
  return fill_random(shape, dtype, [&]() {  // Box-Muller, both values used
    if (have_spare) {
      have_spare = false;
      return spare;
    }
    double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
    double r = std::sqrt(-2.0 * std::log(u1)), th = 2.0 * M_PI * u2;
    spare = r * std::sin(th);
    have_spare = true;
    return r * std::cos(th);
  });
}

Array Array::rand(const Shape& shape, uint64_t seed, std::optional<DType> dtype) {
  SplitMix64 rng{seed};
  return fill_random(shape, dtype, [&]() { return rng.uniform(); });
}

template <class T>
Array Array::from_vector(const std::vector<T>& values, std::optional<Shape> shape) {
  Shape s = shape.value_or(Shape{static_cast<int64_t>(values.size())});
  if (detail::checked_size(s, "Array::from_vector") != static_cast<int64_t>(values.size()))
    throw ShapeError("Array::from_vector: " + std::to_string(values.size()) + " values do not fill shape " +
                     shape_str(s));
  Array a = empty(s, dtype_of<T>());
  T* p = a.data<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return a;
}

bool Array::is_contiguous() const {
  int64_t expect = 1;
  for (int d = ndim() - 1; d >= 0; --d) {
    if (shape_[d] == 1) continue;
    if (shape_[d] == 0) return true;
    if (strides_[d] != expect) return false;
    expect *= shape_[d];
  }
  return true;
}

void* Array::data() const {
  if (!buffer_) throw ValueError("Array: use of an undefined (empty) Array");
  return static_cast<char*>(buffer_->data()) + offset_ * static_cast<int64_t>(itemsize(dtype_));
}

namespace {

// Copies `src` (any strides) into contiguous `dst` of the same shape, converting element types.
void copy_into_contiguous(const Array& src, Array& dst) {
  if (src.size() == 0) return;
  Shape shape = src.shape();
  std::vector<Strides> strides = {src.strides(), contiguous_strides(shape)};
  detail::collapse_dims(shape, strides);
  detail::visit_storage_dtype(src.dtype(), [&]<class S>() {
    detail::visit_storage_dtype(dst.dtype(), [&]<class D>() {
      const S* s = static_cast<const S*>(src.buffer()->data()) ;
      D* d = dst.data<D>();
      int64_t inner = shape.back(), is = strides[0].back();
      detail::OuterLoop loop(shape, {&strides[0], &strides[1]}, {src.offset(), 0});
      for (int64_t r = 0; r < loop.count(); ++r, loop.next()) {
        const S* sp = s + loop.offsets()[0];
        D* dp = d + loop.offsets()[1];
        for (int64_t i = 0; i < inner; ++i) dp[i] = static_cast<D>(sp[i * is]);
      }
    });
  });
}

}  // namespace

template <class T>
std::vector<T> Array::to_vector() const {
  if (!on_host()) return to_host().to_vector<T>();
  Array c = (dtype_ == dtype_of<T>() && is_contiguous()) ? *this : astype(dtype_of<T>());
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.size());
}

double Array::item(int64_t index) const {
  if (index < 0 || index >= size())
    throw IndexError("Array::item: index " + std::to_string(index) + " out of range for size " + std::to_string(size()));
  if (!on_host()) return to_host().item(index);
  int64_t off = 0, rest = index;
  for (int d = ndim() - 1; d >= 0; --d) {
    off += (rest % shape_[d]) * strides_[d];
    rest /= shape_[d];
  }
  return detail::visit_storage_dtype(dtype_, [&]<class T>() { return static_cast<double>(data<T>()[off]); });
}

Array Array::copy() const { return astype(dtype_); }

Array Array::astype(DType dtype) const {
  if (!on_host()) return to_device(to_host().astype(dtype), device());  // device-side casts run as graph ops
  Array out = empty(shape_, dtype);
  copy_into_contiguous(*this, out);
  return out;
}

Array Array::contiguous() const { return is_contiguous() ? *this : copy(); }

Array Array::transpose() const {
  std::vector<int> perm(ndim());
  for (int i = 0; i < ndim(); ++i) perm[i] = ndim() - 1 - i;
  return transpose(perm);
}

Array Array::transpose(const std::vector<int>& perm) const {
  if (static_cast<int>(perm.size()) != ndim())
    throw ShapeError("Array::transpose: permutation of length " + std::to_string(perm.size()) + " for an array of rank " +
                     std::to_string(ndim()));
  Shape s(ndim());
  Strides st(ndim());
  std::vector<bool> seen(ndim(), false);
  for (int i = 0; i < ndim(); ++i) {
    int p = perm[i];
    if (p < 0 || p >= ndim() || seen[p]) throw ShapeError("Array::transpose: invalid permutation");
    seen[p] = true;
    s[i] = shape_[p];
    st[i] = strides_[p];
  }
  return Array(buffer_, dtype_, s, st, offset_);
}

Array Array::slice(int axis, int64_t start, int64_t stop, int64_t step) const {
  if (axis < 0) axis += ndim();
  if (axis < 0 || axis >= ndim()) throw ShapeError("Array::slice: axis out of range");
  if (step == 0) throw ValueError("Array::slice: step must not be zero");
  int64_t n = shape_[axis];
  auto clamp = [&](int64_t i, bool is_stop) {  // Python's slice.indices
    if (i < 0) i += n;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1) + (is_stop ? 0 : 0);
  };
  int64_t b = clamp(start, false), e = clamp(stop, true);
  int64_t len = step > 0 ? (e > b ? (e - b + step - 1) / step : 0) : (b > e ? (b - e - step - 1) / (-step) : 0);
  Shape s = shape_;
  Strides st = strides_;
  s[axis] = len;
  st[axis] = strides_[axis] * step;
  return Array(buffer_, dtype_, s, st, offset_ + (len > 0 ? b * strides_[axis] : 0));
}

Array Array::reshape(const Shape& shape) const {
  for (int64_t n : shape)
    if (n < 0) throw ShapeError("Array::reshape: negative dimension in shape " + shape_str(shape));
  if (detail::checked_size(shape, "Array::reshape") != size())
    throw ShapeError("Array::reshape: cannot reshape array of shape " + shape_str(shape_) + " into " + shape_str(shape));
  Array c = contiguous();
  return Array(c.buffer_, dtype_, shape, contiguous_strides(shape), c.offset_);
}

Array Array::broadcast_to(const Shape& shape) const {
  if (static_cast<int>(shape.size()) < ndim())
    throw ShapeError("Array::broadcast_to: cannot broadcast " + shape_str(shape_) + " to " + shape_str(shape));
  for (int64_t n : shape)
    if (n < 0) throw ShapeError("Array::broadcast_to: negative dimension in shape " + shape_str(shape));
  int lead = static_cast<int>(shape.size()) - ndim();
  for (int d = 0; d < ndim(); ++d)
    if (shape_[d] != 1 && shape_[d] != shape[lead + d])
      throw ShapeError("Array::broadcast_to: cannot broadcast " + shape_str(shape_) + " to " + shape_str(shape));
  detail::checked_nbytes(shape, dtype_, "Array::broadcast_to");
  return Array(buffer_, dtype_, shape, detail::broadcast_strides(*this, shape), offset_);
}

std::string Array::to_string() const {
  std::ostringstream os;
  os << *this;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Array& a) {
  if (!a.defined()) return os << "Array(undefined)";
  std::vector<double> v = a.to_vector<double>();
  const int64_t limit = 1000;  // like numpy's threshold: summarise large arrays
  std::function<void(int, int64_t&)> rec = [&](int d, int64_t& flat) {
    if (d == a.ndim()) {
      double x = v[flat++];
      if (a.dtype() == DType::Bool) os << (x != 0 ? "True" : "False");
      else if (is_float(a.dtype())) os << x;
      else os << static_cast<int64_t>(x);
      return;
    }
    os << "[";
    for (int64_t i = 0; i < a.shape()[d]; ++i) {
      if (i) os << (d == a.ndim() - 1 ? ", " : ",\n" + std::string(d + 1, ' '));
      if (a.size() > limit && a.shape()[d] > 6 && i == 3) {
        os << "...";
        int64_t skip = (a.shape()[d] - 6) * (a.size() / shape_size(Shape(a.shape().begin(), a.shape().begin() + d + 1)));
        flat += skip;
        i = a.shape()[d] - 3 - 1;
        continue;
      }
      rec(d + 1, flat);
    }
    os << "]";
  };
  int64_t flat = 0;
  rec(0, flat);
  return os << " (" << dtype_name(a.dtype()) << ", shape " << shape_str(a.shape()) << ")";
}

bool allclose(const Array& a, const Array& b, double rtol, double atol) {
  if (a.shape() != b.shape()) return false;
  auto va = a.to_vector<double>(), vb = b.to_vector<double>();
  for (size_t i = 0; i < va.size(); ++i) {
    if (std::isnan(va[i]) && std::isnan(vb[i])) continue;
    if (!(std::abs(va[i] - vb[i]) <= atol + rtol * std::abs(vb[i])) && va[i] != vb[i]) return false;
  }
  return true;
}

#define THEON_INSTANTIATE(T)                                                                   \
  template Array Array::from_vector<T>(const std::vector<T>&, std::optional<Shape>);          \
  template std::vector<T> Array::to_vector<T>() const;
THEON_INSTANTIATE(bool)
THEON_INSTANTIATE(int8_t)
THEON_INSTANTIATE(int16_t)
THEON_INSTANTIATE(int32_t)
THEON_INSTANTIATE(int64_t)
THEON_INSTANTIATE(uint8_t)
THEON_INSTANTIATE(float)
THEON_INSTANTIATE(double)
THEON_INSTANTIATE(half)
#undef THEON_INSTANTIATE

}  // namespace theon
