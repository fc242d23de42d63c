// What both XLA FFI glue headers share, without any XLA header: element-type codes → DType, the
// errors of a buffer a kernel cannot receive, and the classification of a kernel's exception.
//
// XLA's element-type numbers (PrimitiveType) and error codes (absl::StatusCode) are stable, so
// they are matched by number here; ffi_bridge.h (typed XLA FFI API) and ffi_frame.h (C API) both
// build on this header, so the two give identical messages.
#pragma once

#include <cstddef>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "jaxcc/check.h"
#include "jaxcc/detail/frame_text.h"
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

/// The JAX name of an XLA element type number, including those Tensor cannot describe; nullptr
/// for a number that has no name.
inline const char* XlaTypeNameOrNull(int type) noexcept {
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
      return dtype != DType::Invalid ? dtype_name(dtype) : nullptr;
    }
  }
}

/// Room for any type's name: "XLA element type " and an int.
using XlaTypeNameRoom = char[40];

/// The type's JAX name, or "XLA element type <number>" (written into `room`) for a number
/// without one.
inline const char* XlaTypeName(int type, XlaTypeNameRoom& room) noexcept {
  if (const char* name = XlaTypeNameOrNull(type)) return name;
  std::snprintf(room, sizeof(room), "XLA element type %d", type);
  return room;
}

/// XlaTypeName's text as a std::string.
inline std::string XlaTypeNameOfCode(int type) {
  XlaTypeNameRoom room;
  return XlaTypeName(type, room);
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
  FrameText what;
  what.AddFormat("%s%s%s", name ? "parameter '" : "", name ? name : "a buffer", name ? "'" : "");
  if (DTypeFromXlaCode(type) == DType::Invalid) {
    XlaTypeNameRoom room;
    what.AddFormat(
        " has element type %s, which jaxcc kernels cannot receive; supported: float16, "
        "bfloat16, float32, float64, bool, int8..int64, uint8..uint64, complex64, "
        "complex128. Cast the array (e.g. x.astype(jnp.float32)) before the call",
        XlaTypeName(type, room));
    if (!what.ok()) throw std::bad_alloc();
    throw DTypeError(what.c_str());
  }
  what.AddFormat(
      " has rank %llu, above the jaxcc::Tensor limit of %d dimensions (jaxcc::kMaxDim); "
      "reshape it to at most %d dimensions before the call",
      static_cast<unsigned long long>(rank), kMaxDim, kMaxDim);
  if (!what.ok()) throw std::bad_alloc();
  throw CheckError(what.c_str());
}

/// Classifies the exception being handled into `text` and returns its absl/XLA status code
/// number; the message starts with "<function_name>: ". Call it only inside `catch (...)`:
///   jaxcc::CheckError, jaxcc::DTypeError, std::invalid_argument, std::out_of_range,
///   std::domain_error                       → 3 INVALID_ARGUMENT (the caller's inputs are wrong)
///   std::bad_alloc, jaxcc::ScratchError     → 8 RESOURCE_EXHAUSTED
///   jaxcc::CudaError, any other std::exception → 13 INTERNAL
///   anything else                           → 2 UNKNOWN ("non-standard C++ exception")
/// Never throws: outside a handler it reports 13 INTERNAL; when the message finds no memory it
/// is "out of memory" (8), which fits FrameText's own buffer.
JAXCC_BRIDGE_COLD inline int ReportCurrentExceptionTo(const char* function_name,
                                                      FrameText* text) noexcept {
  constexpr int kInvalidArgument = 3, kResourceExhausted = 8, kInternal = 13, kUnknown = 2;
  FrameText& out = text->Add(function_name ? function_name : "jaxcc kernel").Add(": ");
  int code = kInternal;
  if (!std::current_exception()) {
    out.Add("ErrorFromCurrentException called with no exception being handled");
  } else {
    try {
      throw;
    } catch (const CheckError& e) {
      code = kInvalidArgument;
      out.Add(e.what());
    } catch (const DTypeError& e) {
      code = kInvalidArgument;
      out.Add(e.what());
    } catch (const std::invalid_argument& e) {
      code = kInvalidArgument;
      out.Add(e.what());
    } catch (const std::out_of_range& e) {
      code = kInvalidArgument;
      out.Add(e.what());
    } catch (const std::domain_error& e) {
      code = kInvalidArgument;
      out.Add(e.what());
    } catch (const std::bad_alloc& e) {
      code = kResourceExhausted;
      out.Add("out of host memory (").Add(e.what()).Add(")");
    } catch (const ScratchError& e) {
      code = kResourceExhausted;
      out.Add(e.what());
    } catch (const std::exception& e) {
      // jaxcc::CudaError and everything else: a failure of the kernel, not of its inputs.
      code = kInternal;
      out.Add(e.what());
    } catch (...) {
      code = kUnknown;
      out.Add("non-standard C++ exception");
    }
  }
  if (out.ok()) return code;
  text->Clear().Add("out of memory");
  return kResourceExhausted;
}

/// An exception turned into an XLA error: absl/XLA status code number and message.
struct ExceptionReport {
  int code;
  std::string message;
};

/// ReportCurrentExceptionTo's code and message, for code that wants a std::string (the typed
/// API's ffi_bridge.h). Never throws.
inline ExceptionReport ReportCurrentException(const char* function_name) noexcept {
  FrameText text;
  const int code = ReportCurrentExceptionTo(function_name, &text);
  try {
    return {code, text.c_str()};
  } catch (...) {
    // A short literal fits the string's small buffer, so this return allocates nothing.
    return {8, "out of memory"};
  }
}

}  // namespace jaxcc::detail
