// The attribute type table: names round-trip and the C++ spellings match the generated code.
#include "argspec/function_spec.h"

#include <gtest/gtest.h>

namespace jaxcc::argspec {
namespace {

constexpr AttrType kAll[] = {AttrType::kBool,    AttrType::kInt8,    AttrType::kInt16,
                             AttrType::kInt32,   AttrType::kInt64,   AttrType::kUInt8,
                             AttrType::kUInt16,  AttrType::kUInt32,  AttrType::kUInt64,
                             AttrType::kFloat32, AttrType::kFloat64, AttrType::kFloat16,
                             AttrType::kBFloat16};

TEST(AttrTypeTest, NamesRoundTrip) {
  for (AttrType type : kAll) {
    auto back = AttrTypeFromName(AttrTypeName(type));
    ASSERT_TRUE(back.has_value()) << AttrTypeName(type);
    EXPECT_EQ(*back, type);
  }
}

TEST(AttrTypeTest, Spellings) {
  EXPECT_STREQ(AttrTypeName(AttrType::kBool), "bool");
  EXPECT_STREQ(AttrTypeName(AttrType::kUInt16), "uint16");
  EXPECT_STREQ(AttrTypeName(AttrType::kFloat32), "float32");
  EXPECT_STREQ(AttrTypeName(AttrType::kBFloat16), "bfloat16");
  EXPECT_STREQ(AttrTypeCppName(AttrType::kBool), "bool");
  EXPECT_STREQ(AttrTypeCppName(AttrType::kInt8), "std::int8_t");
  EXPECT_STREQ(AttrTypeCppName(AttrType::kInt32), "std::int32_t");
  EXPECT_STREQ(AttrTypeCppName(AttrType::kUInt64), "std::uint64_t");
  EXPECT_STREQ(AttrTypeCppName(AttrType::kFloat32), "float");
  EXPECT_STREQ(AttrTypeCppName(AttrType::kFloat64), "double");
  EXPECT_STREQ(AttrTypeCppName(AttrType::kFloat16), "uint16_t");
  EXPECT_STREQ(AttrTypeCppName(AttrType::kBFloat16), "uint16_t");
}

TEST(AttrTypeTest, RejectsCAndShortSpellings) {
  for (const char* name :
       {"float", "double", "int", "half", "Float32", "int32_t", "", "complex64"}) {
    EXPECT_FALSE(AttrTypeFromName(name).has_value()) << name;
  }
}

TEST(AttrTypeTest, NameListHasEveryType) {
  EXPECT_EQ(AttrTypeNameList(),
            "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, "
            "float16, bfloat16");
}

TEST(FunctionSpecTest, Counts) {
  FunctionSpec spec;
  spec.params = {{ParamKind::kArg, "", {}},
                 {ParamKind::kArg, "", {}},
                 {ParamKind::kRet, "", {}},
                 {ParamKind::kAttr, "s", AttrType::kFloat32}};
  EXPECT_EQ(spec.num_args(), 2);
  EXPECT_EQ(spec.num_rets(), 1);
  EXPECT_FALSE(spec.has_stream());
}

}  // namespace
}  // namespace jaxcc::argspec
