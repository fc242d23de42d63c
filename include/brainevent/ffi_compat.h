// brainevent compatibility: BE::internal::buffer_to_tensor and result_buffer_to_tensor of
// brainevent 0.3's ffi_compat.h, for sources that write their own typed XLA FFI handlers.
//
// Needs XLA's FFI headers like brainevent/dtypes.h (see there). Differences from brainevent: an
// element type a Tensor cannot describe, or a rank above kMaxDim, throws BE::DTypeError /
// BE::CheckError (brainevent: std::invalid_argument / std::out_of_range); both derive from
// std::exception, so a handler's `catch (const std::exception&)` still catches them.
#pragma once

#include "brainevent/dtypes.h"
#include "brainevent/tensor.h"
#include "jaxcc/detail/ffi_bridge.h"

namespace jaxcc::internal {

/// A Tensor viewing an XLA input buffer (C-contiguous strides).
inline Tensor buffer_to_tensor(xla::ffi::AnyBuffer buffer) {
  return detail::TensorFromBuffer(buffer);
}

/// A Tensor viewing an XLA output buffer.
inline Tensor result_buffer_to_tensor(xla::ffi::Result<xla::ffi::AnyBuffer> result) {
  return detail::TensorFromResult(result);
}

}  // namespace jaxcc::internal
