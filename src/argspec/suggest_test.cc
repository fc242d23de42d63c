// Spelling suggestions for spec and name errors.
#include "argspec/suggest.h"

#include <gtest/gtest.h>

namespace jaxcc::argspec {
namespace {

TEST(EditDistanceTest, Basics) {
  EXPECT_EQ(EditDistance("", ""), 0);
  EXPECT_EQ(EditDistance("abc", ""), 3);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
  EXPECT_EQ(EditDistance("ret", "rett"), 1);
}

TEST(NearMissesTest, FindsCloseNamesBestFirst) {
  std::vector<std::string> names = {"vector_add", "vector_sub", "scale", "vectoradd", "Vector_Add"};
  EXPECT_EQ(NearMisses("vector_add", names),
            (std::vector<std::string>{"Vector_Add", "vectoradd", "vector_sub"}));
  EXPECT_EQ(NearMisses("vector_add", names, 1), (std::vector<std::string>{"Vector_Add"}));
  EXPECT_TRUE(NearMisses("zzz", names).empty());
}

TEST(NearMissesTest, SkipsExactAndDuplicates) {
  EXPECT_EQ(NearMisses("ab", {"ab", "ac", "ac"}), (std::vector<std::string>{"ac"}));
}

TEST(SuggestAttrTypeNameTest, CommonSpellings) {
  EXPECT_EQ(SuggestAttrTypeName("float"), "float32");
  EXPECT_EQ(SuggestAttrTypeName("double"), "float64");
  EXPECT_EQ(SuggestAttrTypeName("int"), "int32");
  EXPECT_EQ(SuggestAttrTypeName("std::int64_t"), "int64");
  EXPECT_EQ(SuggestAttrTypeName("uint8_t"), "uint8");
  EXPECT_EQ(SuggestAttrTypeName("size_t"), "uint64");
  EXPECT_EQ(SuggestAttrTypeName("Float32"), "float32");
  EXPECT_EQ(SuggestAttrTypeName("half"), "float16");
  EXPECT_EQ(SuggestAttrTypeName("bf16"), "bfloat16");
  EXPECT_EQ(SuggestAttrTypeName("np.float32"), "float32");
  EXPECT_FALSE(SuggestAttrTypeName("tensor").has_value());
}

}  // namespace
}  // namespace jaxcc::argspec
