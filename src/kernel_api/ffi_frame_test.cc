// jaxcc/detail/ffi_frame.h, the C-API call-frame decoder every generated handler calls, against a
// fake XLA_FFI_Api (only Error_Create and Stream_Get) and hand-built call frames: the checks XLA's
// typed binding made, metadata, sorted attributes, the stream, and errors identical to
// ffi_bridge.h's.
#include <gtest/gtest.h>

#if __has_include("xla/ffi/api/c_api.h")

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "jaxcc/detail/ffi_frame.h"
#include "kernel_api/fake_xla_error_for_test.h"

namespace jaxcc::detail {
namespace {

XLA_FFI_Error* FakeStreamGet(XLA_FFI_Stream_Get_Args* args) {
  args->stream = reinterpret_cast<void*>(0x5eed);
  return nullptr;
}

struct FakeCall {
  XLA_FFI_Api api{};
  std::vector<std::int64_t> dims = {2, 3};
  float data[6] = {};
  float out[6] = {};
  XLA_FFI_Buffer in_buffer{};
  XLA_FFI_Buffer out_buffer{};
  std::vector<XLA_FFI_ArgType> arg_types = {XLA_FFI_ArgType_BUFFER};
  std::vector<void*> args;
  std::vector<XLA_FFI_RetType> ret_types = {XLA_FFI_RetType_BUFFER};
  std::vector<void*> rets;
  // Attributes as XLA passes them: sorted by name ("alpha" < "count").
  float alpha = 1.5f;
  std::uint64_t count = 7;
  XLA_FFI_Scalar alpha_scalar{XLA_FFI_DataType_F32, &alpha};
  XLA_FFI_Scalar count_scalar{XLA_FFI_DataType_U64, &count};
  XLA_FFI_ByteSpan alpha_name{"alpha", 5};
  XLA_FFI_ByteSpan count_name{"count", 5};
  std::vector<XLA_FFI_AttrType> attr_types = {XLA_FFI_AttrType_SCALAR, XLA_FFI_AttrType_SCALAR};
  std::vector<XLA_FFI_ByteSpan*> attr_names = {&alpha_name, &count_name};
  std::vector<void*> attrs = {&alpha_scalar, &count_scalar};
  XLA_FFI_CallFrame frame{};

  FakeCall() {
    api.XLA_FFI_Error_Create = fake_xla::ErrorCreate;
    api.XLA_FFI_Stream_Get = FakeStreamGet;
    for (XLA_FFI_Buffer* b : {&in_buffer, &out_buffer}) {
      b->struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
      b->dtype = XLA_FFI_DataType_F32;
      b->rank = 2;
      b->dims = dims.data();
    }
    in_buffer.data = data;
    out_buffer.data = out;
    args = {&in_buffer};
    rets = {&out_buffer};
    frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
    frame.api = &api;
    frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
    frame.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, 1, arg_types.data(), args.data()};
    frame.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, 1, ret_types.data(), rets.data()};
    frame.attrs = {XLA_FFI_Attrs_STRUCT_SIZE, nullptr,           2,
                   attr_types.data(),         attr_names.data(), attrs.data()};
  }
};

// The user's order: count before alpha; XLA's sorted order puts alpha first.
constexpr const char* kArgNames[] = {"x"};
constexpr const char* kRetNames[] = {"y"};
constexpr FrameAttr kAttrs[] = {{"count", FrameScalar::kU64, 1}, {"alpha", FrameScalar::kF32, 0}};
constexpr FrameSpec kSpec = {"scale", 1, 1, 2, kArgNames, kRetNames, kAttrs, false, 0};

std::unique_ptr<XLA_FFI_Error> Decode(FakeCall& call, const FrameSpec& spec, bool* ran = nullptr,
                                      void (*body)(const FrameView&) = nullptr) {
  static void (*current)(const FrameView&);
  static bool* current_ran;
  current = body;
  current_ran = ran;
  FrameRoom<1, 1, 2> room;
  return std::unique_ptr<XLA_FFI_Error>(RunFrameWith<NoCallScope>(
      &call.frame, spec,
      [](const FrameView& decoded) {
        if (current_ran) *current_ran = true;
        if (current) current(decoded);
      },
      nullptr, room.slots()));
}

TEST(FfiFrameTest, DecodesBuffersAndAttributesInTheUsersOrder) {
  FakeCall call;
  static Tensor arg, ret;
  static std::uint64_t count;
  static float alpha;
  static void* stream = reinterpret_cast<void*>(1);
  bool ran = false;
  auto error = Decode(call, kSpec, &ran, [](const FrameView& c) {
    arg = c.args[0];
    ret = c.rets[0];
    count = c.attr<std::uint64_t>(0);
    alpha = c.attr<float>(1);
    stream = c.stream;
  });
  ASSERT_EQ(error, nullptr) << error->message;
  EXPECT_TRUE(ran);
  EXPECT_EQ(arg.data_ptr(), call.data);
  EXPECT_EQ(ret.data_ptr(), call.out);
  EXPECT_EQ(arg.ndim(), 2);
  EXPECT_EQ(arg.size(1), 3);
  EXPECT_EQ(count, 7u);
  EXPECT_EQ(alpha, 1.5f);
  EXPECT_EQ(stream, nullptr);
}

TEST(FfiFrameTest, DecodesTheStreamWhenAsked) {
  FakeCall call;
  FrameSpec spec = kSpec;
  spec.stream = true;
  static void* stream;
  auto error = Decode(call, spec, nullptr, [](const FrameView& c) { stream = c.stream; });
  ASSERT_EQ(error, nullptr);
  EXPECT_EQ(stream, reinterpret_cast<void*>(0x5eed));
}

TEST(FfiFrameTest, AnswersTheMetadataQueryWithoutRunning) {
  FakeCall call;
  XLA_FFI_Metadata metadata{};
  metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension extension{};
  extension.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  extension.extension_base.type = XLA_FFI_Extension_Metadata;
  extension.metadata = &metadata;
  call.frame.extension_start = &extension.extension_base;
  FrameSpec spec = kSpec;
  spec.traits = kFrameCommandBufferCompatible;
  bool ran = false;
  ASSERT_EQ(Decode(call, spec, &ran), nullptr);
  EXPECT_FALSE(ran);
  EXPECT_EQ(metadata.api_version.major_version, XLA_FFI_API_MAJOR);
  EXPECT_EQ(metadata.api_version.minor_version, XLA_FFI_API_MINOR);
  EXPECT_EQ(metadata.traits, XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE);
}

TEST(FfiFrameTest, RefusesFramesThatDoNotFitTheSignature) {
  struct Case {
    void (*damage)(FakeCall&);
    const char* message;
  };
  const Case cases[] = {
      {[](FakeCall& c) { c.frame.stage = XLA_FFI_ExecutionStage_PREPARE; },
       "Wrong execution stage: expected `3` but got `1`"},
      {[](FakeCall& c) { c.frame.args.size = 0; },
       "[3] Wrong number of arguments: expected 1 but got 0"},
      {[](FakeCall& c) { c.frame.rets.size = 2; },
       "[3] Wrong number of results: expected 1 but got 2"},
      {[](FakeCall& c) { c.frame.attrs.size = 1; },
       "[3] Wrong number of attributes: expected 2 but got 1 with name(s): alpha"},
      {[](FakeCall& c) {
         c.count_name = {"cound", 5};
       },
       "Attribute name mismatch: cound vs count"},
      {[](FakeCall& c) { c.count_scalar.dtype = XLA_FFI_DataType_S64; },
       "Wrong scalar data type: expected uint64 but got int64 for attribute 'count'"},
      {[](FakeCall& c) { c.attr_types[0] = XLA_FFI_AttrType_ARRAY; },
       "Wrong attribute type: expected scalar for attribute 'alpha'"},
  };
  for (const Case& test : cases) {
    FakeCall call;
    test.damage(call);
    bool ran = false;
    auto error = Decode(call, kSpec, &ran);
    ASSERT_NE(error, nullptr) << test.message;
    EXPECT_FALSE(ran);
    EXPECT_EQ(error->code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
    EXPECT_EQ(error->message, test.message);
  }
}

TEST(FfiFrameTest, BufferErrorsMatchTensorFromBuffer) {
  FakeCall call;
  call.in_buffer.dtype = XLA_FFI_DataType_F8E4M3FN;
  bool ran = false;
  auto error = Decode(call, kSpec, &ran);
  ASSERT_NE(error, nullptr);
  EXPECT_FALSE(ran);
  EXPECT_EQ(error->code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error->message,
            "scale: parameter 'x' has element type float8_e4m3fn, which jaxcc kernels cannot "
            "receive; supported: float16, bfloat16, float32, float64, bool, int8..int64, "
            "uint8..uint64, complex64, complex128. Cast the array (e.g. x.astype(jnp.float32)) "
            "before the call");

  FakeCall deep;
  std::vector<std::int64_t> dims(kMaxDim + 1, 1);
  deep.out_buffer.rank = kMaxDim + 1;
  deep.out_buffer.dims = dims.data();
  error = Decode(deep, kSpec);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(
      error->message.rfind("scale: parameter 'y' has rank 9, above the jaxcc::Tensor limit", 0), 0u)
      << error->message;
}

TEST(FfiFrameTest, DeclaredDTypesAreCheckedBeforeTheFunctionRuns) {
  // issue 49 item 12: `arg:float32` given int32 through a raw ffi_call reinterpreted the bits.
  constexpr FrameElement kDeclared[] = {FrameElement::kF32, FrameElement::kAny};
  FrameSpec spec = kSpec;
  spec.dtypes = kDeclared;
  FakeCall call;
  bool ran = false;
  ASSERT_EQ(Decode(call, spec, &ran), nullptr);  // float32 as declared; the result is any dtype
  EXPECT_TRUE(ran);
  call.out_buffer.dtype = XLA_FFI_DataType_S8;
  ASSERT_EQ(Decode(call, spec), nullptr);

  call.in_buffer.dtype = XLA_FFI_DataType_S32;
  ran = false;
  auto error = Decode(call, spec, &ran);
  ASSERT_NE(error, nullptr);
  EXPECT_FALSE(ran);
  EXPECT_EQ(error->code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error->message,
            "scale: parameter 'x' is int32, but the arg_spec declares `arg:float32`; cast it "
            "before the call (x.astype(jnp.float32)), or change the spec (`arg:int32`, or a "
            "bare `arg` for any dtype)");
  // A type Tensor cannot describe is named too, before the decoder's own refusal of it.
  call.in_buffer.dtype = XLA_FFI_DataType_F8E4M3FN;
  error = Decode(call, spec);
  ASSERT_NE(error, nullptr);
  EXPECT_NE(error->message.find("'x' is float8_e4m3fn, but the arg_spec declares `arg:float32`"),
            std::string::npos)
      << error->message;
}

TEST(FfiFrameTest, DeclaredResultDTypesAreCheckedAndWideTypesNameX64) {
  constexpr FrameElement kDeclared[] = {FrameElement::kAny, FrameElement::kF64};
  FrameSpec spec = kSpec;
  spec.dtypes = kDeclared;
  FakeCall call;
  bool ran = false;
  auto error = Decode(call, spec, &ran);
  ASSERT_NE(error, nullptr);
  EXPECT_FALSE(ran);
  EXPECT_EQ(error->code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error->message,
            "scale: result 'y' is float32, but the arg_spec declares `ret:float64`; ask for a "
            "result of dtype float64 (outs=, or the result type of jax.ffi.ffi_call), or change "
            "the spec (`ret:float32`, or a bare `ret` for any dtype). JAX makes every float64 "
            "array 32-bit unless 64-bit types are on: jax.config.update('jax_enable_x64', "
            "True) (or JAX_ENABLE_X64=1)");
  call.out_buffer.dtype = XLA_FFI_DataType_F64;
  EXPECT_EQ(Decode(call, spec), nullptr);
}

TEST(FfiFrameTest, KernelExceptionsAreClassifiedLikeTheTypedBridge) {
  FakeCall call;
  auto error = Decode(call, kSpec, nullptr, [](const FrameView&) { throw CheckError("n < 0"); });
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error->message, "scale: n < 0");
  error = Decode(call, kSpec, nullptr, [](const FrameView&) { throw std::runtime_error("boom"); });
  EXPECT_EQ(error->code, XLA_FFI_Error_Code_INTERNAL);
  EXPECT_EQ(error->message, "scale: boom");
  error = Decode(call, kSpec, nullptr, [](const FrameView&) { throw 42; });
  EXPECT_EQ(error->code, XLA_FFI_Error_Code_UNKNOWN);
  EXPECT_EQ(error->message, "scale: non-standard C++ exception");
}

}  // namespace
}  // namespace jaxcc::detail

#else

TEST(FfiFrameTest, SkippedWithoutXlaFfiHeaders) {
  GTEST_SKIP()
      << "xla/ffi/api/c_api.h not on the include path (jax not installed at configure time)";
}

#endif
