#include "pipeline/debug_profile.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace jaxcc::pipeline {
namespace {

std::ptrdiff_t LastIndex(const std::vector<std::string>& flags, const std::string& flag) {
  auto it = std::find(flags.rbegin(), flags.rend(), flag);
  return it == flags.rend() ? -1 : static_cast<std::ptrdiff_t>(flags.rend() - it - 1);
}

LoadRequest Request(const std::string& platform, bool debug) {
  LoadRequest request;
  request.name = "debug_plan";
  request.platform = platform;
  request.debug = debug;
  request.extra_cflags = {"-O3"};
  request.sources.push_back({platform == "cuda" ? "k.cu" : "<inline>", "void f() {}"});
  return request;
}

BuildEnvironment Env() {
  BuildEnvironment env;
  env.jaxcc_include_dir = "/jaxcc/include";
  env.ffi_include_dir = "/jaxlib/include";
  return env;
}

toolchain::HostCompiler Compiler() { return {{"/usr/bin/g++"}, "/usr/bin/g++", "g++ 12"}; }

TEST(DebugProfileTest, DebugProfileOverridesTheUsersLevelAndGuardsTheRuntime) {
  BuildPlan plan = MakeBuildPlan(Request("cpu", true), Env(), Compiler());
  // -O0 after the user's own -O3 (the last level wins), with -g and the define user code sees.
  EXPECT_GT(LastIndex(plan.user_flags, "-O0"), LastIndex(plan.user_flags, "-O3"));
  EXPECT_GE(LastIndex(plan.user_flags, "-g"), 0);
  EXPECT_GE(LastIndex(plan.user_flags, "-DJAXCC_DEBUG=1"), 0);
  EXPECT_GE(LastIndex(plan.runtime_flags, "-DJAXCC_DEBUG_GUARDS=1"), 0);
  EXPECT_GT(LastIndex(plan.wrapper_flags, "-O0"), LastIndex(plan.wrapper_flags, "-O1"));
}

TEST(DebugProfileTest, WithoutTheProfileNothingChanges) {
  BuildPlan plan = MakeBuildPlan(Request("cpu", false), Env(), Compiler());
  EXPECT_EQ(LastIndex(plan.user_flags, "-DJAXCC_DEBUG=1"), -1);
  EXPECT_EQ(LastIndex(plan.user_flags, "-g"), -1);
  EXPECT_EQ(LastIndex(plan.runtime_flags, "-DJAXCC_DEBUG_GUARDS=1"), -1);
}

TEST(DebugProfileTest, LocalsArePatternInitialisedWhereTheCompilerTakesIt) {
  const std::string flag = "-ftrivial-auto-var-init=pattern";
  BuildPlan plan = MakeBuildPlan(Request("cpu", true), Env(), Compiler());
  EXPECT_GE(LastIndex(plan.user_flags, flag), 0);
  EXPECT_EQ(LastIndex(plan.wrapper_flags, flag), -1);  // jaxcc's own units are not the subject
  EXPECT_EQ(LastIndex(MakeBuildPlan(Request("cpu", false), Env(), Compiler()).user_flags, flag),
            -1);
  EXPECT_TRUE(TakesPatternInit("g++ (Debian 12.2.0-14) 12.2.0"));
  EXPECT_TRUE(TakesPatternInit("g++ (GCC) 13.1.1 20230614"));  // the version is not last
  EXPECT_FALSE(TakesPatternInit("g++ (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0"));
  EXPECT_TRUE(TakesPatternInit("Debian clang version 14.0.6"));
  EXPECT_FALSE(TakesPatternInit("clang version 7.1.0 (tags/RELEASE_710/final)"));
  EXPECT_FALSE(TakesPatternInit("icpx (R) oneAPI DPC++/C++ Compiler 2024.0.0"));
  toolchain::HostCompiler old_gcc = Compiler();
  old_gcc.version = "g++ (GCC) 11.2.1 20220127";
  EXPECT_EQ(LastIndex(MakeBuildPlan(Request("cpu", true), Env(), old_gcc).user_flags, flag), -1);
}

TEST(DebugProfileTest, CudaGetsDeviceDebugAndNoPtxasLevel) {
  CudaToolchain cuda{{"/cuda/bin/nvcc", "release 13.0", "/cuda", "test"}, {"80"}};
  BuildPlan plan = MakeBuildPlan(Request("cuda", true), Env(), Compiler(), &cuda);
  EXPECT_GE(LastIndex(plan.cuda_flags, "-G"), 0);
  // ptxas refuses an optimisation level beside -G ("Optimized debugging not supported").
  for (const std::string& flag : plan.cuda_flags) EXPECT_NE(flag.rfind("-Xptxas=-O", 0), 0u);
}

}  // namespace
}  // namespace jaxcc::pipeline
