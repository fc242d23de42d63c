// XLA FFI ↔ jaxcc glue on XLA's typed C++ API (xla/ffi/api/ffi.h): buffers → Tensor, exceptions
// → ffi::Error. For hand-written handlers; generated modules use the C API (ffi_frame.h), which
// compiles in a fraction of the time, and both share ffi_common.h so their messages agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "jaxcc/check.h"
#include "jaxcc/detail/ffi_common.h"
#include "jaxcc/dtype.h"
#include "jaxcc/tensor.h"
#include "xla/ffi/api/ffi.h"

namespace jaxcc::detail {

/// The DType of an XLA element type; DType::Invalid for the types Tensor cannot describe
/// (float8/float4 variants, sub-byte integers, TOKEN, ...).
inline DType DTypeFromXla(xla::ffi::DataType type) noexcept {
  return DTypeFromXlaCode(static_cast<int>(type));
}

/// The JAX name of an XLA element type Tensor cannot describe. Matched by number (XLA's
/// PrimitiveType values are stable) because older ffi.h versions lack some enumerators.
inline std::string XlaTypeName(xla::ffi::DataType type) {
  return XlaTypeNameOfCode(static_cast<int>(type));
}

/// Throws the error TensorFromBuffer reports for a buffer it cannot view (ffi_common.h).
[[noreturn]] inline void ThrowBufferError(xla::ffi::DataType type, std::size_t rank,
                                          const char* name) {
  ThrowBufferErrorCode(static_cast<int>(type), rank, name);
}

/// Views an XLA buffer as a Tensor (C-contiguous strides). `name`, when given, names the
/// parameter in error messages. Throws DTypeError for an element type Tensor cannot describe and
/// CheckError for a rank above kMaxDim. Runs on every call of a handler, so it only
/// compares: the `name` string is read only when it throws.
inline Tensor TensorFromBuffer(xla::ffi::AnyBuffer buffer, const char* name = nullptr) {
  const DType dtype = DTypeFromXla(buffer.element_type());
  const auto dims = buffer.dimensions();
  if (JAXCC_BRIDGE_UNLIKELY(dtype == DType::Invalid ||
                            dims.size() > static_cast<std::size_t>(kMaxDim))) {
    ThrowBufferError(buffer.element_type(), dims.size(), name);
  }
  Tensor tensor(buffer.untyped_data(), dims.begin(), static_cast<int>(dims.size()), dtype);
  tensor.set_name(name);  // for data_ptr<T>()'s message
  return tensor;
}

/// TensorFromBuffer for an output buffer.
inline Tensor TensorFromResult(xla::ffi::Result<xla::ffi::AnyBuffer>& result,
                               const char* name = nullptr) {
  return TensorFromBuffer(*result, name);
}

/// Converts the exception being handled into an ffi::Error whose message starts with
/// "<function_name>: " (classification: ReportCurrentException in ffi_common.h). Call it only
/// inside `catch (...)`. Never throws and never terminates.
inline xla::ffi::Error ErrorFromCurrentException(const char* function_name) noexcept {
  ExceptionReport report = ReportCurrentException(function_name);
  return xla::ffi::Error(static_cast<xla::ffi::ErrorCode>(report.code), std::move(report.message));
}

}  // namespace jaxcc::detail
