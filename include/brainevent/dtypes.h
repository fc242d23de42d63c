// brainevent compatibility: BE::xla_to_jkb_dtype, the XLA element type → BE::DType mapping of
// brainevent 0.3's dtypes.h.
//
// The one brainevent header that needs XLA's FFI headers (xla/ffi/api/ffi.h): include it only in a
// source that talks to XLA's typed API itself. jaxcc puts that directory on every kernel
// source's include path (after the user's own directories), for g++ and nvcc alike, so a .cu that
// includes this header builds as it did under brainevent; common.h never includes it, so other
// kernels do not pay for XLA's templates.
#pragma once

#include "brainevent/tensor.h"
#include "jaxcc/detail/ffi_bridge.h"

namespace jaxcc {

/// brainevent's name for the mapping: the DType of an XLA element type, DType::Invalid for those
/// a Tensor cannot describe (float8/float4, sub-byte integers, TOKEN). Reached as
/// BE::xla_to_jkb_dtype.
inline DType xla_to_jkb_dtype(xla::ffi::DataType type) noexcept {
  return detail::DTypeFromXla(type);
}

}  // namespace jaxcc
