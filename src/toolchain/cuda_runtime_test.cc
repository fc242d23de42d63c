#include "toolchain/cuda_runtime.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "toolchain/scoped_env_for_test.h"
#include "util/fs.h"

namespace jaxcc::toolchain {
namespace {

const char kNvcc13[] = "Cuda compilation tools, release 13.0, V13.0.88";

TEST(SharedCudaRuntimeFromEnvironment, SharedUnlessStaticIsAsked) {
  {
    ScopedEnv unset("JAXCC_CUDA_RUNTIME", nullptr);
    EXPECT_TRUE(*SharedCudaRuntimeFromEnvironment());
  }
  for (const char* value : {"", "shared"}) {
    ScopedEnv env("JAXCC_CUDA_RUNTIME", value);
    EXPECT_TRUE(*SharedCudaRuntimeFromEnvironment()) << value;
  }
  ScopedEnv static_runtime("JAXCC_CUDA_RUNTIME", "static");
  EXPECT_FALSE(*SharedCudaRuntimeFromEnvironment());
}

TEST(SharedCudaRuntimeFromEnvironment, AnyOtherValueIsASpecErrorNamingTheChoices) {
  ScopedEnv env("JAXCC_CUDA_RUNTIME", "Shared ");
  auto shared = SharedCudaRuntimeFromEnvironment();
  ASSERT_FALSE(shared.ok());
  EXPECT_EQ(shared.error().kind, ErrorKind::kSpec);
  EXPECT_NE(shared.error().message.find("JAXCC_CUDA_RUNTIME='Shared '"), std::string::npos);
  EXPECT_NE(shared.error().message.find("'static'"), std::string::npos);
  EXPECT_NE(shared.error().message.find("'shared'"), std::string::npos);
}

class WheelDirs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "jaxcc_cudart_XXXXXX";
    ASSERT_NE(::mkdtemp(root_.data()), nullptr);
  }
  void TearDown() override { (void)RemoveTree(root_); }
  std::string Dir(const std::string& name) {
    std::string dir = JoinPath(root_, name);
    EXPECT_TRUE(MakeDirs(dir).ok());
    return dir;
  }
  std::string root_;
};

TEST_F(WheelDirs, TheFirstDirectoryWithTheNvccMajorsRuntimeWins) {
  std::string empty = Dir("a/lib"), cu12 = Dir("b/lib"), cu13 = Dir("c/lib"), later = Dir("d/lib");
  ASSERT_TRUE(WriteFileAtomic(JoinPath(cu12, "libcudart.so.12"), "x").ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(cu13, "libcudart.so.13"), "x").ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(later, "libcudart.so.13"), "x").ok());
  EXPECT_EQ(FindWheelCudaRuntime({empty, cu12, cu13, later}, kNvcc13),
            JoinPath(cu13, "libcudart.so.13"));
  EXPECT_EQ(
      FindWheelCudaRuntime({empty, cu12, cu13}, "Cuda compilation tools, release 12.4, V12.4.131"),
      JoinPath(cu12, "libcudart.so.12"));
}

TEST_F(WheelDirs, NoWheelOrNoVersionMeansNone) {
  std::string cu12 = Dir("b/lib");
  ASSERT_TRUE(WriteFileAtomic(JoinPath(cu12, "libcudart.so.12"), "x").ok());
  EXPECT_EQ(FindWheelCudaRuntime({cu12}, kNvcc13), "");
  EXPECT_EQ(FindWheelCudaRuntime({}, kNvcc13), "");
  EXPECT_EQ(FindWheelCudaRuntime({cu12}, "no release line"), "");
  Dir("e/lib/libcudart.so.13");  // a directory of that name is not a library
  EXPECT_EQ(FindWheelCudaRuntime({JoinPath(root_, "e/lib")}, kNvcc13), "");
}

}  // namespace
}  // namespace jaxcc::toolchain
