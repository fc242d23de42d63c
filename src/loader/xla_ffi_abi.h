// The few leading fields of XLA's FFI C structs (xla/ffi/api/c_api.h) that the lazy handler stubs
// read and write, declared here because _core is built without XLA's headers (they come with
// jaxlib, which a build of jaxcc does not install). The C API is a stable ABI: each struct opens
// with its size and only ever grows at the end, so these prefixes hold for every API version that
// has them; the stubs check each struct's size before touching a field. src/loader's tests compare
// every offset with XLA's own header wherever jax is installed (xla_ffi_abi_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>

namespace jaxcc::loader::xla_abi {

struct Error;  // XLA_FFI_Error: opaque

struct ExtensionBase {  // XLA_FFI_Extension_Base
  std::size_t struct_size;
  int type;  // XLA_FFI_Extension_Type
  ExtensionBase* next;
};
constexpr int kExtensionMetadata = 1;  // XLA_FFI_Extension_Metadata

struct ApiVersion {  // XLA_FFI_Api_Version
  std::size_t struct_size;
  ExtensionBase* extension_start;
  int major_version;
  int minor_version;
};

struct ErrorCreateArgs {  // XLA_FFI_Error_Create_Args
  std::size_t struct_size;
  ExtensionBase* extension_start;
  const char* message;
  int errc;  // XLA_FFI_Error_Code
};
constexpr int kErrorFailedPrecondition = 9;  // XLA_FFI_Error_Code_FAILED_PRECONDITION

struct Api {  // XLA_FFI_Api, up to XLA_FFI_Error_Create
  std::size_t struct_size;
  ExtensionBase* extension_start;
  ApiVersion api_version;
  const void* internal_api;
  Error* (*error_create)(ErrorCreateArgs* args);
};

struct CallFrame {  // XLA_FFI_CallFrame, up to the stage
  std::size_t struct_size;
  ExtensionBase* extension_start;
  const Api* api;
  void* ctx;
  int stage;  // XLA_FFI_ExecutionStage
};

struct Metadata {  // XLA_FFI_Metadata
  std::size_t struct_size;
  ApiVersion api_version;
  std::uint32_t traits;     // XLA_FFI_Handler_Traits
  std::int64_t state_type;  // XLA_FFI_TypeId (0: XLA_FFI_UNKNOWN_TYPE_ID); newer than traits
};

struct MetadataExtension {  // XLA_FFI_Metadata_Extension
  ExtensionBase extension_base;
  Metadata* metadata;
};

using Handler = Error*(CallFrame* frame);  // XLA_FFI_Handler

/// The size a struct has up to and including `field`: what XLA's *_STRUCT_SIZE constants say.
#define JAXCC_XLA_ABI_SIZE_TO(type, field) (offsetof(type, field) + sizeof(type::field))

}  // namespace jaxcc::loader::xla_abi
