#include "jaxcc/dtype.h"

#include <gtest/gtest.h>

#include <sstream>

namespace jaxcc {
namespace {

TEST(DTypeTest, SizesMatchTheElementTypes) {
  EXPECT_EQ(dtype_size(DType::Float16), 2u);
  EXPECT_EQ(dtype_size(DType::Float32), 4u);
  EXPECT_EQ(dtype_size(DType::Float64), 8u);
  EXPECT_EQ(dtype_size(DType::BFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::Int8), 1u);
  EXPECT_EQ(dtype_size(DType::Int16), 2u);
  EXPECT_EQ(dtype_size(DType::Int32), 4u);
  EXPECT_EQ(dtype_size(DType::Int64), 8u);
  EXPECT_EQ(dtype_size(DType::UInt8), 1u);
  EXPECT_EQ(dtype_size(DType::UInt16), 2u);
  EXPECT_EQ(dtype_size(DType::UInt32), 4u);
  EXPECT_EQ(dtype_size(DType::UInt64), 8u);
  EXPECT_EQ(dtype_size(DType::Bool), 1u);
  EXPECT_EQ(dtype_size(DType::Complex64), 8u);
  EXPECT_EQ(dtype_size(DType::Complex128), 16u);
  EXPECT_EQ(dtype_size(DType::Invalid), 0u);
  EXPECT_EQ(dtype_size(static_cast<DType>(77)), 0u);
}

TEST(DTypeTest, NamesAreNumPyNames) {
  EXPECT_STREQ(dtype_name(DType::Float16), "float16");
  EXPECT_STREQ(dtype_name(DType::Float32), "float32");
  EXPECT_STREQ(dtype_name(DType::Float64), "float64");
  EXPECT_STREQ(dtype_name(DType::BFloat16), "bfloat16");
  EXPECT_STREQ(dtype_name(DType::Int8), "int8");
  EXPECT_STREQ(dtype_name(DType::Int64), "int64");
  EXPECT_STREQ(dtype_name(DType::UInt16), "uint16");
  EXPECT_STREQ(dtype_name(DType::UInt64), "uint64");
  EXPECT_STREQ(dtype_name(DType::Bool), "bool");
  EXPECT_STREQ(dtype_name(DType::Complex64), "complex64");
  EXPECT_STREQ(dtype_name(DType::Complex128), "complex128");
  EXPECT_STREQ(dtype_name(DType::Invalid), "invalid");
  EXPECT_STREQ(dtype_name(static_cast<DType>(77)), "unknown");
}

TEST(DTypeTest, IsConstexprAndKeepsBraineventValues) {
  static_assert(dtype_size(DType::Float64) == 8);
  static_assert(static_cast<int>(DType::Float16) == 0);
  static_assert(static_cast<int>(DType::Complex128) == 14);
  static_assert(static_cast<int>(DType::Invalid) == 255);
  static_assert(sizeof(DType) == 1);
}

TEST(DTypeTest, StreamsItsName) {
  std::ostringstream out;
  out << DType::BFloat16;
  EXPECT_EQ(out.str(), "bfloat16");
}

}  // namespace
}  // namespace jaxcc
