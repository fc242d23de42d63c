// The C++ type table: tensors, streams, every scalar spelling, and the rejections.
#include "signature/cpp_types.h"

#include <gtest/gtest.h>

namespace jaxcc::signature {
namespace {

using argspec::AttrType;

CppParamClass Classify(const char* text) {
  auto params = ParseParameters(Lex(text));
  EXPECT_EQ(params.size(), 1u) << text;
  return ClassifyParam(params.at(0));
}

TEST(ScalarAttrTypeTest, FixedWidthAndBuiltinSpellings) {
  struct Case {
    const char* type;
    AttrType expected;
  };
  const Case cases[] = {
      {"bool", AttrType::kBool},
      {"int8_t", AttrType::kInt8},
      {"std::int8_t", AttrType::kInt8},
      {"signed char", AttrType::kInt8},
      {"uint8_t", AttrType::kUInt8},
      {"unsigned char", AttrType::kUInt8},
      {"int16_t", AttrType::kInt16},
      {"short", AttrType::kInt16},
      {"short int", AttrType::kInt16},
      {"uint16_t", AttrType::kUInt16},
      {"unsigned short", AttrType::kUInt16},
      {"int32_t", AttrType::kInt32},
      {"int", AttrType::kInt32},
      {"signed", AttrType::kInt32},
      {"std::int32_t", AttrType::kInt32},
      {"uint32_t", AttrType::kUInt32},
      {"unsigned", AttrType::kUInt32},
      {"unsigned int", AttrType::kUInt32},
      {"int64_t", AttrType::kInt64},
      {"std::int64_t", AttrType::kInt64},
      {"::int64_t", AttrType::kInt64},
      {"long", AttrType::kInt64},
      {"long long", AttrType::kInt64},
      {"long long int", AttrType::kInt64},
      {"uint64_t", AttrType::kUInt64},
      {"unsigned long", AttrType::kUInt64},
      {"unsigned long long", AttrType::kUInt64},
      {"long unsigned int", AttrType::kUInt64},
      {"size_t", AttrType::kUInt64},
      {"std::size_t", AttrType::kUInt64},
      {"float", AttrType::kFloat32},
      {"double", AttrType::kFloat64},
  };
  for (const Case& c : cases) {
    auto type = ScalarAttrType(c.type);
    ASSERT_TRUE(type.has_value()) << c.type;
    EXPECT_EQ(*type, c.expected) << c.type;
  }
}

TEST(ScalarAttrTypeTest, Rejections) {
  for (const char* type : {"char", "long double", "__half", "half", "my_real", "std::float",
                           "foo::int32_t", "short long", "unsigned signed", "long long long"}) {
    EXPECT_FALSE(ScalarAttrType(type).has_value()) << type;
  }
}

TEST(IsJaxccTensorTest, Qualifiers) {
  for (const char* type :
       {"Tensor", "BE::Tensor", "jaxcc::Tensor", "::jaxcc::Tensor", "::BE::Tensor"}) {
    EXPECT_TRUE(IsJaxccTensor(type)) << type;
  }
  for (const char* type : {"torch::Tensor", "TensorView", "MyTensor", "BE::TensorList"}) {
    EXPECT_FALSE(IsJaxccTensor(type)) << type;
  }
}

TEST(ClassifyParamTest, Tensors) {
  for (const char* text : {"const BE::Tensor x", "const BE::Tensor& x", "BE::Tensor const& x",
                           "const ::jaxcc::Tensor& x", "const Tensor"}) {
    EXPECT_EQ(Classify(text).role, CppRole::kInputTensor) << text;
  }
  for (const char* text : {"BE::Tensor out", "BE::Tensor& out", "jaxcc::Tensor", "Tensor& o"}) {
    EXPECT_EQ(Classify(text).role, CppRole::kOutputTensor) << text;
  }
  EXPECT_EQ(Classify("Tensor* p").role, CppRole::kUnsupported);
  EXPECT_EQ(Classify("Tensor&& p").role, CppRole::kUnsupported);
  CppParamClass foreign = Classify("const torch::Tensor& t");
  EXPECT_EQ(foreign.role, CppRole::kUnsupported);
  EXPECT_NE(foreign.problem.find("`torch::Tensor` is not jaxcc's tensor"), std::string::npos);
}

TEST(ClassifyParamTest, Streams) {
  EXPECT_EQ(Classify("cudaStream_t s").role, CppRole::kStream);
  EXPECT_EQ(Classify("const cudaStream_t& s").role, CppRole::kStream);
  EXPECT_EQ(Classify("cudaStream_t* s").role, CppRole::kUnsupported);
  // An int64 `stream` is a scalar here; inference decides whether it is the stream.
  CppParamClass int64 = Classify("const int64_t stream");
  EXPECT_EQ(int64.role, CppRole::kScalar);
  EXPECT_EQ(int64.scalar, AttrType::kInt64);
}

TEST(ClassifyParamTest, Scalars) {
  EXPECT_EQ(Classify("float s").scalar, AttrType::kFloat32);
  EXPECT_EQ(Classify("const double& s").role, CppRole::kScalar);
  EXPECT_EQ(Classify("std::uint16_t bits").scalar, AttrType::kUInt16);
  EXPECT_EQ(Classify("float& s").role, CppRole::kUnsupported);
  EXPECT_EQ(Classify("float&& s").role, CppRole::kUnsupported);
  EXPECT_EQ(Classify("const float* p").role, CppRole::kUnsupported);
}

TEST(ClassifyParamTest, RejectionsExplainThemselves) {
  EXPECT_NE(Classify("__half h").problem.find("declare the parameter `uint16_t`"),
            std::string::npos);
  EXPECT_NE(Classify("char c").problem.find("use `int8_t` or `uint8_t`"), std::string::npos);
  EXPECT_NE(Classify("long double d").problem.find("use double"), std::string::npos);
  EXPECT_NE(Classify("void* p").problem.find("pointers cannot come from JAX"), std::string::npos);
  EXPECT_NE(Classify("auto x").problem.find("template"), std::string::npos);
  EXPECT_EQ(Classify("void (*f)(int)").role, CppRole::kUnsupported);
  EXPECT_EQ(Classify("float a[3]").role, CppRole::kUnsupported);
  EXPECT_EQ(Classify("...").role, CppRole::kUnsupported);
}

TEST(ClassifyParamTest, UnknownNamedTypes) {
  CppParamClass c = Classify("real_t s");
  EXPECT_EQ(c.role, CppRole::kUnknown);
  EXPECT_NE(c.problem.find("jaxcc does not know the type `real_t`"), std::string::npos);
  EXPECT_EQ(Classify("const MyStruct& s").role, CppRole::kUnknown);
}

}  // namespace
}  // namespace jaxcc::signature
