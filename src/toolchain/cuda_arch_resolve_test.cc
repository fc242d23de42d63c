#include "toolchain/cuda_arch_resolve.h"

#include <gtest/gtest.h>

#include "toolchain/scoped_env_for_test.h"

namespace jaxcc::toolchain {
namespace {

GpuQuery Gpus(std::vector<std::string> archs, int* calls) {
  return [archs, calls]() -> Result<std::vector<std::string>> {
    ++*calls;
    return archs;
  };
}

TEST(ResolveCudaArchs, ExplicitBeatsEverything) {
  ScopedEnv env("JAXCC_CUDA_ARCH", "75");
  int calls = 0;
  auto resolved = ResolveCudaArchs({"9.0", "sm_80"}, {"8.6"}, Gpus({"7.0"}, &calls));
  ASSERT_TRUE(resolved.ok()) << resolved.error().message;
  EXPECT_EQ(resolved->archs, (std::vector<std::string>{"80", "90"}));
  EXPECT_EQ(resolved->source, "compute_capability");
  EXPECT_EQ(calls, 0);
}

TEST(ResolveCudaArchs, EnvironmentBeatsDetectedGpus) {
  ScopedEnv env("JAXCC_CUDA_ARCH", "90a, 80");
  int calls = 0;
  auto resolved = ResolveCudaArchs({}, {"8.6"}, Gpus({"7.0"}, &calls));
  ASSERT_TRUE(resolved.ok());
  EXPECT_EQ(resolved->archs, (std::vector<std::string>{"80", "90a"}));
  EXPECT_EQ(resolved->source, "$JAXCC_CUDA_ARCH");
  EXPECT_EQ(calls, 0);
}

TEST(ResolveCudaArchs, AllGpusJaxSeesNotOnlyTheFirst) {
  ScopedEnv env("JAXCC_CUDA_ARCH", nullptr);
  int calls = 0;
  auto resolved = ResolveCudaArchs({}, {"9.0", "8.0", "9.0"}, Gpus({"7.0"}, &calls));
  ASSERT_TRUE(resolved.ok());
  EXPECT_EQ(resolved->archs, (std::vector<std::string>{"80", "90"}));
  EXPECT_EQ(calls, 0);
}

TEST(ResolveCudaArchs, NvidiaSmiIsTheLastResort) {
  ScopedEnv env("JAXCC_CUDA_ARCH", nullptr);
  int calls = 0;
  auto resolved = ResolveCudaArchs({}, {}, Gpus({"8.9", "8.9"}, &calls));
  ASSERT_TRUE(resolved.ok());
  EXPECT_EQ(resolved->archs, (std::vector<std::string>{"89"}));
  EXPECT_EQ(resolved->source, "nvidia-smi");
  EXPECT_EQ(calls, 1);
}

TEST(ResolveCudaArchs, NoSourceIsAToolchainErrorWithTheFix) {
  ScopedEnv env("JAXCC_CUDA_ARCH", nullptr);
  GpuQuery none = []() -> Result<std::vector<std::string>> {
    return MakeError(ErrorKind::kToolchain, "nvidia-smi is not on PATH");
  };
  auto resolved = ResolveCudaArchs({}, {}, none);
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.error().kind, ErrorKind::kToolchain);
  EXPECT_NE(resolved.error().message.find("nvidia-smi is not on PATH"), std::string::npos);
  EXPECT_NE(resolved.error().message.find("compute_capability=\"9.0\""), std::string::npos);
}

TEST(ResolveCudaArchs, BadSpellingNamesItsSource) {
  ScopedEnv env("JAXCC_CUDA_ARCH", "sm_banana");
  int calls = 0;
  auto resolved = ResolveCudaArchs({}, {}, Gpus({}, &calls));
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.error().kind, ErrorKind::kSpec);
  EXPECT_EQ(resolved.error().message.rfind("$JAXCC_CUDA_ARCH: ", 0), 0u);
}

}  // namespace
}  // namespace jaxcc::toolchain
