// The data_ptr<T>() rule (jaxcc/dtype_view.h) and its check in jaxcc::Tensor.
#include "jaxcc/dtype_view.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "jaxcc/dispatch.h"
#include "jaxcc/tensor.h"

namespace jaxcc {
namespace {

const std::vector<DType> kAllDTypes = {
    DType::Float16, DType::Float32, DType::Float64, DType::BFloat16,  DType::Int8,
    DType::Int16,   DType::Int32,   DType::Int64,   DType::UInt8,     DType::UInt16,
    DType::UInt32,  DType::UInt64,  DType::Bool,    DType::Complex64, DType::Complex128};

bool IsFloat(DType d) {
  return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 ||
         d == DType::Float64 || d == DType::Complex64 || d == DType::Complex128;
}

// cv-qualifiers do not change what a type may read.
static_assert(dtype_view_accepts<const float>(DType::Float32));
static_assert(dtype_view_accepts<const volatile std::uint16_t>(DType::BFloat16));
static_assert(!dtype_view_accepts<const float>(DType::Int32));
// DType::Invalid is read by nothing but void.
static_assert(!dtype_view_accepts<float>(DType::Invalid));
static_assert(!dtype_view_accepts<std::uint8_t>(DType::Invalid));
static_assert(dtype_view_accepts<void>(DType::Invalid));
// `long long` and `long` follow the width rule whatever int64_t is on the platform.
static_assert(dtype_view_accepts<long long>(DType::Int64));
static_assert(dtype_view_accepts<unsigned long long>(DType::Int64));
static_assert(dtype_view_accepts<char>(DType::Bool));
// Only uint16_t is the 16-bit floats' storage, not every unsigned 16-bit integer type.
static_assert(dtype_view_accepts<unsigned short>(DType::Float16));
static_assert(!dtype_view_accepts<char16_t>(DType::Float16));
static_assert(dtype_view_accepts<char16_t>(DType::UInt16));
// Not element types: data_ptr<T>() refuses them at compile time.
struct NotAnElement {
  float a, b;
};
static_assert(DTypeView<NotAnElement>::mask == 0);
static_assert(DTypeView<float*>::mask == 0);

// Every type the dispatch macros bind for a dtype reads that dtype: the two tables agree.
TEST(DTypeViewTest, DispatchBindingsAreAccepted) {
  for (DType d : kAllDTypes) {
    JAXCC_DISPATCH_ALL(d, T, {
      EXPECT_TRUE(dtype_view_accepts<T>(d)) << dtype_name(d);
      EXPECT_TRUE(dtype_view_accepts<const T>(d)) << dtype_name(d);
    });
  }
}

// The aliases real kernels rely on (issue 37 item 4).
TEST(DTypeViewTest, AliasesAreAccepted) {
  EXPECT_TRUE(dtype_view_accepts<std::int8_t>(DType::Bool));
  EXPECT_TRUE(dtype_view_accepts<std::uint8_t>(DType::Bool));
  EXPECT_TRUE(dtype_view_accepts<bool>(DType::Bool));
  EXPECT_TRUE(dtype_view_accepts<std::uint16_t>(DType::Float16));
  EXPECT_TRUE(dtype_view_accepts<std::uint16_t>(DType::BFloat16));
  EXPECT_TRUE(dtype_view_accepts<Float16Bits>(DType::Float16));
  EXPECT_TRUE(dtype_view_accepts<BFloat16Bits>(DType::BFloat16));
  EXPECT_TRUE(dtype_view_accepts<std::uint32_t>(DType::Int32));
  EXPECT_TRUE(dtype_view_accepts<std::int32_t>(DType::UInt32));
  EXPECT_TRUE(dtype_view_accepts<std::uint64_t>(DType::Int64));
  EXPECT_TRUE(dtype_view_accepts<std::int8_t>(DType::UInt8));
  EXPECT_TRUE(dtype_view_accepts<std::uint16_t>(DType::Int16));
  EXPECT_TRUE(dtype_view_accepts<std::complex<float>>(DType::Complex64));
  EXPECT_TRUE(dtype_view_accepts<std::complex<double>>(DType::Complex128));
}

TEST(DTypeViewTest, RefusedPairs) {
  EXPECT_FALSE(dtype_view_accepts<float>(DType::Int32));  // issue 37: 1065353216
  EXPECT_FALSE(dtype_view_accepts<float>(DType::Float64));
  EXPECT_FALSE(dtype_view_accepts<double>(DType::Float32));
  EXPECT_FALSE(dtype_view_accepts<std::int32_t>(DType::Float32));
  EXPECT_FALSE(dtype_view_accepts<std::int16_t>(DType::Float16));  // only uint16_t is storage
  EXPECT_FALSE(dtype_view_accepts<bool>(DType::Int8));             // a byte other than 0/1
  EXPECT_FALSE(dtype_view_accepts<Float16Bits>(DType::BFloat16));
  EXPECT_FALSE(dtype_view_accepts<std::int64_t>(DType::Int32));
  EXPECT_FALSE(dtype_view_accepts<std::int8_t>(DType::Int16));
  EXPECT_FALSE(dtype_view_accepts<std::complex<float>>(DType::Float64));
}

// Exhaustive over the integer types × every dtype, against the rule in words: the same width,
// and never a float (only the 16-bit floats' storage, uint16_t, is allowed).
template <class T>
void ExpectIntegerRule() {
  for (DType d : kAllDTypes) {
    bool expected = dtype_size(d) == sizeof(T) && !IsFloat(d);
    if (std::is_same<T, std::uint16_t>::value && (d == DType::Float16 || d == DType::BFloat16)) {
      expected = true;
    }
    EXPECT_EQ(dtype_view_accepts<T>(d), expected) << DTypeView<T>::name << " vs " << dtype_name(d);
  }
}

TEST(DTypeViewTest, IntegersReadOnlyIntegersOfTheirWidth) {
  ExpectIntegerRule<std::int8_t>();
  ExpectIntegerRule<std::uint8_t>();
  ExpectIntegerRule<char>();
  ExpectIntegerRule<std::int16_t>();
  ExpectIntegerRule<std::uint16_t>();
  ExpectIntegerRule<std::int32_t>();
  ExpectIntegerRule<std::uint32_t>();
  ExpectIntegerRule<std::int64_t>();
  ExpectIntegerRule<std::uint64_t>();
  ExpectIntegerRule<long long>();
}

TEST(DTypeViewTest, FloatsReadOnlyTheirOwnDType) {
  for (DType d : kAllDTypes) {
    EXPECT_EQ(dtype_view_accepts<float>(d), d == DType::Float32) << dtype_name(d);
    EXPECT_EQ(dtype_view_accepts<double>(d), d == DType::Float64) << dtype_name(d);
    EXPECT_EQ(dtype_view_accepts<Float16Bits>(d), d == DType::Float16) << dtype_name(d);
    EXPECT_EQ(dtype_view_accepts<BFloat16Bits>(d), d == DType::BFloat16) << dtype_name(d);
    EXPECT_EQ(dtype_view_accepts<void>(d), true) << dtype_name(d);
  }
}

// Runs `body`, expecting a DTypeError whose message contains every fragment.
template <class F>
void ExpectDTypeError(F body, const std::vector<std::string>& fragments, DType dtype) {
  try {
    body();
    ADD_FAILURE() << "expected jaxcc::DTypeError";
  } catch (const DTypeError& e) {
    for (const std::string& fragment : fragments) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "missing '" << fragment << "' in: " << e.what();
    }
    EXPECT_EQ(e.dtype(), dtype);
  }
}

// issue 37: add_one(int32 array) on a float kernel returned the bits 1065353216.
TEST(TensorDataPtrTest, Int32ReadAsFloatIsATypedErrorNamingParamAndBothDTypes) {
  std::int32_t data[4] = {};
  const std::int64_t shape[1] = {4};
  Tensor x(data, shape, 1, DType::Int32);
  x.set_name("x");
  ExpectDTypeError([&] { (void)x.data_ptr<float>(); },
                   {"parameter 'x'", "is int32", "reads it as float", "float32"}, DType::Int32);
  ExpectDTypeError([&] { (void)x.data_ptr<const float>(); }, {"parameter 'x'"}, DType::Int32);
}

// issue 37: a float64 array on a float kernel handed back garbage (half of each double's bits).
TEST(TensorDataPtrTest, Float64ReadAsFloatIsATypedError) {
  double data[2] = {};
  const std::int64_t shape[1] = {2};
  Tensor x(data, shape, 1, DType::Float64);
  x.set_name("weights");
  ExpectDTypeError([&] { (void)x.data_ptr<float>(); },
                   {"parameter 'weights'", "is float64", "float32"}, DType::Float64);
}

TEST(TensorDataPtrTest, MatchingTypesAndAliasesReturnTheData) {
  std::uint16_t data[2] = {};
  const std::int64_t shape[1] = {2};
  Tensor half(data, shape, 1, DType::Float16);
  EXPECT_EQ(half.data_ptr<std::uint16_t>(), data);
  EXPECT_EQ(half.data_ptr<const std::uint16_t>(), data);
  EXPECT_EQ(half.data_ptr<float16_t>(), reinterpret_cast<float16_t*>(data));
  EXPECT_EQ(half.data_ptr<void>(), data);
  Tensor flags(data, shape, 1, DType::Bool);
  EXPECT_EQ(flags.data_ptr<std::int8_t>(), reinterpret_cast<std::int8_t*>(data));
  EXPECT_EQ(flags.data_ptr<std::uint8_t>(), reinterpret_cast<std::uint8_t*>(data));
  EXPECT_EQ(flags.data_ptr<bool>(), reinterpret_cast<bool*>(data));
  Tensor indices(data, shape, 1, DType::UInt32);
  EXPECT_EQ(indices.data_ptr<std::int32_t>(), reinterpret_cast<std::int32_t*>(data));
}

TEST(TensorDataPtrTest, UnnamedTensorsAreDescribedAsSuch) {
  float data[1] = {};
  const std::int64_t shape[1] = {1};
  Tensor built(data, shape, 1, DType::Float32);
  ExpectDTypeError([&] { (void)built.data_ptr<std::int32_t>(); },
                   {"a jaxcc::Tensor is float32", "int32_t", "int32, uint32"}, DType::Float32);
  built.set_name("");  // a parameter an explicit arg_spec gave no name
  ExpectDTypeError([&] { (void)built.data_ptr<double>(); }, {"an unnamed parameter"},
                   DType::Float32);
}

TEST(TensorDataPtrTest, EmptyDefaultTensorHandsOutItsNullPointer) {
  Tensor empty;
  EXPECT_EQ(empty.data_ptr<float>(), nullptr);
  EXPECT_EQ(empty.data_ptr<std::int64_t>(), nullptr);
}

TEST(TensorDataPtrTest, NameTravelsWithCopies) {
  float data[1] = {};
  const std::int64_t shape[1] = {1};
  Tensor x(data, shape, 1, DType::Float32);
  x.set_name("rows");
  const Tensor copy = x;
  EXPECT_STREQ(copy.name(), "rows");
  ExpectDTypeError([&] { (void)copy.data_ptr<std::int32_t>(); }, {"parameter 'rows'"},
                   DType::Float32);
}

// A DTypeError is what the generated handler turns into INVALID_ARGUMENT (ffi_common.h).
TEST(TensorDataPtrTest, MismatchIsADTypeErrorNotACheckError) {
  float data[1] = {};
  const std::int64_t shape[1] = {1};
  Tensor x(data, shape, 1, DType::Float32);
  EXPECT_THROW((void)x.data_ptr<std::int32_t>(), DTypeError);
}

}  // namespace
}  // namespace jaxcc
