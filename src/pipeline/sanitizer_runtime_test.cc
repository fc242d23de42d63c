#include "pipeline/sanitizer_runtime.h"

#include <gtest/gtest.h>

namespace jaxcc::pipeline {
namespace {

LoadRequest Request(std::vector<std::string> cflags, std::vector<std::string> ldflags = {}) {
  LoadRequest request;
  request.name = "sanitized";
  request.platform = "cpu";
  request.extra_cflags = std::move(cflags);
  request.extra_ldflags = std::move(ldflags);
  return request;
}

const toolchain::HostCompiler kGcc{
    {"/usr/bin/g++"}, "/usr/bin/g++", "g++ (Debian 12.2.0-14) 12.2.0"};
const toolchain::HostCompiler kClang{
    {"/usr/bin/clang++"}, "/usr/bin/clang++", "Debian clang version 14.0.6"};

// Lines as /proc/self/maps prints them.
constexpr const char* kMapsWithGccRuntime =
    "7f0000000000-7f0000001000 r-xp 00000000 08:01 42 /usr/lib/x86_64-linux-gnu/libasan.so.8.0.0\n";
constexpr const char* kMapsWithClangRuntime =
    "7f0000000000-7f0000001000 r-xp 00000000 08:01 43 "
    "/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.asan-x86_64.so\n";
constexpr const char* kMapsWithoutRuntime =
    "7f0000000000-7f0000001000 r-xp 00000000 08:01 44 /usr/lib/x86_64-linux-gnu/libc.so.6\n";

TEST(SanitizerRuntime, AddressSanitizerIsReadFromEitherFlagList) {
  EXPECT_TRUE(AsksForAddressSanitizer(Request({"-fsanitize=address,undefined"})));
  EXPECT_TRUE(AsksForAddressSanitizer(Request({"-fsanitize=undefined,address"})));
  EXPECT_TRUE(AsksForAddressSanitizer(Request({}, {"-fsanitize=address"})));
  EXPECT_FALSE(AsksForAddressSanitizer(Request({"-fsanitize=undefined"})));
  EXPECT_FALSE(AsksForAddressSanitizer(Request({"-fsanitize=addressx", "-O2"})));
  EXPECT_FALSE(AsksForAddressSanitizer(Request({"-fsanitize-address-use-after-scope"})));
}

TEST(SanitizerRuntime, ClangLinksTheSharedRuntimeGccNeedsNothing) {
  const LoadRequest sanitized = Request({"-fsanitize=address,undefined"});
  EXPECT_EQ(SanitizerLinkFlags(sanitized, kClang), std::vector<std::string>{"-shared-libsan"});
  EXPECT_TRUE(SanitizerLinkFlags(sanitized, kGcc).empty());
  EXPECT_EQ(SanitizerLinkFlags(Request({"-fsanitize=undefined"}), kClang),
            std::vector<std::string>{"-shared-libsan"});
  EXPECT_TRUE(SanitizerLinkFlags(Request({"-O2"}), kClang).empty());
  // The user's own choice of runtime stands.
  EXPECT_TRUE(
      SanitizerLinkFlags(Request({"-fsanitize=address"}, {"-static-libsan"}), kClang).empty());
  EXPECT_TRUE(
      SanitizerLinkFlags(Request({"-fsanitize=address", "-shared-libsan"}), kClang).empty());
}

TEST(SanitizerRuntime, ALoadWithoutAnyRuntimeIsRefusedWithTheCommand) {
  const LoadRequest sanitized = Request({"-fsanitize=address,undefined"});
  Status refused = CheckAddressSanitizerRuntime(sanitized, kMapsWithoutRuntime, kGcc);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kLoad);
  EXPECT_NE(refused.error().message.find("module 'sanitized'"), std::string::npos);
  EXPECT_NE(refused.error().message.find(
                "LD_PRELOAD=\"$(/usr/bin/g++ -print-file-name=libasan.so) $(/usr/bin/g++ "
                "-print-file-name=libstdc++.so)\""),
            std::string::npos)
      << refused.error().message;
  refused = CheckAddressSanitizerRuntime(sanitized, kMapsWithoutRuntime, kClang);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("/usr/bin/clang++ -print-file-name=libclang_rt.asan-"),
            std::string::npos)
      << refused.error().message;
}

TEST(SanitizerRuntime, TheCompilersOwnRuntimeLoadsTheOtherIsRefused) {
  const LoadRequest sanitized = Request({"-fsanitize=address,undefined"});
  EXPECT_TRUE(CheckAddressSanitizerRuntime(sanitized, kMapsWithGccRuntime, kGcc).ok());
  EXPECT_TRUE(CheckAddressSanitizerRuntime(sanitized, kMapsWithClangRuntime, kClang).ok());
  Status mixed = CheckAddressSanitizerRuntime(sanitized, kMapsWithGccRuntime, kClang);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().message.find("preloaded GCC's libasan"), std::string::npos);
  EXPECT_NE(mixed.error().message.find("libclang_rt.asan-"), std::string::npos);
  mixed = CheckAddressSanitizerRuntime(sanitized, kMapsWithClangRuntime, kGcc);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().message.find("preloaded Clang's libclang_rt.asan"), std::string::npos);
}

TEST(SanitizerRuntime, OtherLoadsAreNotChecked) {
  EXPECT_TRUE(CheckAddressSanitizerRuntime(Request({"-O2"}), kMapsWithoutRuntime, kGcc).ok());
  EXPECT_TRUE(
      CheckAddressSanitizerRuntime(Request({"-fsanitize=undefined"}), kMapsWithoutRuntime, kGcc)
          .ok());
  LoadRequest cuda = Request({"-fsanitize=address"});
  cuda.platform = "cuda";
  EXPECT_TRUE(CheckAddressSanitizerRuntime(cuda, kMapsWithoutRuntime, kGcc).ok());
}

}  // namespace
}  // namespace jaxcc::pipeline
