#include "jaxcc/dispatch.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "jaxcc/tensor.h"

namespace jaxcc {
namespace {

// Each helper dispatches `dtype` and reports the bound type, so the tests pin the mapping.
const std::type_info& Floating(DType dtype) {
  return JAXCC_DISPATCH_FLOATING(dtype, T, { return std::ref(typeid(T)); }).get();
}
const std::type_info& FloatingAndHalf(DType dtype) {
  return JAXCC_DISPATCH_FLOATING_AND_HALF(dtype, T, { return std::ref(typeid(T)); }).get();
}
const std::type_info& Integral(DType dtype) {
  return JAXCC_DISPATCH_INTEGRAL(dtype, T, { return std::ref(typeid(T)); }).get();
}
const std::type_info& AllTypes(DType dtype) {
  return JAXCC_DISPATCH_ALL_TYPES(dtype, T, { return std::ref(typeid(T)); }).get();
}
const std::type_info& All(DType dtype) {
  return JAXCC_DISPATCH_ALL(dtype, T, { return std::ref(typeid(T)); }).get();
}
const std::type_info& Complex(DType dtype) {
  return JAXCC_DISPATCH_COMPLEX(dtype, T, { return std::ref(typeid(T)); }).get();
}
const std::type_info& Index(DType dtype) {
  return JAXCC_DISPATCH_INDEX(dtype, T, { return std::ref(typeid(T)); }).get();
}

// Expects a DTypeError that names the dtype, the macro and the supported list.
template <class F>
void ExpectDTypeError(F dispatch, DType dtype, const std::string& macro,
                      const std::string& supported) {
  try {
    dispatch(dtype);
    ADD_FAILURE() << macro << " accepted " << dtype;
  } catch (const DTypeError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.dtype(), dtype);
    EXPECT_NE(message.find("unsupported dtype " + std::string(dtype_name(dtype)) + " in " + macro +
                           " at "),
              std::string::npos)
        << message;
    const std::size_t list = message.find("; supported dtypes: ");
    EXPECT_NE(list, std::string::npos) << message;
    EXPECT_NE(message.find(supported, list), std::string::npos) << message;
  }
}

const std::vector<std::pair<DType, const std::type_info*>> kIntegral = {
    {DType::Bool, &typeid(bool)},
    {DType::Int8, &typeid(std::int8_t)},
    {DType::Int16, &typeid(std::int16_t)},
    {DType::Int32, &typeid(std::int32_t)},
    {DType::Int64, &typeid(std::int64_t)},
    {DType::UInt8, &typeid(std::uint8_t)},
    {DType::UInt16, &typeid(std::uint16_t)},
    {DType::UInt32, &typeid(std::uint32_t)},
    {DType::UInt64, &typeid(std::uint64_t)},
};

TEST(DispatchTest, FloatingBindsFloatAndDouble) {
  EXPECT_EQ(Floating(DType::Float32), typeid(float));
  EXPECT_EQ(Floating(DType::Float64), typeid(double));
  ExpectDTypeError(Floating, DType::Int32, "JAXCC_DISPATCH_FLOATING", "float32, float64");
  ExpectDTypeError(Floating, DType::Float16, "JAXCC_DISPATCH_FLOATING", "float32, float64");
}

TEST(DispatchTest, FloatingAndHalfAddsTheSixteenBitTypes) {
  EXPECT_EQ(FloatingAndHalf(DType::Float32), typeid(float));
  EXPECT_EQ(FloatingAndHalf(DType::Float64), typeid(double));
  EXPECT_EQ(FloatingAndHalf(DType::Float16), typeid(float16_t));
  EXPECT_EQ(FloatingAndHalf(DType::BFloat16), typeid(bfloat16_t));
  ExpectDTypeError(FloatingAndHalf, DType::Complex64, "JAXCC_DISPATCH_FLOATING_AND_HALF",
                   "float32, float64, float16, bfloat16");
}

TEST(DispatchTest, HostHalfTypesAreRawBits) {
  // This test binary is built by a host compiler without CUDA.
  static_assert(std::is_same_v<float16_t, Float16Bits>);
  static_assert(std::is_same_v<bfloat16_t, BFloat16Bits>);
  static_assert(sizeof(float16_t) == 2 && std::is_trivially_copyable_v<float16_t>);
  static_assert(std::is_same_v<complex64_t, std::complex<float>>);
  static_assert(std::is_same_v<complex128_t, std::complex<double>>);
  float16_t one{0x3c00};
  EXPECT_EQ(one.bits, 0x3c00);
}

TEST(DispatchTest, IntegralBindsBoolAndEveryInteger) {
  for (const auto& [dtype, type] : kIntegral) EXPECT_EQ(Integral(dtype), *type) << dtype;
  ExpectDTypeError(Integral, DType::Float32, "JAXCC_DISPATCH_INTEGRAL",
                   "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64");
}

TEST(DispatchTest, AllTypesIsFloatingPlusIntegral) {
  EXPECT_EQ(AllTypes(DType::Float32), typeid(float));
  EXPECT_EQ(AllTypes(DType::Float64), typeid(double));
  for (const auto& [dtype, type] : kIntegral) EXPECT_EQ(AllTypes(dtype), *type) << dtype;
  ExpectDTypeError(AllTypes, DType::BFloat16, "JAXCC_DISPATCH_ALL_TYPES",
                   "float32, float64, bool, int8");
  ExpectDTypeError(AllTypes, DType::Complex128, "JAXCC_DISPATCH_ALL_TYPES", "uint64");
}

TEST(DispatchTest, AllCoversEveryValidDType) {
  EXPECT_EQ(All(DType::Float32), typeid(float));
  EXPECT_EQ(All(DType::Float64), typeid(double));
  EXPECT_EQ(All(DType::Float16), typeid(float16_t));
  EXPECT_EQ(All(DType::BFloat16), typeid(bfloat16_t));
  EXPECT_EQ(All(DType::Complex64), typeid(std::complex<float>));
  EXPECT_EQ(All(DType::Complex128), typeid(std::complex<double>));
  for (const auto& [dtype, type] : kIntegral) EXPECT_EQ(All(dtype), *type) << dtype;
  ExpectDTypeError(All, DType::Invalid, "JAXCC_DISPATCH_ALL", "complex64, complex128");
  ExpectDTypeError(All, static_cast<DType>(99), "JAXCC_DISPATCH_ALL", "float32");
}

TEST(DispatchTest, ComplexAndIndex) {
  EXPECT_EQ(Complex(DType::Complex64), typeid(complex64_t));
  EXPECT_EQ(Complex(DType::Complex128), typeid(complex128_t));
  ExpectDTypeError(Complex, DType::Float32, "JAXCC_DISPATCH_COMPLEX", "complex64, complex128");
  EXPECT_EQ(Index(DType::Int32), typeid(std::int32_t));
  EXPECT_EQ(Index(DType::Int64), typeid(std::int64_t));
  ExpectDTypeError(Index, DType::UInt32, "JAXCC_DISPATCH_INDEX", "int32, int64");
}

TEST(DispatchTest, BodyMayContainCommasAndUseTheTensor) {
  float data[4] = {1, 2, 3, 4};
  const std::int64_t shape[1] = {4};
  Tensor x(data, shape, 1, DType::Float32);
  double sum = 0;
  JAXCC_DISPATCH_FLOATING(x.dtype(), scalar_t, {
    const scalar_t* p = x.data_ptr<scalar_t>();
    std::pair<int, scalar_t> unused{0, scalar_t(0)}, also_unused{1, scalar_t(1)};
    (void)unused, (void)also_unused;
    for (std::int64_t i = 0, n = x.numel(); i < n; ++i) sum += p[i];
  });
  EXPECT_EQ(sum, 10.0);
}

TEST(DispatchTest, BodyWithoutBracesAndNestedDispatch) {
  int calls = 0;
  JAXCC_DISPATCH_INDEX(DType::Int64, I, ++calls);
  JAXCC_DISPATCH_FLOATING(DType::Float64, V, {
    JAXCC_DISPATCH_INDEX(DType::Int32, I, {
      EXPECT_EQ(typeid(V), typeid(double));
      EXPECT_EQ(typeid(I), typeid(std::int32_t));
      ++calls;
    });
  });
  EXPECT_EQ(calls, 2);
}

TEST(DispatchTest, DTypeIsEvaluatedOnce) {
  int evaluations = 0;
  auto dtype = [&] {
    ++evaluations;
    return DType::Float32;
  };
  JAXCC_DISPATCH_ALL(dtype(), T, { (void)sizeof(T); });
  EXPECT_EQ(evaluations, 1);
}

}  // namespace
}  // namespace jaxcc
