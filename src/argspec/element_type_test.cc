// Typed tensor tokens (`arg:float32`, `ret:int32`; decision 158): the dtype table, parsing,
// canonical spelling and every error with its suggestion.
#include "argspec/element_type.h"

#include <gtest/gtest.h>

#include "argspec/arg_spec.h"

namespace jaxcc::argspec {
namespace {

using Tokens = std::vector<std::string>;

std::string SpecErrorOf(const Tokens& tokens, int* offending = nullptr) {
  int ignored = 0;
  auto spec = ParseArgSpec("f", tokens, offending ? offending : &ignored);
  EXPECT_FALSE(spec.ok()) << FormatTokenList(tokens);
  if (spec.ok()) return "";
  EXPECT_EQ(spec.error().kind, ErrorKind::kSpec);
  return spec.error().message;
}

TEST(ElementTypeTest, EveryNameRoundTripsAndIsListed) {
  const char* names[] = {"bool",     "int8",    "int16",   "int32",     "int64",
                         "uint8",    "uint16",  "uint32",  "uint64",    "float16",
                         "bfloat16", "float32", "float64", "complex64", "complex128"};
  std::string list = ElementTypeNameList();
  for (const char* name : names) {
    auto type = ElementTypeFromName(name);
    ASSERT_TRUE(type.has_value()) << name;
    EXPECT_STREQ(ElementTypeName(*type), name);
    EXPECT_NE(list.find(name), std::string::npos) << name;
  }
  for (const char* bad : {"", "float", "Float32", "f32", "complex", "float32 ", "int"}) {
    EXPECT_FALSE(ElementTypeFromName(bad).has_value()) << bad;
  }
}

TEST(ElementTypeTest, SuggestsWhatUsersMean) {
  EXPECT_EQ(SuggestElementTypeName("float"), "float32");
  EXPECT_EQ(SuggestElementTypeName("double"), "float64");
  EXPECT_EQ(SuggestElementTypeName("Float32"), "float32");
  EXPECT_EQ(SuggestElementTypeName("flaot32"), "float32");
  EXPECT_EQ(SuggestElementTypeName("std::int64_t"), "int64");
  EXPECT_EQ(SuggestElementTypeName("cfloat"), "complex64");
  EXPECT_EQ(SuggestElementTypeName("std::complex<double>"), "complex128");
  EXPECT_EQ(SuggestElementTypeName("half"), "float16");
  EXPECT_FALSE(SuggestElementTypeName("banana").has_value());
}

TEST(TypedTensorTokenTest, ParsesDtypesOnArgsAndRets) {
  auto spec =
      ParseArgSpec("f", {"arg:float32", "arg", "args:complex128", "ret:int32", "rets:bool"});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_EQ(spec->params.size(), 5u);
  EXPECT_EQ(spec->params[0].kind, ParamKind::kArg);
  EXPECT_EQ(spec->params[0].dtype, ElementType::kFloat32);
  EXPECT_FALSE(spec->params[1].dtype.has_value());  // untyped: any dtype
  EXPECT_EQ(spec->params[2].dtype, ElementType::kComplex128);
  EXPECT_EQ(spec->params[3].kind, ParamKind::kRet);
  EXPECT_EQ(spec->params[3].dtype, ElementType::kInt32);
  EXPECT_EQ(spec->params[4].dtype, ElementType::kBool);
  EXPECT_EQ(ToTokens(*spec),
            (Tokens{"arg:float32", "arg", "arg:complex128", "ret:int32", "ret:bool"}));
  auto again = ParseArgSpec("f", ToTokens(*spec));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ToTokens(*again), ToTokens(*spec));
}

TEST(TypedTensorTokenTest, NormalizesTheAliases) {
  EXPECT_EQ(NormalizeToken("args:float32"), "arg:float32");
  EXPECT_EQ(NormalizeToken("rets:int8"), "ret:int8");
  EXPECT_EQ(NormalizeToken("arg:float32"), "arg:float32");
}

TEST(TypedTensorTokenTest, AnUnknownDtypeNamesItTheFixAndTheValidOnes) {
  int offending = -1;
  std::string message = SpecErrorOf({"arg", "arg:flaot32", "ret"}, &offending);
  EXPECT_EQ(offending, 1);
  EXPECT_NE(message.find("function `f`"), std::string::npos) << message;
  EXPECT_NE(message.find("unknown dtype `flaot32` in `arg:flaot32`"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean `arg:float32`?"), std::string::npos) << message;
  EXPECT_NE(message.find("complex128"), std::string::npos) << message;  // the valid list
  message = SpecErrorOf({"arg", "ret:double"});
  EXPECT_NE(message.find("did you mean `ret:float64`?"), std::string::npos) << message;
  message = SpecErrorOf({"arg", "ret:banana"});
  EXPECT_EQ(message.find("did you mean"), std::string::npos) << message;
  EXPECT_NE(message.find("bare `ret` for any dtype"), std::string::npos) << message;
}

TEST(TypedTensorTokenTest, AnEmptyDtypeIsRefused) {
  std::string message = SpecErrorOf({"arg:", "ret"});
  EXPECT_NE(message.find("`arg:` has no dtype after `:`"), std::string::npos) << message;
}

TEST(TypedTensorTokenTest, OtherKindsTakeNoDtypeAndNearMissesAreGuessed) {
  std::string message = SpecErrorOf({"arg", "ret", "stream:float32"});
  EXPECT_NE(message.find("unknown arg_spec token `stream:float32`"), std::string::npos) << message;
  message = SpecErrorOf({"in:float32", "ret"});
  EXPECT_NE(message.find("did you mean `arg:float32`?"), std::string::npos) << message;
  message = SpecErrorOf({"arg", "ret.int32"});
  EXPECT_NE(message.find("did you mean `ret:int32`?"), std::string::npos) << message;
  message = SpecErrorOf({"float32", "ret"});
  EXPECT_NE(message.find("did you mean `arg:float32`?"), std::string::npos) << message;
}

TEST(TypedTensorTokenTest, ADtypeDoesNotCountAsASecondRet) {
  auto spec = ParseArgSpec("f", {"ret:float32"});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->num_rets(), 1);
  EXPECT_NE(SpecErrorOf({"arg:float32"}).find("has no `ret`"), std::string::npos);
}

}  // namespace
}  // namespace jaxcc::argspec
