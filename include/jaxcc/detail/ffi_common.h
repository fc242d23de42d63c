// What both XLA FFI glue headers share, without any XLA header: element-type codes → DType, the
// errors of a buffer a kernel cannot receive, and the classification of a kernel's exception.
//
// XLA's element-type numbers (PrimitiveType) and error codes (absl::StatusCode) are stable, so
// they are matched by number here; ffi_bridge.h (typed XLA FFI API) and ffi_frame.h (C API) both
// build on this header, so the two give identical messages.
#pragma once

#include <cstddef>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "jaxcc/check.h"
#include "jaxcc/dtype.h"
#include "jaxcc/limits.h"
#include "jaxcc/scratch.h"

namespace jaxcc::detail {

/// The DType of an XLA element type number; DType::Invalid for the types Tensor cannot describe
/// (float8/float4 variants, sub-byte integers, TOKEN, ...).
inline DType DTypeFromXlaCode(int type) noexcept {
  switch (type) {
    case 10:
      return DType::Float16;
    case 11:
      return DType::Float32;
    case 12:
      return DType::Float64;
    case 16:
      return DType::BFloat16;
    case 2:
      return DType::Int8;
    case 3:
      return DType::Int16;
    case 4:
      return DType::Int32;
    case 5:
      return DType::Int64;
    case 6:
      return DType::UInt8;
    case 7:
      return DType::UInt16;
    case 8:
      return DType::UInt32;
    case 9:
      return DType::UInt64;
    case 1:
      return DType::Bool;
    case 15:
      return DType::Complex64;
    case 18:
      return DType::Complex128;
    default:
      return DType::Invalid;
  }
}

/// The JAX name of an XLA element type number, including those Tensor cannot describe.
inline std::string XlaTypeNameOfCode(int type) {
  switch (type) {
    case 0:
      return "invalid";
    case 17:
      return "token";
    case 19:
      return "float8_e5m2";
    case 20:
      return "float8_e4m3fn";
    case 21:
      return "int4";
    case 22:
      return "uint4";
    case 23:
      return "float8_e4m3b11fnuz";
    case 24:
      return "float8_e5m2fnuz";
    case 25:
      return "float8_e4m3fnuz";
    case 26:
      return "int2";
    case 27:
      return "uint2";
    case 28:
      return "float8_e4m3";
    case 29:
      return "float8_e3m4";
    case 30:
      return "int1";
    case 31:
      return "uint1";
    case 32:
      return "float4_e2m1fn";
    case 33:
      return "float8_e8m0fnu";
    default: {
      DType dtype = DTypeFromXlaCode(type);
      if (dtype != DType::Invalid) return dtype_name(dtype);
      return "XLA element type " + std::to_string(type);
    }
  }
}

// GCC/Clang hints that keep the error text off the per-call path: the message is built in an
// out-of-line function that is only entered once a check has failed.
#if defined(__GNUC__) || defined(__clang__)
#define JAXCC_BRIDGE_COLD __attribute__((noinline, cold))
#define JAXCC_BRIDGE_UNLIKELY(x) __builtin_expect(!!(x), 0)
// The per-call path of a generated handler, inlined even at the wrapper's -O1 so the
// FrameSpec's constants fold into it (no loops over a descriptor at run time).
#define JAXCC_BRIDGE_HOT_INLINE inline __attribute__((always_inline))
#else
#define JAXCC_BRIDGE_COLD
#define JAXCC_BRIDGE_UNLIKELY(x) (x)
#define JAXCC_BRIDGE_HOT_INLINE inline
#endif

/// Throws the error a buffer conversion reports for a buffer it cannot view: DTypeError for an
/// element type Tensor cannot describe (checked first), else CheckError for a rank above
/// kMaxDim. `name`, when given, names the parameter. Out of line and cold.
[[noreturn]] JAXCC_BRIDGE_COLD inline void ThrowBufferErrorCode(int type, std::size_t rank,
                                                                const char* name) {
  const std::string what = name ? "parameter '" + std::string(name) + "'" : std::string("a buffer");
  if (DTypeFromXlaCode(type) == DType::Invalid) {
    throw DTypeError(what + " has element type " + XlaTypeNameOfCode(type) +
                     ", which jaxcc kernels cannot receive; supported: float16, bfloat16, "
                     "float32, float64, bool, int8..int64, uint8..uint64, complex64, complex128. "
                     "Cast the array (e.g. x.astype(jnp.float32)) before the call");
  }
  throw CheckError(what + " has rank " + std::to_string(rank) +
                   ", above the jaxcc::Tensor limit of " + std::to_string(kMaxDim) +
                   " dimensions (jaxcc::kMaxDim); reshape it to at most " +
                   std::to_string(kMaxDim) + " dimensions before the call");
}

/// An exception turned into an XLA error: absl/XLA status code number and message.
struct ExceptionReport {
  int code;
  std::string message;
};

/// Classifies the exception being handled; the message starts with "<function_name>: ". Call it
/// only inside `catch (...)`:
///   jaxcc::CheckError, jaxcc::DTypeError, std::invalid_argument, std::out_of_range,
///   std::domain_error                       → 3 INVALID_ARGUMENT (the caller's inputs are wrong)
///   std::bad_alloc, jaxcc::ScratchError     → 8 RESOURCE_EXHAUSTED
///   jaxcc::CudaError, any other std::exception → 13 INTERNAL
///   anything else                           → 2 UNKNOWN ("non-standard C++ exception")
/// Never throws: outside a handler it reports 13 INTERNAL.
inline ExceptionReport ReportCurrentException(const char* function_name) noexcept {
  constexpr int kInvalidArgument = 3, kResourceExhausted = 8, kInternal = 13, kUnknown = 2;
  try {
    const std::string prefix = std::string(function_name ? function_name : "jaxcc kernel") + ": ";
    if (!std::current_exception()) {
      return {kInternal,
              prefix + "ErrorFromCurrentException called with no exception being handled"};
    }
    try {
      throw;
    } catch (const CheckError& e) {
      return {kInvalidArgument, prefix + e.what()};
    } catch (const DTypeError& e) {
      return {kInvalidArgument, prefix + e.what()};
    } catch (const std::invalid_argument& e) {
      return {kInvalidArgument, prefix + e.what()};
    } catch (const std::out_of_range& e) {
      return {kInvalidArgument, prefix + e.what()};
    } catch (const std::domain_error& e) {
      return {kInvalidArgument, prefix + e.what()};
    } catch (const std::bad_alloc& e) {
      return {kResourceExhausted, prefix + "out of host memory (" + e.what() + ")"};
    } catch (const ScratchError& e) {
      return {kResourceExhausted, prefix + e.what()};
    } catch (const std::exception& e) {
      // jaxcc::CudaError and everything else: a failure of the kernel, not of its inputs.
      return {kInternal, prefix + e.what()};
    } catch (...) {
      return {kUnknown, prefix + "non-standard C++ exception"};
    }
  } catch (...) {
    // Building the message itself failed (out of memory): a short literal fits the string's
    // small buffer, so this return allocates nothing.
    return {kResourceExhausted, "out of memory"};
  }
}

}  // namespace jaxcc::detail
