#include "jaxcc/stream.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>

namespace jaxcc::detail {
namespace {

// Stands in for cudaStream_t (`struct CUstream_st*`) on a machine without CUDA.
struct FakeStreamStruct;
using FakeStream = FakeStreamStruct*;

std::int64_t TakesInt64(std::int64_t stream) { return stream; }
std::int64_t TakesConstInt64(const std::int64_t stream) { return stream; }
FakeStream TakesStream(FakeStream stream) { return stream; }
void* TakesVoidPointer(void* stream) { return stream; }

TEST(StreamHandleTest, IsAnAggregate) {
  static_assert(std::is_aggregate_v<StreamHandle>);
  static_assert(std::is_trivially_copyable_v<StreamHandle>);
  StreamHandle handle{42};
  EXPECT_EQ(handle.value, 42);
}

TEST(StreamHandleTest, ConvertsToIntegers) {
  EXPECT_EQ(TakesInt64(StreamHandle{0x1234}), 0x1234);
  EXPECT_EQ(TakesConstInt64(StreamHandle{-7}), -7);
  std::uint64_t as_unsigned = StreamHandle{5};
  EXPECT_EQ(as_unsigned, 5u);
  std::intptr_t as_intptr = StreamHandle{9};
  EXPECT_EQ(as_intptr, 9);
}

TEST(StreamHandleTest, ConvertsToPointers) {
  int object = 0;
  const auto address = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(&object));
  FakeStream stream = TakesStream(StreamHandle{address});
  EXPECT_EQ(reinterpret_cast<void*>(stream), static_cast<void*>(&object));
  EXPECT_EQ(TakesVoidPointer(StreamHandle{address}), static_cast<void*>(&object));
  EXPECT_EQ(TakesStream(StreamHandle{0}), nullptr);
}

TEST(StreamHandleTest, DoesNotConvertToOtherTypes) {
  static_assert(std::is_convertible_v<StreamHandle, std::int64_t>);
  static_assert(std::is_convertible_v<StreamHandle, FakeStream>);
  static_assert(!std::is_convertible_v<StreamHandle, double>);
  static_assert(!std::is_convertible_v<StreamHandle, FakeStreamStruct&>);
}

}  // namespace
}  // namespace jaxcc::detail
