#include "toolchain/nvcc.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>

#include "toolchain/scoped_env_for_test.h"
#include "util/temp_dir_for_test.h"

namespace jaxcc::toolchain {
namespace {

std::string FakeCudaHome(const std::string& release) {
  std::string home = testing_util::MakeTestTempDir("jaxcc-nvcc");
  ::mkdir((home + "/bin").c_str(), 0755);
  std::string nvcc = home + "/bin/nvcc";
  std::ofstream(nvcc) << "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
                      << "echo 'Cuda compilation tools, release " << release << ", V" << release
                      << ".1'\n";
  ::chmod(nvcc.c_str(), 0755);
  return home;
}

TEST(FindNvcc, JaxccNvccWinsOverCudaHome) {
  std::string preferred = FakeCudaHome("13.0");
  std::string other = FakeCudaHome("12.4");
  std::string path = preferred + "/bin/nvcc";
  ScopedEnv nvcc("JAXCC_NVCC", path.c_str());
  ScopedEnv home("CUDA_HOME", other.c_str());
  auto found = FindNvcc({}, "");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->path, path);
  EXPECT_EQ(found->version, "Cuda compilation tools, release 13.0, V13.0.1");
  EXPECT_EQ(found->cuda_home, preferred);
}

TEST(FindNvcc, CudaHomeThenWheelDirs) {
  std::string home = FakeCudaHome("12.8");
  ScopedEnv nvcc("JAXCC_NVCC", nullptr);
  ScopedEnv path("PATH", "/nonexistent");
  {
    ScopedEnv cuda_home("CUDA_HOME", home.c_str());
    auto found = FindNvcc({}, "");
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_EQ(found->cuda_home, home);
  }
  ScopedEnv cuda_home("CUDA_HOME", nullptr);
  ScopedEnv cuda_path("CUDA_PATH", nullptr);
  auto from_wheel = FindNvcc({home + "/bin"}, "");
  ASSERT_TRUE(from_wheel.ok()) << from_wheel.error().message;
  EXPECT_EQ(from_wheel->path, home + "/bin/nvcc");
}

// Decision 252: JAXCC_NVCC naming no nvcc was passed over for the next candidate, silently.
TEST(FindNvcc, JaxccNvccNamingNoNvccIsAnErrorNotAFallBack) {
  std::string home = FakeCudaHome("12.8");
  ScopedEnv cuda_home("CUDA_HOME", home.c_str());  // a usable nvcc, to fall back to
  for (const char* value : {"/nonexistent/nvcc", "/bin/true"}) {
    ScopedEnv nvcc("JAXCC_NVCC", value);
    auto found = FindNvcc({}, "");
    ASSERT_FALSE(found.ok()) << value << " gave " << found->path;
    EXPECT_EQ(found.error().kind, ErrorKind::kToolchain);
    const std::string& m = found.error().message;
    EXPECT_NE(m.find(std::string("$JAXCC_NVCC=") + value + " names no usable nvcc"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("How to fix: unset JAXCC_NVCC"), std::string::npos) << m;
  }
  ScopedEnv nvcc("JAXCC_NVCC", nullptr);  // unset: CUDA_HOME's
  auto found = FindNvcc({}, "");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->cuda_home, home);
}

TEST(FindNvcc, NothingFoundListsCandidatesInOrder) {
  ScopedEnv nvcc("JAXCC_NVCC", nullptr);
  ScopedEnv home("CUDA_HOME", "/no-cuda");
  ScopedEnv cuda_path("CUDA_PATH", nullptr);
  ScopedEnv path("PATH", "/nonexistent");
  auto found = FindNvcc({"/no-wheel/bin"}, "");
  ASSERT_FALSE(found.ok());
  const std::string& m = found.error().message;
  EXPECT_EQ(found.error().kind, ErrorKind::kToolchain);
  size_t b = m.find("$CUDA_HOME"), c = m.find("nvcc on PATH"), d = m.find("pip wheel");
  ASSERT_NE(d, std::string::npos) << m;
  EXPECT_TRUE(b < c && c < d) << m;
  EXPECT_NE(m.find("How to fix"), std::string::npos);
}

TEST(FindNvcc, RealNvccWhenInstalled) {
  ScopedEnv nvcc("JAXCC_NVCC", nullptr);
  auto found = FindNvcc({"/usr/local/cuda/bin"}, "");
  if (!found.ok()) GTEST_SKIP() << "no nvcc on this machine";
  EXPECT_NE(found->version.find("release"), std::string::npos);
}

TEST(NvccRelease, ReadsTheReleaseLineAsMajorTimesTenPlusMinor) {
  EXPECT_EQ(NvccRelease("Cuda compilation tools, release 13.0, V13.0.88"), 130);
  EXPECT_EQ(NvccRelease("release 11.2"), 112);
  EXPECT_EQ(NvccRelease("garbled"), 0);
  EXPECT_EQ(NvccRelease(""), 0);
}

}  // namespace
}  // namespace jaxcc::toolchain
