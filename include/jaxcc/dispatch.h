// Type-dispatch macros: run a body with a type alias bound to a Tensor's dtype, or throw
// DTypeError.
//
//   JAXCC_DISPATCH_FLOATING(x.dtype(), T, {
//     scale_kernel<T><<<blocks, threads, 0, stream>>>(x.data_ptr<T>(), out.data_ptr<T>(), n);
//   });
//
// Every macro has the form JAXCC_DISPATCH_<SET>(dtype, T, body...): `body` (which may contain
// commas) runs inside an immediately invoked [&] lambda with `using T = <C++ type>;` in scope, so
// a `return` in the body leaves the dispatch, not the enclosing function, and the macro's value is
// whatever the body returns (every branch must return the same type). A dtype outside the set
// throws jaxcc::DTypeError naming the dtype, the macro, the call site and the supported dtypes;
// nothing here aborts. The macros throw, so they belong in host code (nvcc's host side included).
#pragma once

#include <string>

#include "jaxcc/check.h"
#include "jaxcc/dtype.h"
#include "jaxcc/scalar_types.h"

namespace jaxcc::detail {

/// The default branch of every dispatch macro.
[[noreturn]] inline void ThrowUnsupportedDType(DType dtype, const char* macro,
                                               const char* supported, const char* file, int line) {
  throw DTypeError("unsupported dtype " + std::string(dtype_name(dtype)) + " in " + macro + " at " +
                       file + ":" + std::to_string(line) + "; supported dtypes: " + supported,
                   dtype);
}

}  // namespace jaxcc::detail

// Building blocks. Parameter names carry a trailing underscore so that they cannot capture
// identifiers of the expansion. The alias is [[maybe_unused]]: a body need not mention it.
#define JAXCC_DETAIL_DISPATCH_CASE(ENUM_, CPP_TYPE_, TYPE_, ...) \
  case ::jaxcc::DType::ENUM_: {                                  \
    using TYPE_ [[maybe_unused]] = CPP_TYPE_;                    \
    __VA_ARGS__;                                                 \
  } break;

// The two halves of the lambda and switch have unbalanced braces, which clang-format mangles.
// clang-format off
#define JAXCC_DETAIL_DISPATCH_BEGIN(DTYPE_)                   \
  [&] {                                                       \
    const ::jaxcc::DType jaxcc_dispatch_dtype_ = (DTYPE_);    \
    switch (jaxcc_dispatch_dtype_) {

#define JAXCC_DETAIL_DISPATCH_END(MACRO_, SUPPORTED_)                                       \
      default:                                                                              \
        ::jaxcc::detail::ThrowUnsupportedDType(jaxcc_dispatch_dtype_, MACRO_, SUPPORTED_,   \
                                               __FILE__, __LINE__);                         \
    }                                                                                       \
  }()
// clang-format on

#define JAXCC_DETAIL_CASES_FLOATING(TYPE_, ...)                  \
  JAXCC_DETAIL_DISPATCH_CASE(Float32, float, TYPE_, __VA_ARGS__) \
  JAXCC_DETAIL_DISPATCH_CASE(Float64, double, TYPE_, __VA_ARGS__)

#define JAXCC_DETAIL_CASES_HALF(TYPE_, ...)                                   \
  JAXCC_DETAIL_DISPATCH_CASE(Float16, ::jaxcc::float16_t, TYPE_, __VA_ARGS__) \
  JAXCC_DETAIL_DISPATCH_CASE(BFloat16, ::jaxcc::bfloat16_t, TYPE_, __VA_ARGS__)

#define JAXCC_DETAIL_CASES_INTEGRAL(TYPE_, ...)                         \
  JAXCC_DETAIL_DISPATCH_CASE(Bool, bool, TYPE_, __VA_ARGS__)            \
  JAXCC_DETAIL_DISPATCH_CASE(Int8, std::int8_t, TYPE_, __VA_ARGS__)     \
  JAXCC_DETAIL_DISPATCH_CASE(Int16, std::int16_t, TYPE_, __VA_ARGS__)   \
  JAXCC_DETAIL_DISPATCH_CASE(Int32, std::int32_t, TYPE_, __VA_ARGS__)   \
  JAXCC_DETAIL_DISPATCH_CASE(Int64, std::int64_t, TYPE_, __VA_ARGS__)   \
  JAXCC_DETAIL_DISPATCH_CASE(UInt8, std::uint8_t, TYPE_, __VA_ARGS__)   \
  JAXCC_DETAIL_DISPATCH_CASE(UInt16, std::uint16_t, TYPE_, __VA_ARGS__) \
  JAXCC_DETAIL_DISPATCH_CASE(UInt32, std::uint32_t, TYPE_, __VA_ARGS__) \
  JAXCC_DETAIL_DISPATCH_CASE(UInt64, std::uint64_t, TYPE_, __VA_ARGS__)

#define JAXCC_DETAIL_CASES_COMPLEX(TYPE_, ...)                                    \
  JAXCC_DETAIL_DISPATCH_CASE(Complex64, ::jaxcc::complex64_t, TYPE_, __VA_ARGS__) \
  JAXCC_DETAIL_DISPATCH_CASE(Complex128, ::jaxcc::complex128_t, TYPE_, __VA_ARGS__)

#define JAXCC_DETAIL_INTEGRAL_NAMES "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64"

/// float32 → float, float64 → double.
#define JAXCC_DISPATCH_FLOATING(DTYPE_, TYPE_, ...) \
  JAXCC_DETAIL_DISPATCH_BEGIN(DTYPE_)               \
  JAXCC_DETAIL_CASES_FLOATING(TYPE_, __VA_ARGS__)   \
  JAXCC_DETAIL_DISPATCH_END("JAXCC_DISPATCH_FLOATING", "float32, float64")

/// FLOATING plus float16 → jaxcc::float16_t and bfloat16 → jaxcc::bfloat16_t (`__half` and
/// `__nv_bfloat16` under CUDA, raw-bits structs otherwise).
#define JAXCC_DISPATCH_FLOATING_AND_HALF(DTYPE_, TYPE_, ...)    \
  JAXCC_DETAIL_DISPATCH_BEGIN(DTYPE_)                           \
  JAXCC_DETAIL_CASES_FLOATING(TYPE_, __VA_ARGS__)               \
  JAXCC_DETAIL_CASES_HALF(TYPE_, __VA_ARGS__)                   \
  JAXCC_DETAIL_DISPATCH_END("JAXCC_DISPATCH_FLOATING_AND_HALF", \
                            "float32, float64, float16, bfloat16")

/// bool → bool, int8..int64 → std::int8_t..std::int64_t, uint8..uint64 → std::uint8_t..uint64_t.
#define JAXCC_DISPATCH_INTEGRAL(DTYPE_, TYPE_, ...) \
  JAXCC_DETAIL_DISPATCH_BEGIN(DTYPE_)               \
  JAXCC_DETAIL_CASES_INTEGRAL(TYPE_, __VA_ARGS__)   \
  JAXCC_DETAIL_DISPATCH_END("JAXCC_DISPATCH_INTEGRAL", JAXCC_DETAIL_INTEGRAL_NAMES)

/// int32 → std::int32_t, int64 → std::int64_t (index arrays, e.g. CSR indices and indptr).
#define JAXCC_DISPATCH_INDEX(DTYPE_, TYPE_, ...)                      \
  JAXCC_DETAIL_DISPATCH_BEGIN(DTYPE_)                                 \
  JAXCC_DETAIL_DISPATCH_CASE(Int32, std::int32_t, TYPE_, __VA_ARGS__) \
  JAXCC_DETAIL_DISPATCH_CASE(Int64, std::int64_t, TYPE_, __VA_ARGS__) \
  JAXCC_DETAIL_DISPATCH_END("JAXCC_DISPATCH_INDEX", "int32, int64")

/// complex64 → jaxcc::complex64_t, complex128 → jaxcc::complex128_t.
#define JAXCC_DISPATCH_COMPLEX(DTYPE_, TYPE_, ...) \
  JAXCC_DETAIL_DISPATCH_BEGIN(DTYPE_)              \
  JAXCC_DETAIL_CASES_COMPLEX(TYPE_, __VA_ARGS__)   \
  JAXCC_DETAIL_DISPATCH_END("JAXCC_DISPATCH_COMPLEX", "complex64, complex128")

/// FLOATING + INTEGRAL (no 16-bit floats, no complex).
#define JAXCC_DISPATCH_ALL_TYPES(DTYPE_, TYPE_, ...)    \
  JAXCC_DETAIL_DISPATCH_BEGIN(DTYPE_)                   \
  JAXCC_DETAIL_CASES_FLOATING(TYPE_, __VA_ARGS__)       \
  JAXCC_DETAIL_CASES_INTEGRAL(TYPE_, __VA_ARGS__)       \
  JAXCC_DETAIL_DISPATCH_END("JAXCC_DISPATCH_ALL_TYPES", \
                            "float32, float64, " JAXCC_DETAIL_INTEGRAL_NAMES)

/// Every DType except Invalid: FLOATING_AND_HALF + INTEGRAL + COMPLEX.
#define JAXCC_DISPATCH_ALL(DTYPE_, TYPE_, ...)                                                  \
  JAXCC_DETAIL_DISPATCH_BEGIN(DTYPE_)                                                           \
  JAXCC_DETAIL_CASES_FLOATING(TYPE_, __VA_ARGS__)                                               \
  JAXCC_DETAIL_CASES_HALF(TYPE_, __VA_ARGS__)                                                   \
  JAXCC_DETAIL_CASES_INTEGRAL(TYPE_, __VA_ARGS__)                                               \
  JAXCC_DETAIL_CASES_COMPLEX(TYPE_, __VA_ARGS__)                                                \
  JAXCC_DETAIL_DISPATCH_END("JAXCC_DISPATCH_ALL",                                               \
                            "float32, float64, float16, bfloat16, " JAXCC_DETAIL_INTEGRAL_NAMES \
                            ", complex64, complex128")
