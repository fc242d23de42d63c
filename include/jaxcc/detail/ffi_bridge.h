// XLA FFI ↔ jaxcc glue for generated wrapper units: buffers → Tensor, exceptions → ffi::Error.
//
// Included only by generated ffi_wrapper.cc files (with jax.ffi.include_dir() on the include
// path); user kernels never see XLA. Everything here is host code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "jaxcc/check.h"
#include "jaxcc/dtype.h"
#include "jaxcc/tensor.h"
#include "xla/ffi/api/ffi.h"

namespace jaxcc::detail {

/// The DType of an XLA element type; DType::Invalid for the types Tensor cannot describe
/// (float8/float4 variants, sub-byte integers, TOKEN, ...).
inline DType DTypeFromXla(xla::ffi::DataType type) noexcept {
  using xla::ffi::DataType;
  switch (type) {
    case DataType::F16:
      return DType::Float16;
    case DataType::F32:
      return DType::Float32;
    case DataType::F64:
      return DType::Float64;
    case DataType::BF16:
      return DType::BFloat16;
    case DataType::S8:
      return DType::Int8;
    case DataType::S16:
      return DType::Int16;
    case DataType::S32:
      return DType::Int32;
    case DataType::S64:
      return DType::Int64;
    case DataType::U8:
      return DType::UInt8;
    case DataType::U16:
      return DType::UInt16;
    case DataType::U32:
      return DType::UInt32;
    case DataType::U64:
      return DType::UInt64;
    case DataType::PRED:
      return DType::Bool;
    case DataType::C64:
      return DType::Complex64;
    case DataType::C128:
      return DType::Complex128;
    default:
      return DType::Invalid;
  }
}

/// The JAX name of an XLA element type Tensor cannot describe. Matched by number (XLA's
/// PrimitiveType values are stable) because older ffi.h versions lack some enumerators.
inline std::string XlaTypeName(xla::ffi::DataType type) {
  switch (static_cast<int>(type)) {
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
      DType dtype = DTypeFromXla(type);
      if (dtype != DType::Invalid) return dtype_name(dtype);
      return "XLA element type " + std::to_string(static_cast<int>(type));
    }
  }
}

// GCC/Clang hints that keep the error text off the per-call path: the message is built in an
// out-of-line function that is only entered once a check has failed.
#if defined(__GNUC__) || defined(__clang__)
#define JAXCC_BRIDGE_COLD __attribute__((noinline, cold))
#define JAXCC_BRIDGE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define JAXCC_BRIDGE_COLD
#define JAXCC_BRIDGE_UNLIKELY(x) (x)
#endif

/// Throws the error TensorFromBuffer reports for a buffer it cannot view: DTypeError for an
/// element type Tensor cannot describe (checked first), else CheckError for a rank above
/// kMaxDim. `name`, when given, names the parameter. Out of line and cold: TensorFromBuffer
/// builds no text unless it throws.
[[noreturn]] JAXCC_BRIDGE_COLD inline void ThrowBufferError(xla::ffi::DataType type,
                                                            std::size_t rank, const char* name) {
  const std::string what = name ? "parameter '" + std::string(name) + "'" : std::string("a buffer");
  if (DTypeFromXla(type) == DType::Invalid) {
    throw DTypeError(what + " has element type " + XlaTypeName(type) +
                     ", which jaxcc kernels cannot receive; supported: float16, bfloat16, "
                     "float32, float64, bool, int8..int64, uint8..uint64, complex64, complex128. "
                     "Cast the array (e.g. x.astype(jnp.float32)) before the call");
  }
  throw CheckError(what + " has rank " + std::to_string(rank) +
                   ", above the jaxcc::Tensor limit of " + std::to_string(kMaxDim) +
                   " dimensions (jaxcc::kMaxDim); reshape it to at most " +
                   std::to_string(kMaxDim) + " dimensions before the call");
}

/// Views an XLA buffer as a Tensor (C-contiguous strides). `name`, when given, names the
/// parameter in error messages. Throws DTypeError for an element type Tensor cannot describe and
/// CheckError for a rank above kMaxDim. Runs on every call of a generated handler, so it only
/// compares: the `name` string is read only when it throws.
inline Tensor TensorFromBuffer(xla::ffi::AnyBuffer buffer, const char* name = nullptr) {
  const DType dtype = DTypeFromXla(buffer.element_type());
  const auto dims = buffer.dimensions();
  if (JAXCC_BRIDGE_UNLIKELY(dtype == DType::Invalid ||
                            dims.size() > static_cast<std::size_t>(kMaxDim))) {
    ThrowBufferError(buffer.element_type(), dims.size(), name);
  }
  return Tensor(buffer.untyped_data(), dims.begin(), static_cast<int>(dims.size()), dtype);
}

/// TensorFromBuffer for an output buffer.
inline Tensor TensorFromResult(xla::ffi::Result<xla::ffi::AnyBuffer>& result,
                               const char* name = nullptr) {
  return TensorFromBuffer(*result, name);
}

/// Converts the exception being handled into an ffi::Error whose message starts with
/// "<function_name>: ". Call it only inside `catch (...)`. Classification:
///   jaxcc::CheckError, jaxcc::DTypeError, std::invalid_argument, std::out_of_range,
///   std::domain_error                       → INVALID_ARGUMENT (the caller's inputs are wrong)
///   std::bad_alloc                          → RESOURCE_EXHAUSTED
///   jaxcc::CudaError, any other std::exception → INTERNAL
///   anything else                           → UNKNOWN ("non-standard C++ exception")
/// Never throws and never terminates: outside a handler it returns an INTERNAL error.
inline xla::ffi::Error ErrorFromCurrentException(const char* function_name) noexcept {
  using xla::ffi::Error;
  using xla::ffi::ErrorCode;
  try {
    const std::string prefix = std::string(function_name ? function_name : "jaxcc kernel") + ": ";
    if (!std::current_exception()) {
      return Error(ErrorCode::kInternal,
                   prefix + "ErrorFromCurrentException called with no exception being handled");
    }
    try {
      throw;
    } catch (const CheckError& e) {
      return Error(ErrorCode::kInvalidArgument, prefix + e.what());
    } catch (const DTypeError& e) {
      return Error(ErrorCode::kInvalidArgument, prefix + e.what());
    } catch (const std::invalid_argument& e) {
      return Error(ErrorCode::kInvalidArgument, prefix + e.what());
    } catch (const std::out_of_range& e) {
      return Error(ErrorCode::kInvalidArgument, prefix + e.what());
    } catch (const std::domain_error& e) {
      return Error(ErrorCode::kInvalidArgument, prefix + e.what());
    } catch (const std::bad_alloc& e) {
      return Error(ErrorCode::kResourceExhausted, prefix + "out of host memory (" + e.what() + ")");
    } catch (const std::exception& e) {
      // jaxcc::CudaError and everything else: a failure of the kernel, not of its inputs.
      return Error(ErrorCode::kInternal, prefix + e.what());
    } catch (...) {
      return Error(ErrorCode::kUnknown, prefix + "non-standard C++ exception");
    }
  } catch (...) {
    // Building the message itself failed (out of memory): a short literal fits the string's
    // small buffer, so this return allocates nothing.
    return Error(ErrorCode::kResourceExhausted, "out of memory");
  }
}

}  // namespace jaxcc::detail
