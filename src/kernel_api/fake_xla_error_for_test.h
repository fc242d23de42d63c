// The decoder tests' fake XLA_FFI_Api creates errors of this type. XLA_FFI_Error is opaque in
// c_api.h, so the fake owns its definition: one for the whole kernel_api_tests binary, since the
// test files are linked together and each defining its own would be one class defined N times.
#pragma once

#include <string>

#include "xla/ffi/api/c_api.h"

struct XLA_FFI_Error {
  int code;
  std::string message;
};

namespace jaxcc::detail::fake_xla {

/// XLA_FFI_Api::XLA_FFI_Error_Create of the fake: the code and message, kept for the test to read.
inline XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  return new XLA_FFI_Error{static_cast<int>(args->errc), args->message};
}

}  // namespace jaxcc::detail::fake_xla
