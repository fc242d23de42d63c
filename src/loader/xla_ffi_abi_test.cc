// xla_ffi_abi.h against XLA's own header, wherever the build found jax (JAXCC_TEST_XLA_INCLUDE):
// every mirrored field at XLA's offset, every mirrored struct size at least XLA's.
#include "loader/xla_ffi_abi.h"

#include <gtest/gtest.h>

#if __has_include("xla/ffi/api/c_api.h")
#include "xla/ffi/api/c_api.h"
#define JAXCC_HAVE_XLA_C_API 1
#endif

namespace jaxcc::loader::xla_abi {
namespace {

#ifdef JAXCC_HAVE_XLA_C_API
#define JAXCC_SAME_FIELD(mirror, xla, field) \
  static_assert(offsetof(mirror, field) == offsetof(xla, field), #xla "." #field)

JAXCC_SAME_FIELD(ExtensionBase, XLA_FFI_Extension_Base, struct_size);
JAXCC_SAME_FIELD(ExtensionBase, XLA_FFI_Extension_Base, type);
JAXCC_SAME_FIELD(ExtensionBase, XLA_FFI_Extension_Base, next);
JAXCC_SAME_FIELD(ApiVersion, XLA_FFI_Api_Version, major_version);
JAXCC_SAME_FIELD(ApiVersion, XLA_FFI_Api_Version, minor_version);
JAXCC_SAME_FIELD(ErrorCreateArgs, XLA_FFI_Error_Create_Args, message);
JAXCC_SAME_FIELD(ErrorCreateArgs, XLA_FFI_Error_Create_Args, errc);
JAXCC_SAME_FIELD(Api, XLA_FFI_Api, api_version);
JAXCC_SAME_FIELD(Api, XLA_FFI_Api, internal_api);
static_assert(offsetof(Api, error_create) == offsetof(XLA_FFI_Api, XLA_FFI_Error_Create));
JAXCC_SAME_FIELD(CallFrame, XLA_FFI_CallFrame, extension_start);
JAXCC_SAME_FIELD(CallFrame, XLA_FFI_CallFrame, api);
JAXCC_SAME_FIELD(CallFrame, XLA_FFI_CallFrame, ctx);
JAXCC_SAME_FIELD(CallFrame, XLA_FFI_CallFrame, stage);
JAXCC_SAME_FIELD(Metadata, XLA_FFI_Metadata, api_version);
JAXCC_SAME_FIELD(Metadata, XLA_FFI_Metadata, traits);
static_assert(offsetof(Metadata, state_type) == offsetof(XLA_FFI_Metadata, state_type_id));
JAXCC_SAME_FIELD(MetadataExtension, XLA_FFI_Metadata_Extension, extension_base);
JAXCC_SAME_FIELD(MetadataExtension, XLA_FFI_Metadata_Extension, metadata);
static_assert(sizeof(ExtensionBase::type) == sizeof(XLA_FFI_Extension_Type));
static_assert(sizeof(ErrorCreateArgs::errc) == sizeof(XLA_FFI_Error_Code));
static_assert(sizeof(Metadata::traits) == sizeof(XLA_FFI_Handler_Traits));
static_assert(sizeof(Metadata::state_type) == sizeof(XLA_FFI_TypeId));
static_assert(kExtensionMetadata == XLA_FFI_Extension_Metadata);
static_assert(kErrorFailedPrecondition == XLA_FFI_Error_Code_FAILED_PRECONDITION);
static_assert(JAXCC_XLA_ABI_SIZE_TO(ApiVersion, minor_version) == XLA_FFI_Api_Version_STRUCT_SIZE);
static_assert(JAXCC_XLA_ABI_SIZE_TO(ErrorCreateArgs, errc) ==
              XLA_FFI_Error_Create_Args_STRUCT_SIZE);
static_assert(JAXCC_XLA_ABI_SIZE_TO(Metadata, traits) == XLA_FFI_Metadata_STRUCT_SIZE);
static_assert(JAXCC_XLA_ABI_SIZE_TO(MetadataExtension, metadata) ==
              XLA_FFI_Metadata_Extension_STRUCT_SIZE);
#endif

TEST(XlaFfiAbi, MirrorsXlasHeaderWhereJaxIsInstalled) {
#ifndef JAXCC_HAVE_XLA_C_API
  GTEST_SKIP() << "jax.ffi.include_dir() was not found when this test was built";
#endif
  // The static_asserts above are the test; this records that they were compiled.
  SUCCEED();
}

}  // namespace
}  // namespace jaxcc::loader::xla_abi
