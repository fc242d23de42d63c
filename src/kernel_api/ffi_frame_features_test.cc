// The frame runtime's feature sets (frame_features.h, decision 161c) and its messages built in
// FrameText: a decoder instantiated without a feature decodes and reports exactly as the full one,
// and a spec that takes a feature its decoder lacks gets an INTERNAL error naming it (never a
// call that goes on without it); long names and messages arrive whole.
#include <gtest/gtest.h>

#if __has_include("xla/ffi/api/c_api.h")

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "jaxcc/detail/ffi_frame.h"
#include "kernel_api/fake_xla_error_for_test.h"
#include "kernel_api/one_buffer_frame_for_test.h"

namespace jaxcc::detail {
namespace {

struct Frame : fake_xla::OneBufferFrame {
  Frame() : OneBufferFrame(fake_xla::Attribute::kNone) {}
};

constexpr const char* kArgNames[] = {"x"};
constexpr const char* kRetNames[] = {"y"};
FrameTypeId g_type = {0};
constexpr FrameTypeInfo kInfo = {sizeof(FrameTypeInfo), nullptr, nullptr};
constexpr FrameStateType kStateType = {&g_type, &kInfo};

constexpr FrameSpec kPlain = {"plain", 1, 1, 0, kArgNames, kRetNames, nullptr, false, 0};
constexpr FrameSpec kPool = {"pooled", 1, 1, 0, kArgNames, kRetNames, nullptr, false, 0, true};
constexpr FrameSpec kState = {"stateful", 1,     1, 0,     kArgNames,  kRetNames,
                              nullptr,    false, 0, false, &kStateType};
constexpr FrameSpec kAsync = {"later", 1,     1, 0,     kArgNames, kRetNames,
                              nullptr, false, 0, false, nullptr,   true};
constexpr FrameSpec kScratch = {
    "scratchy", 1, 1,     0,       kArgNames, kRetNames,          nullptr,
    false,      0, false, nullptr, false,     FrameScratch::kHost};
constexpr FrameSpec kEverything = {
    "everything", 1, 1,    0,           kArgNames, kRetNames,          nullptr,
    false,        0, true, &kStateType, true,      FrameScratch::kHost};

bool g_ran = false;
void Body(const FrameView& call) {
  g_ran = true;
  call.rets[0].data_ptr<float>()[0] = call.args[0].data_ptr<float>()[3];
}

template <unsigned Features>
std::unique_ptr<XLA_FFI_Error> Decode(Frame& f, const FrameSpec& spec, FrameBody body = &Body) {
  g_ran = false;
  FrameRoom<1, 1, 1> room;
  return std::unique_ptr<XLA_FFI_Error>(
      RunFrameWith<NoCallScope, Features>(&f.frame, spec, body, nullptr, room.slots()));
}

const std::string kBug =
    ", which the function takes; the runtime and the function's handler come from the same "
    "build, so this is a jaxcc bug: please report it";

TEST(FrameFeatures, ALeanDecoderRunsAFunctionThatTakesNoFeature) {
  Frame f;
  ASSERT_EQ(Decode<0u>(f, kPlain), nullptr);
  EXPECT_TRUE(g_ran);
  EXPECT_EQ(f.out[0], 4.0f);
}

TEST(FrameFeatures, ASpecTakingWhatTheDecoderLacksIsAnErrorNamingIt) {
  const struct {
    const FrameSpec* spec;
    const char* feature;
  } cases[] = {
      {&kAsync, "asynchronous calls (jaxcc::Async)"},
      {&kState, "per-call-site state (jaxcc::State<T>&)"},
      {&kPool, "XLA's thread pool (jaxcc::ThreadPool&)"},
      {&kScratch, "run-time scratch (jaxcc::ScratchAllocator&)"},
  };
  for (const auto& c : cases) {
    Frame f;
    auto error = Decode<0u>(f, *c.spec);
    ASSERT_NE(error, nullptr) << c.feature;
    EXPECT_EQ(error->code, XLA_FFI_Error_Code_INTERNAL);
    EXPECT_EQ(error->message, std::string(c.spec->function) +
                                  ": this module's frame runtime was generated without " +
                                  c.feature + kBug);
    EXPECT_FALSE(g_ran) << "the function ran without what it takes";
  }
}

TEST(FrameFeatures, OnlyTheLackingFeaturesAreNamed) {
  Frame f;
  auto error = Decode<kFramePool | kFrameState>(f, kEverything);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->message,
            "everything: this module's frame runtime was generated without asynchronous calls "
            "(jaxcc::Async), run-time scratch (jaxcc::ScratchAllocator&)" +
                kBug);
  EXPECT_FALSE(g_ran);
}

TEST(FrameFeatures, TheMetadataQueryOfALackingSpecIsTheSameError) {
  // XLA asks at registration; a lean decoder must not answer a stateful spec's query.
  Frame f;
  XLA_FFI_Metadata metadata{XLA_FFI_Metadata_STRUCT_SIZE, {}, 0, XLA_FFI_UNKNOWN_TYPE_ID};
  XLA_FFI_Metadata_Extension extension{
      {XLA_FFI_Metadata_Extension_STRUCT_SIZE, XLA_FFI_Extension_Metadata, nullptr}, &metadata};
  f.frame.extension_start = &extension.extension_base;
  auto error = Decode<0u>(f, kState);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, XLA_FFI_Error_Code_INTERNAL);
  EXPECT_EQ(g_type.type_id, 0) << "the state type was registered";
}

TEST(FrameFeatures, LeanAndFullDecodersReportAlike) {
  // The same exception, the same bad buffer, the same frame mismatch: one message each.
  FrameBody throwing = [](const FrameView&) { throw std::out_of_range("index 9 of 4"); };
  Frame a, b;
  auto lean = Decode<0u>(a, kPlain, throwing);
  auto full = Decode<kFrameAllFeatures>(b, kPlain, throwing);
  ASSERT_NE(lean, nullptr);
  ASSERT_NE(full, nullptr);
  EXPECT_EQ(lean->code, full->code);
  EXPECT_EQ(lean->message, full->message);
  EXPECT_EQ(lean->message, "plain: index 9 of 4");
  Frame c, d;
  c.in.dtype = d.in.dtype = XLA_FFI_DataType_F8E5M2;
  lean = Decode<0u>(c, kPlain);
  full = Decode<kFrameAllFeatures>(d, kPlain);
  ASSERT_NE(lean, nullptr);
  ASSERT_NE(full, nullptr);
  EXPECT_EQ(lean->message, full->message);
  EXPECT_EQ(lean->message.rfind("plain: parameter 'x' has element type float8_e5m2, which", 0), 0u);
}

TEST(FrameFeatures, LongNamesAndMessagesArriveWhole) {
  // FrameText moves to the heap past its own buffer: nothing the user named is cut short.
  static const std::string long_name = std::string(3000, 'f') + "_end";
  static const std::string long_what = "why: " + std::string(5000, 'w') + "_end";
  FrameSpec spec = kPlain;
  spec.function = long_name.c_str();
  Frame f;
  auto error =
      Decode<0u>(f, spec, [](const FrameView&) { throw std::invalid_argument(long_what); });
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error->message, long_name + ": " + long_what);
  Frame g;
  // Not a buffer: 0 is the one other value the enum can hold (99 would be UB to load, UBSan).
  g.arg_type = static_cast<XLA_FFI_ArgType>(0);
  static const std::string long_arg = std::string(1000, 'a');
  const char* arg_names[] = {long_arg.c_str()};
  spec.arg_names = arg_names;
  error = Decode<0u>(g, spec);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->message, long_name + ": argument '" + long_arg + "' is not a buffer");
}

TEST(FrameText, AppendsFormatsAndGrowsPastItsOwnBuffer) {
  FrameText text;
  EXPECT_STREQ(text.c_str(), "");
  text.Add("a").AddInt(-12).AddUnsigned(18446744073709551615ull).Add("xyz", 2);
  EXPECT_STREQ(text.c_str(), "a-1218446744073709551615xy");
  std::string expected = text.c_str();
  for (int i = 0; i < 200; ++i) {
    text.AddFormat("[%d:%s]", i, "0123456789");
    expected += "[" + std::to_string(i) + ":0123456789]";
  }
  EXPECT_TRUE(text.ok());
  EXPECT_EQ(std::string(text.c_str()), expected);
  EXPECT_EQ(text.size(), expected.size());
  text.Clear().Add("out of memory");
  EXPECT_STREQ(text.c_str(), "out of memory");
}

}  // namespace
}  // namespace jaxcc::detail

#else
TEST(FrameFeatures, SkippedWithoutXlaFfiHeaders) {
  GTEST_SKIP() << "xla/ffi/api/c_api.h not found (jax.ffi.include_dir())";
}
#endif
