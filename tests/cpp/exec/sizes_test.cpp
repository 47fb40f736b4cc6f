// Impossible sizes and failed allocations, through compiled functions (issue 11): a shape whose
// element or byte count overflows int64 is a ShapeError naming the op and the shape (it used
// to wrap: a tiny buffer, then heap garbage or a segfault); an allocation the system refuses
// is a MemoryError naming the bytes and the device, and the call commits nothing.
//
// The failing allocations ask for 2**47 bytes and more: beyond the user address space of
// x86-64 (and far beyond RAM + swap, which overcommit's heuristic refuses), so malloc returns
// null at once and nothing is touched.
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include "error_of.hpp"

#include <cstdint>
#include <string>

// Under AddressSanitizer (scripts/sanitize.sh) a huge malloc must return null, as glibc's
// does, instead of aborting the test.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace theon {
namespace {

constexpr int64_t k2_62 = int64_t{1} << 62;
constexpr int64_t k2_32 = int64_t{1} << 32;
constexpr int64_t k2_45 = int64_t{1} << 45;

Array i64(int64_t v) { return Array::scalar(static_cast<double>(v), DType::Int64); }

using testing_util::error_of;

TEST(Sizes, AllocWithAnOverflowingRunTimeSizeIsAShapeError) {
  Var n = tensor::lscalar("n");
  Var out = tensor::alloc(constant(Array::scalar(1.5, DType::Float32)), std::vector<Var>{n, constant(i64(4))});
  Function f = function({n}, {out[{7, Slice{Bound{}, Bound{4}}}]});
  // 2**62 x 4 elements: the product wraps to 0 in int64 (before: 4 values of heap garbage).
  const std::string msg = error_of<ShapeError>([&] { f({i64(k2_62)}); });
  EXPECT_NE(msg.find("Alloc"), std::string::npos) << msg;
  EXPECT_NE(msg.find("shape (4611686018427387904, 4) is too big"), std::string::npos) << msg;
  EXPECT_NE(msg.find(" n"), std::string::npos) << msg;  // the user's size variable
  // The function still works for sizes that exist.
  EXPECT_EQ(f({i64(8)})[0].to_vector<float>(), (std::vector<float>{1.5f, 1.5f, 1.5f, 1.5f}));
}

TEST(Sizes, AllocWithAnOverflowingStaticSizeFailsWhenBuilt) {
  const std::string msg = error_of<ShapeError>([] {
    tensor::alloc(constant(Array::scalar(1.5, DType::Float32)), std::vector<int64_t>{k2_62, 4});
  });
  EXPECT_NE(msg.find("alloc("), std::string::npos) << msg;
  EXPECT_NE(msg.find("shape (4611686018427387904, 4) is too big"), std::string::npos) << msg;
}

TEST(Sizes, ReshapeOfAnEmptyVectorToAnOverflowingShapeIsAShapeError) {
  Var x = tensor::vector("x");
  Var s = tensor::tensor(DType::Int64, {2}, "s");
  Function f = function({x, s}, {tensor::reshape(x, s)[{5, 7}]});
  // (2**32, 2**32) has 2**64 elements: wrapped, it "matched" the 0 of the empty vector and
  // indexing it then segfaulted.
  const std::string msg = error_of<ShapeError>(
      [&] { f({Array::zeros({0}, DType::Float32), Array::from_vector<int64_t>({k2_32, k2_32})}); });
  EXPECT_NE(msg.find("Reshape"), std::string::npos) << msg;
  EXPECT_NE(msg.find("shape (4294967296, 4294967296) is too big"), std::string::npos) << msg;
  // A static target shape fails when the graph is built.
  const std::string build = error_of<ShapeError>([&] { tensor::reshape(x, std::vector<int64_t>{k2_32, k2_32}); });
  EXPECT_NE(build.find("shape (4294967296, 4294967296) is too big"), std::string::npos) << build;
}

TEST(Sizes, BroadcastingToAnOverflowingShapeIsAShapeError) {
  Var x = tensor::vector("x");
  const std::string build =
      error_of<ShapeError>([&] { tensor::broadcast_to(x, std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40}); });
  EXPECT_NE(build.find("broadcast_to(x"), std::string::npos) << build;
  EXPECT_NE(build.find("is too big"), std::string::npos) << build;
  // Two broadcasting views (no memory) whose sum would be (2**40, 2**40): refused before any
  // buffer is asked for.
  Var one = tensor::alloc(constant(Array::scalar(1.0, DType::Float32)), std::vector<int64_t>{1, 1});
  Var col = tensor::broadcast_to(one, std::vector<int64_t>{int64_t{1} << 40, 1});
  Var row = tensor::broadcast_to(one, std::vector<int64_t>{1, int64_t{1} << 40});
  Function f = function({}, {col + row}, {.mode = "none"});
  const std::string msg = error_of<ShapeError>([&] { f({}); });
  EXPECT_NE(msg.find("Elemwise{add}"), std::string::npos) << msg;
  EXPECT_NE(msg.find("shape (1099511627776, 1099511627776) is too big"), std::string::npos) << msg;
}

TEST(Sizes, AFailedAllocationIsAMemoryErrorAndCommitsNothing) {
  SharedVar calls = shared(Array::scalar(0, DType::Int64), "calls");
  Var n = tensor::lscalar("n");
  Var big = tensor::alloc(constant(Array::scalar(1.0, DType::Float32)), std::vector<Var>{n});
  Function f = function({n}, {tensor::sum(big)}, {.updates = {{calls, calls + 1}}, .name = "f"});
  // 2**45 float32 elements = 2**47 bytes (128 TiB): a size that exists, memory that does not.
  try {
    f({i64(k2_45)});
    FAIL() << "no error";
  } catch (const MemoryError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.bytes(), size_t{1} << 47);
    EXPECT_EQ(e.device(), "cpu");
    EXPECT_NE(msg.find("out of memory on cpu: cannot allocate 140737488355328 bytes (128.0 TiB)"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("function 'f'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Alloc"), std::string::npos) << msg;
  }
  EXPECT_EQ(calls.get_value().item(), 0);  // nothing committed
  EXPECT_EQ(f({i64(3)})[0].item(), 3.0);    // and the function still works
  EXPECT_EQ(calls.get_value().item(), 1);
}

TEST(Sizes, MemoryErrorIsAnError) {
  // C++ callers catching theon::Error see it too; it is not a DeviceError any more.
  try {
    Array::empty({k2_45}, DType::Float32);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(dynamic_cast<const MemoryError*>(&e), nullptr) << e.what();
  }
}

}  // namespace
}  // namespace theon
