#include "pipeline/build_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace jaxcc::pipeline {
namespace {

bool Has(const std::vector<std::string>& flags, const std::string& flag) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

LoadRequest CpuRequest(int optimization_level) {
  LoadRequest request;
  request.name = "plan_test";
  request.platform = "cpu";
  request.optimization_level = optimization_level;
  request.sources.push_back({"<inline>", "void f() {}"});
  return request;
}

BuildEnvironment Env() {
  BuildEnvironment env;
  env.jaxcc_include_dir = "/jaxcc/include";
  env.ffi_include_dir = "/jaxlib/include";
  return env;
}

toolchain::HostCompiler FakeCompiler() { return {{"/usr/bin/g++"}, "/usr/bin/g++", "g++ 12"}; }

TEST(BuildPlanTest, UserCodeFollowsTheRequestedLevelTheWrapperIsBuiltLight) {
  BuildPlan plan = MakeBuildPlan(CpuRequest(3), Env(), FakeCompiler());
  EXPECT_TRUE(Has(plan.user_flags, "-O3"));
  EXPECT_TRUE(Has(plan.wrapper_flags, "-O1"));
  EXPECT_FALSE(Has(plan.wrapper_flags, "-O3"));
  // The wrapper's flags reach its compile command (and so the cache key).
  const build::CompileStep& wrapper = plan.graph.compiles.back();
  EXPECT_EQ(wrapper.source, "ffi_wrapper.cc");
  EXPECT_TRUE(Has(wrapper.command, "-O1"));
}

TEST(BuildPlanTest, LevelZeroKeepsEverythingUnoptimisedForDebugging) {
  BuildPlan plan = MakeBuildPlan(CpuRequest(0), Env(), FakeCompiler());
  EXPECT_TRUE(Has(plan.user_flags, "-O0"));
  EXPECT_TRUE(Has(plan.wrapper_flags, "-O0"));
  EXPECT_FALSE(Has(plan.wrapper_flags, "-O1"));
}

TEST(BuildPlanTest, OnlyTheWrapperSeesXlaHeaders) {
  BuildPlan plan = MakeBuildPlan(CpuRequest(2), Env(), FakeCompiler());
  EXPECT_TRUE(Has(plan.wrapper_flags, "/jaxlib/include"));
  EXPECT_FALSE(Has(plan.user_flags, "/jaxlib/include"));
  EXPECT_TRUE(Has(plan.user_flags, "-O2"));
}

}  // namespace
}  // namespace jaxcc::pipeline
