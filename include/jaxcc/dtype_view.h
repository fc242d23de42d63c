// The one rule for typed access to a buffer: which C++ element types may view which DType
// (Tensor::data_ptr<T>() checks it on every host call).
#pragma once

#include <cstdint>
#include <type_traits>

#include "jaxcc/dtype.h"
#include "jaxcc/macros.h"
#include "jaxcc/scalar_types.h"

namespace jaxcc {

/// Bit `d` stands for DType `d`; a mask is a set of DTypes. DType::Invalid (255) is bit 31, which
/// only DTypeView<void> sets.
JAXCC_HOST_DEVICE constexpr std::uint32_t dtype_bit(DType dtype) noexcept {
  return std::uint32_t{1} << (static_cast<unsigned>(dtype) & 31u);
}

/// The DTypes whose buffers `data_ptr<T>()` may hand out as `T*` (cv-qualifiers removed first).
///
/// The rule: a buffer is read as its own element type, or as a type with the same bits that
/// real kernels use for it — bool as any one-byte integer, float16 and bfloat16 as `uint16_t`
/// (their storage), a signed integer as the unsigned one of its width and back. A float is never
/// read as an integer nor an integer as a float, and no type reads a buffer of another width.
///
/// `mask == 0` means T is not an element type at all; data_ptr<T>() then fails to compile and
/// points at the untyped data_ptr(). A kernel with its own element type (say, a struct of two
/// floats over a complex64 buffer) specialises this template for it:
///
///     template <> struct jaxcc::DTypeView<MyPair> {
///       static constexpr std::uint32_t mask = jaxcc::dtype_bit(jaxcc::DType::Complex64);
///       static constexpr const char* name = "MyPair";
///     };
template <class T, class Enable = void>
struct DTypeView {
  static constexpr std::uint32_t mask = 0;
  static constexpr const char* name = "an unknown type";
};

namespace detail {

constexpr std::uint32_t kIntegerMask8 =
    dtype_bit(DType::Int8) | dtype_bit(DType::UInt8) | dtype_bit(DType::Bool);
constexpr std::uint32_t kIntegerMask16 = dtype_bit(DType::Int16) | dtype_bit(DType::UInt16);
constexpr std::uint32_t kIntegerMask32 = dtype_bit(DType::Int32) | dtype_bit(DType::UInt32);
constexpr std::uint32_t kIntegerMask64 = dtype_bit(DType::Int64) | dtype_bit(DType::UInt64);

// The integer rule by width, so that `long`, `long long`, `char` and the <cstdint> names all
// follow it whatever the platform's typedefs are.
template <class T>
constexpr std::uint32_t IntegerViewMask() {
  switch (sizeof(T)) {
    case 1:
      return kIntegerMask8;
    case 2:
      // uint16_t is the storage type of both 16-bit floats (brainevent's `uint16_t` targets);
      // int16_t is not: a signed reading of float bits is never what a kernel meant.
      return kIntegerMask16 | (std::is_same<T, std::uint16_t>::value
                                   ? dtype_bit(DType::Float16) | dtype_bit(DType::BFloat16)
                                   : 0u);
    case 4:
      return kIntegerMask32;
    case 8:
      return kIntegerMask64;
    default:
      return 0;
  }
}

template <class T>
constexpr const char* IntegerViewName() {
  switch (sizeof(T)) {
    case 1:
      return std::is_same<T, char>::value ? "char"
                                          : (std::is_signed<T>::value ? "int8_t" : "uint8_t");
    case 2:
      return std::is_signed<T>::value ? "int16_t" : "uint16_t";
    case 4:
      return std::is_signed<T>::value ? "int32_t" : "uint32_t";
    case 8:
      return std::is_signed<T>::value ? "int64_t" : "uint64_t";
    default:
      return "an integer type";
  }
}

}  // namespace detail

// Integers other than bool, by width (see IntegerViewMask).
template <class T>
struct DTypeView<T, std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value>> {
  static constexpr std::uint32_t mask = detail::IntegerViewMask<T>();
  static constexpr const char* name = detail::IntegerViewName<T>();
};

template <>
struct DTypeView<bool> {
  // Only bool: an int8 buffer read as bool could hold a byte other than 0 or 1.
  static constexpr std::uint32_t mask = dtype_bit(DType::Bool);
  static constexpr const char* name = "bool";
};

template <>
struct DTypeView<float> {
  static constexpr std::uint32_t mask = dtype_bit(DType::Float32);
  static constexpr const char* name = "float";
};

template <>
struct DTypeView<double> {
  static constexpr std::uint32_t mask = dtype_bit(DType::Float64);
  static constexpr const char* name = "double";
};

// jaxcc's storage structs for the 16-bit floats (float16_t/bfloat16_t without CUDA).
template <>
struct DTypeView<Float16Bits> {
  static constexpr std::uint32_t mask = dtype_bit(DType::Float16);
  static constexpr const char* name = "jaxcc::Float16Bits";
};

template <>
struct DTypeView<BFloat16Bits> {
  static constexpr std::uint32_t mask = dtype_bit(DType::BFloat16);
  static constexpr const char* name = "jaxcc::BFloat16Bits";
};

#if JAXCC_HAS_CUDA_HALF
template <>
struct DTypeView<__half> {
  static constexpr std::uint32_t mask = dtype_bit(DType::Float16);
  static constexpr const char* name = "__half";
};

template <>
struct DTypeView<__nv_bfloat16> {
  static constexpr std::uint32_t mask = dtype_bit(DType::BFloat16);
  static constexpr const char* name = "__nv_bfloat16";
};
#endif

#if JAXCC_HAS_CUDA_RUNTIME
// CUDA's vector types read a buffer of their element type several elements at a time (the
// kernel keeps the count and the alignment right); float2/double2 are also cuComplex's layout.
#define JAXCC_DETAIL_DTYPE_VIEW(TYPE_, MASK_)      \
  template <>                                      \
  struct DTypeView<TYPE_> {                        \
    static constexpr std::uint32_t mask = (MASK_); \
    static constexpr const char* name = #TYPE_;    \
  };
JAXCC_DETAIL_DTYPE_VIEW(float2, dtype_bit(DType::Float32) | dtype_bit(DType::Complex64))
JAXCC_DETAIL_DTYPE_VIEW(float4, dtype_bit(DType::Float32))
JAXCC_DETAIL_DTYPE_VIEW(double2, dtype_bit(DType::Float64) | dtype_bit(DType::Complex128))
JAXCC_DETAIL_DTYPE_VIEW(char2, detail::kIntegerMask8)
JAXCC_DETAIL_DTYPE_VIEW(char4, detail::kIntegerMask8)
JAXCC_DETAIL_DTYPE_VIEW(uchar2, detail::kIntegerMask8)
JAXCC_DETAIL_DTYPE_VIEW(uchar4, detail::kIntegerMask8)
JAXCC_DETAIL_DTYPE_VIEW(short2, detail::kIntegerMask16)
JAXCC_DETAIL_DTYPE_VIEW(short4, detail::kIntegerMask16)
JAXCC_DETAIL_DTYPE_VIEW(ushort2, detail::kIntegerMask16)
JAXCC_DETAIL_DTYPE_VIEW(ushort4, detail::kIntegerMask16)
JAXCC_DETAIL_DTYPE_VIEW(int2, detail::kIntegerMask32)
JAXCC_DETAIL_DTYPE_VIEW(int4, detail::kIntegerMask32)
JAXCC_DETAIL_DTYPE_VIEW(uint2, detail::kIntegerMask32)
JAXCC_DETAIL_DTYPE_VIEW(uint4, detail::kIntegerMask32)
JAXCC_DETAIL_DTYPE_VIEW(longlong2, detail::kIntegerMask64)
JAXCC_DETAIL_DTYPE_VIEW(ulonglong2, detail::kIntegerMask64)
#if JAXCC_HAS_CUDA_HALF
JAXCC_DETAIL_DTYPE_VIEW(__half2, dtype_bit(DType::Float16))
JAXCC_DETAIL_DTYPE_VIEW(__nv_bfloat162, dtype_bit(DType::BFloat16))
#endif
#undef JAXCC_DETAIL_DTYPE_VIEW
#endif  // JAXCC_HAS_CUDA_RUNTIME

// The untyped pointer as a template argument: data_ptr<void>() is data_ptr(), unchecked.
template <>
struct DTypeView<void> {
  static constexpr std::uint32_t mask = ~std::uint32_t{0};
  static constexpr const char* name = "void";
};

// std::complex may be only declared here (scalar_types.h); naming it needs no definition.
template <>
struct DTypeView<std::complex<float>> {
  static constexpr std::uint32_t mask = dtype_bit(DType::Complex64);
  static constexpr const char* name = "std::complex<float>";
};

template <>
struct DTypeView<std::complex<double>> {
  static constexpr std::uint32_t mask = dtype_bit(DType::Complex128);
  static constexpr const char* name = "std::complex<double>";
};

/// True when a buffer of `dtype` may be read as `T*` (the rule of DTypeView). One shift and one
/// test: DType values are below 32, and DType::Invalid maps to bit 31, which only void's mask
/// sets.
template <class T>
JAXCC_HOST_DEVICE constexpr bool dtype_view_accepts(DType dtype) noexcept {
  return (DTypeView<std::remove_cv_t<T>>::mask & dtype_bit(dtype)) != 0;
}

}  // namespace jaxcc
