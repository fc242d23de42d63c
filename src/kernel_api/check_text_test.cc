// jaxcc/detail/check_text.h, the check message text of kernel units without the iostreams
// (decision 129), against the reference it must equal: std::ostringstream in its default format,
// over random values of every type it formats (fixed seed) and the edge values of each.
#include "jaxcc/detail/check_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

namespace jaxcc::detail {
namespace {

template <class T>
std::string Lean(const T& value) {
  CheckText text;
  AppendCheckText(text, value);
  return text.text;
}

template <class T>
std::string Reference(const T& value) {
  std::ostringstream stream;
  stream << value;
  return stream.str();
}

template <class T>
void ExpectSameText(const T& value) {
  ASSERT_EQ(Lean(value), Reference(value)) << typeid(T).name();
}

template <class T>
void ExpectIntegers(std::mt19937_64& random) {
  ExpectSameText(std::numeric_limits<T>::min());
  ExpectSameText(std::numeric_limits<T>::max());
  ExpectSameText(T{0});
  for (int i = 0; i < 500; ++i) {
    // Every magnitude, not only the large numbers a uniform draw gives.
    const int bits = static_cast<int>(random() % (8 * sizeof(T)));
    ExpectSameText(static_cast<T>(random() >> (63 - bits)));
  }
}

template <class T>
void ExpectFloats(std::mt19937_64& random) {
  using Limits = std::numeric_limits<T>;
  for (T edge : {T{0}, -T{0}, Limits::infinity(), -Limits::infinity(), Limits::quiet_NaN(),
                 -Limits::quiet_NaN(), Limits::min(), Limits::denorm_min(), Limits::max(),
                 Limits::lowest(), Limits::epsilon(), T{1} / T{3}, T{123456.5}, T{1e6}, T{1e-5}}) {
    ExpectSameText(edge);
  }
  std::uniform_real_distribution<double> mantissa(-10.0, 10.0);
  std::uniform_int_distribution<int> exponent(-40, 40);
  for (int i = 0; i < 2000; ++i) {
    ExpectSameText(static_cast<T>(std::ldexp(mantissa(random), exponent(random))));
  }
}

TEST(CheckText, NumbersAreWrittenAsTheDefaultStreamWritesThem) {
  std::mt19937_64 random(20261124);
  ExpectIntegers<short>(random);
  ExpectIntegers<unsigned short>(random);
  ExpectIntegers<int>(random);
  ExpectIntegers<unsigned>(random);
  ExpectIntegers<long>(random);
  ExpectIntegers<unsigned long>(random);
  ExpectIntegers<long long>(random);
  ExpectIntegers<unsigned long long>(random);
  ExpectFloats<float>(random);
  ExpectFloats<double>(random);
  ExpectFloats<long double>(random);
}

TEST(CheckText, BoolCharactersAndStrings) {
  ExpectSameText(true);
  ExpectSameText(false);
  for (int c = 1; c < 128; ++c) {
    ExpectSameText(static_cast<char>(c));
    ExpectSameText(static_cast<signed char>(c));  // int8_t: a character, as the stream has it
    ExpectSameText(static_cast<unsigned char>(c));
  }
  ExpectSameText(char16_t{97});  // promoted to int
  ExpectSameText(char32_t{98});
  ExpectSameText("a literal");
  const char* pointer = "a C string";
  ExpectSameText(pointer);
  ExpectSameText(std::string("a std::string\nwith a newline"));
  ExpectSameText(std::string_view("a view"));
  ExpectSameText(std::string());
}

TEST(CheckText, PointersEnumsAndDTypes) {
  int x = 0;
  ExpectSameText(&x);
  ExpectSameText(static_cast<const void*>(&x));
  ExpectSameText(static_cast<void*>(nullptr));
  ExpectSameText(static_cast<int*>(nullptr));
  ExpectSameText(nullptr);
  void (*function)() = [] {};
  ExpectSameText(function);
  enum Plain { kZero, kSeven = 7 };
  enum Wide : unsigned long long { kBig = ~0ull };
  ExpectSameText(kSeven);
  ExpectSameText(kBig);
  for (DType dtype : {DType::Float32, DType::Int8, DType::Bool, DType::Complex128}) {
    ExpectSameText(dtype);
  }
}

TEST(CheckText, ANullCStringEndsTheMessageAsTheStreamsBadbitDoes) {
  const char* none = nullptr;
  std::ostringstream stream;
  stream << "before " << none << " after " << 3;
  CheckText text;
  AppendCheckText(text, "before ");
  AppendCheckText(text, none);
  AppendCheckText(text, " after ");
  AppendCheckText(text, 3);
  EXPECT_EQ(text.text, stream.str());
  EXPECT_EQ(text.text, "before ");
}

}  // namespace
}  // namespace jaxcc::detail
