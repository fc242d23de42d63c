// Compiles kernel sources against include/ with the real CUDA toolchain (no GPU needed), so
// CUDA compatibility of the headers is checked on every build machine that has nvcc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

// $JAXCC_TEST_NVCC, then $CUDA_HOME/bin/nvcc, then /usr/local/cuda/bin/nvcc; "" if none exists.
std::string FindNvcc() {
  for (const char* variable : {"JAXCC_TEST_NVCC", "CUDA_HOME"}) {
    const char* value = std::getenv(variable);
    if (value == nullptr || *value == '\0') continue;
    fs::path candidate =
        std::string(variable) == "CUDA_HOME" ? fs::path(value) / "bin" / "nvcc" : fs::path(value);
    if (fs::exists(candidate)) return candidate.string();
  }
  return fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "";
}

std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A scratch directory removed when the test ends.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag)
      : path_(fs::temp_directory_path() /
              ("jaxcc_kernel_api_" + tag + "_" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Runs `command` with output captured to a log; returns "" on success, else status and log.
std::string RunCommand(const std::string& command, const fs::path& log) {
  const int status = std::system((command + " > " + Quote(log.string()) + " 2>&1").c_str());
  if (status == 0) return "";
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  return "command failed (status " + std::to_string(status) + "): " + command + "\n" + text.str();
}

const std::string kSourceDir = JAXCC_SOURCE_DIR;
const std::string kInclude = kSourceDir + "/include";
const std::string kTestdata = kSourceDir + "/src/kernel_api/testdata";

TEST(NvccCompileTest, Seed002KernelsCompileUnchanged) {
  const std::string nvcc = FindNvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  ScratchDir dir("seed002");
  const std::string command = Quote(nvcc) + " -std=c++17 -arch=sm_80 -I" + Quote(kInclude) +
                              " -c " + Quote(kTestdata + "/seed002_kernels.cu") + " -o " +
                              Quote((dir.path() / "seed002_kernels.o").string());
  EXPECT_EQ(RunCommand(command, dir.path() / "log.txt"), "");
}

TEST(NvccCompileTest, DeviceApiCompilesWithoutWarnings) {
  const std::string nvcc = FindNvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  ScratchDir dir("device_api");
  const std::string command = Quote(nvcc) +
                              " -std=c++17 -arch=sm_80 -Werror all-warnings"
                              " -Xcompiler -Wall,-Wextra,-Werror -I" +
                              Quote(kInclude) + " -c " + Quote(kTestdata + "/device_api.cu") +
                              " -o " + Quote((dir.path() / "device_api.o").string());
  EXPECT_EQ(RunCommand(command, dir.path() / "log.txt"), "");
}

// brainevent 0.3's kernel-header API (dispatch, checks, types) in host and device code.
TEST(NvccCompileTest, Brainevent03ApiCompiles) {
  const std::string nvcc = FindNvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  ScratchDir dir("brainevent03");
  const std::string command = Quote(nvcc) + " -std=c++17 -arch=sm_80 -I" + Quote(kInclude) +
                              " -c " + Quote(kTestdata + "/brainevent03_api.cu") + " -o " +
                              Quote((dir.path() / "brainevent03_api.o").string());
  EXPECT_EQ(RunCommand(command, dir.path() / "log.txt"), "");
}

// data_ptr<T>()'s dtype check in a .cu's host code, with __half/__nv_bfloat16 in the rule:
// built and run (the program touches no GPU), and the device side compiles.
TEST(NvccCompileTest, DataPtrCheckRunsInCudaHostCode) {
  const std::string nvcc = FindNvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  ScratchDir dir("data_ptr_check");
  const std::string binary = (dir.path() / "data_ptr_check").string();
  const std::string command = Quote(nvcc) + " -std=c++17 -arch=sm_80 -I" + Quote(kInclude) + " " +
                              Quote(kTestdata + "/data_ptr_check.cu") + " -o " + Quote(binary);
  ASSERT_EQ(RunCommand(command, dir.path() / "build.txt"), "");
  EXPECT_EQ(RunCommand(Quote(binary), dir.path() / "run.txt"), "");
}

// The same source with brainevent/dtypes.h and ffi_compat.h, which need XLA's FFI headers (the
// one part of the API that does), for the other architecture the corpus is built for.
TEST(NvccCompileTest, Brainevent03XlaFacingHeadersCompile) {
  const std::string nvcc = FindNvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  const std::string xla_include = JAXCC_TEST_XLA_INCLUDE;
  if (xla_include.empty()) GTEST_SKIP() << "jax.ffi.include_dir() not found at configure time";
  ScratchDir dir("brainevent03_xla");
  const std::string command = Quote(nvcc) + " -std=c++17 -arch=sm_90 -DWITH_XLA_HEADERS -I" +
                              Quote(kInclude) + " -isystem " + Quote(xla_include) + " -c " +
                              Quote(kTestdata + "/brainevent03_api.cu") + " -o " +
                              Quote((dir.path() / "brainevent03_xla.o").string());
  EXPECT_EQ(RunCommand(command, dir.path() / "log.txt"), "");
}

// Host compiler (not nvcc) with the CUDA runtime headers on the include path, as for CUDA host
// code built by g++; `source` is a file in testdata/.
std::string CompileHostSourceWithCudaRuntime(const std::string& source) {
  const std::string nvcc = FindNvcc();
  const fs::path cuda_include = fs::path(nvcc).parent_path().parent_path() / "include";
  ScratchDir dir("host_cuda");
  const std::string command = Quote(JAXCC_TEST_CXX) + " -std=c++17 -fsyntax-only -Wall -Wextra" +
                              " -Werror -I" + Quote(kInclude) + " -isystem " +
                              Quote(cuda_include.string()) + " " + Quote(kTestdata + "/" + source);
  return RunCommand(command, dir.path() / "log.txt");
}

bool HaveCudaRuntimeHeaders() {
  const std::string nvcc = FindNvcc();
  return !nvcc.empty() &&
         fs::exists(fs::path(nvcc).parent_path().parent_path() / "include" / "cuda_runtime.h");
}

TEST(NvccCompileTest, HostCompilerUsesCudaTypesWhenCudaRuntimeComesFirst) {
  if (!HaveCudaRuntimeHeaders()) GTEST_SKIP() << "no CUDA toolkit headers";
  EXPECT_EQ(CompileHostSourceWithCudaRuntime("host_with_cuda_runtime.cc"), "");
}

TEST(NvccCompileTest, HostCompilerSeesCudaMacrosAfterLateCudaRuntimeInclude) {
  if (!HaveCudaRuntimeHeaders()) GTEST_SKIP() << "no CUDA toolkit headers";
  EXPECT_EQ(CompileHostSourceWithCudaRuntime("host_late_cuda_runtime.cc"), "");
}

}  // namespace
