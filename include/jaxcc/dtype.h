// jaxcc::DType: the element types a kernel can receive, with their sizes and printable names.
#pragma once

#include <cstddef>
#include <cstdint>
#if defined(JAXCC_DETAIL_NO_OSTREAM)
#include <iosfwd>
#else
#include <ostream>
#endif

#include "jaxcc/macros.h"

namespace jaxcc {

/// Element type of a jaxcc::Tensor. The numeric values match brainevent's BE::DType, so code that
/// stored or switched on them keeps working; they are NOT XLA's PrimitiveType numbers.
enum class DType : std::uint8_t {
  Float16 = 0,
  Float32,
  Float64,
  BFloat16,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Bool,
  Complex64,
  Complex128,
  Invalid = 255,
};

/// Size of one element in bytes; 0 for DType::Invalid or a value outside the enum.
JAXCC_HOST_DEVICE constexpr std::size_t dtype_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool:
      return 1;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Int16:
    case DType::UInt16:
      return 2;
    case DType::Float32:
    case DType::Int32:
    case DType::UInt32:
      return 4;
    case DType::Float64:
    case DType::Int64:
    case DType::UInt64:
    case DType::Complex64:
      return 8;
    case DType::Complex128:
      return 16;
    case DType::Invalid:
      return 0;
  }
  return 0;
}

/// NumPy-style name ("float32", "bfloat16", "bool", ...); "invalid" for DType::Invalid and
/// "unknown" for a value outside the enum, so messages never print garbage.
JAXCC_HOST_DEVICE constexpr const char* dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::Float16:
      return "float16";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::BFloat16:
      return "bfloat16";
    case DType::Int8:
      return "int8";
    case DType::Int16:
      return "int16";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::UInt8:
      return "uint8";
    case DType::UInt16:
      return "uint16";
    case DType::UInt32:
      return "uint32";
    case DType::UInt64:
      return "uint64";
    case DType::Bool:
      return "bool";
    case DType::Complex64:
      return "complex64";
    case DType::Complex128:
      return "complex128";
    case DType::Invalid:
      return "invalid";
  }
  return "unknown";
}

/// Streams dtype_name(dtype), so `JAXCC_CHECK(...) << x.dtype()` reads naturally. In a unit
/// without the iostreams (JAXCC_DETAIL_NO_OSTREAM) it is a template, instantiated only where a
/// stream is complete: a header of the user's that includes <ostream> can still use it.
#if defined(JAXCC_DETAIL_NO_OSTREAM)
template <class Char, class Traits>
std::basic_ostream<Char, Traits>& operator<<(std::basic_ostream<Char, Traits>& os, DType dtype) {
  return os << dtype_name(dtype);
}
#else
inline std::ostream& operator<<(std::ostream& os, DType dtype) { return os << dtype_name(dtype); }
#endif

}  // namespace jaxcc
