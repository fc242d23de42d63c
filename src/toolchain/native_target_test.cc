#include "toolchain/native_target.h"

#include <gtest/gtest.h>

namespace jaxcc::toolchain {
namespace {

TEST(NativeTarget, FindsNativeOptionsAlsoInsideNvccCompilerLists) {
  EXPECT_EQ(NativeTargetFlags({"-O2", "-march=native", "-mtune=native"}),
            (std::vector<std::string>{"-march=native", "-mtune=native"}));
  EXPECT_EQ(NativeTargetFlags({"-Xcompiler=-O3,-march=native"}),
            (std::vector<std::string>{"-march=native"}));
  EXPECT_EQ(NativeTargetFlags({"-mcpu=native", "-mcpu=native"}),
            (std::vector<std::string>{"-mcpu=native"}));
  EXPECT_TRUE(NativeTargetFlags({"-march=x86-64-v3", "-DNATIVE=1"}).empty());
}

TEST(NativeTarget, ReadsGccsCompilerProperLine) {
  const std::string output =
      "Using built-in specs.\n"
      " /usr/lib/gcc/x86_64-linux-gnu/12/cc1plus -E -quiet /dev/null \"-march=znver3\" -mmmx "
      "-mno-avx512f --param \"l1-cache-size=32\" \"-mtune=znver3\" -dumpbase null\n";
  EXPECT_EQ(NativeTargetOfDriverOutput(output),
            "-march=znver3 -mmmx -mno-avx512f --param l1-cache-size=32 -mtune=znver3");
}

TEST(NativeTarget, ReadsClangsCc1Line) {
  const std::string output =
      " \"/usr/lib/llvm-14/bin/clang\" \"-cc1\" \"-triple\" \"x86_64-pc-linux-gnu\" "
      "\"-target-cpu\" \"znver3\" \"-target-feature\" \"+avx2\" \"-target-feature\" "
      "\"-avx512f\" \"-o\" \"-\"\n";
  EXPECT_EQ(NativeTargetOfDriverOutput(output),
            "-target-cpu znver3 -target-feature +avx2 -target-feature -avx512f");
  EXPECT_EQ(NativeTargetOfDriverOutput("no compiler line here\n"), "");
}

TEST(NativeTarget, EnabledFeaturesInCpuinfoSpelling) {
  EXPECT_EQ(EnabledFeatures("-march=znver3 -mavx2 -mno-avx512f -msse4.2 -mlzcnt --param x=1"),
            (std::vector<std::string>{"avx2", "sse4_2", "abm"}));
  EXPECT_EQ(EnabledFeatures("-target-cpu znver3 -target-feature +avx2 -target-feature -fma4"),
            (std::vector<std::string>{"avx2"}));
}

TEST(NativeTarget, ResolvesWithTheRealCompilerToAConcreteTarget) {
  auto target = ResolveNativeTarget("g++", {"-march=native"});
  ASSERT_TRUE(target.ok()) << target.error().message;
  EXPECT_NE(target->find("-march="), std::string::npos);
  EXPECT_EQ(target->find("-march=native"), std::string::npos);
}

TEST(NativeTarget, UnresolvableIsATypedErrorNamingTheFix) {
  auto target = ResolveNativeTarget("/bin/false", {"-march=native"});
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.error().kind, ErrorKind::kToolchain);
  EXPECT_NE(target.error().message.find("-march=native"), std::string::npos);
  EXPECT_NE(target.error().message.find("-march=x86-64-v3"), std::string::npos);
}

TEST(NativeTarget, HostCpuSignatureNamesThisCpu) {
  EXPECT_NE(HostCpuSignature().find("flags="), std::string::npos);
  EXPECT_FALSE(HostCpuFeatures().empty());
}

}  // namespace
}  // namespace jaxcc::toolchain
