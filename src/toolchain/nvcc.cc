#include "toolchain/nvcc.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "toolchain/version_memo.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace jaxcc::toolchain {
namespace {

std::mutex g_mutex;
std::optional<Nvcc> g_memo;
std::string g_memo_env;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The line of `nvcc --version` that names the release, e.g.
// "Cuda compilation tools, release 13.0, V13.0.48".
Result<std::string> ReleaseLine(const std::string& output) {
  size_t at = output.find("release ");
  if (at == std::string::npos) {
    return MakeError(ErrorKind::kToolchain, "`nvcc --version` printed no release line");
  }
  size_t start = output.rfind('\n', at);
  start = start == std::string::npos ? 0 : start + 1;
  return output.substr(start, output.find('\n', at) - start);
}

// $JAXCC_NVCC set to something that is no nvcc: an error, never a quiet fall back to another
// nvcc, since the user asked for this one (decision 252).
Error JaxccNvccNamesNoNvcc(const std::string& value, const std::string& why) {
  return MakeError(ErrorKind::kToolchain,
                   "$JAXCC_NVCC=" + value + " names no usable nvcc (" + why +
                       "); jaxcc does not fall back to another nvcc when JAXCC_NVCC is set.\n"
                       "How to fix: unset JAXCC_NVCC (jaxcc then looks in $CUDA_HOME/bin, "
                       "$CUDA_PATH/bin, PATH and the pip wheel), or point it at an nvcc binary.");
}

}  // namespace

int NvccRelease(const std::string& version) {
  size_t at = version.find("release ");
  int major = 0, minor = 0;
  if (at == std::string::npos ||
      std::sscanf(version.c_str() + at, "release %d.%d", &major, &minor) != 2) {
    return 0;
  }
  return major * 10 + minor;
}

void ResetNvccMemo() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_memo.reset();
}

Result<Nvcc> FindNvcc(const std::vector<std::string>& wheel_dirs, const std::string& memo_path) {
  std::string env_key =
      Env("JAXCC_NVCC") + '\n' + Env("CUDA_HOME") + '\n' + Env("CUDA_PATH") + '\n' + Env("PATH");
  for (const std::string& dir : wheel_dirs) env_key += '\n' + dir;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_memo && g_memo_env == env_key) return *g_memo;

  std::vector<std::pair<std::string, std::string>> candidates;  // (label, path)
  if (!Env("JAXCC_NVCC").empty()) candidates.emplace_back("$JAXCC_NVCC", Env("JAXCC_NVCC"));
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (!Env(var).empty()) candidates.emplace_back(std::string("$") + var, Env(var) + "/bin/nvcc");
  }
  candidates.emplace_back("nvcc on PATH", FindExecutable("nvcc"));
  for (const std::string& dir : wheel_dirs) candidates.emplace_back("pip wheel", dir + "/nvcc");

  std::string tried;
  for (const auto& [label, path] : candidates) {
    const bool asked = label == "$JAXCC_NVCC";
    if (path.empty() || FindExecutable(path).empty()) {
      if (asked) return JaxccNvccNamesNoNvcc(path, "not found");
      tried += "  x " + label + (path.empty() ? "" : " (" + path + ")") + ": not found\n";
      continue;
    }
    auto release = ProbeVersion(path, memo_path, ReleaseLine);
    if (!release.ok()) {
      if (asked) return JaxccNvccNamesNoNvcc(path, release.error().message);
      tried += "  x " + label + " (" + path + "): " + release.error().message + "\n";
      continue;
    }
    std::string absolute = AbsolutePath(path);
    g_memo = Nvcc{absolute, *release, DirName(DirName(absolute)), label};
    g_memo_env = env_key;
    return *g_memo;
  }
  return MakeError(ErrorKind::kToolchain,
                   "nvcc (the CUDA compiler) was not found. Tried, in order:\n" + tried +
                       "How to fix: install the CUDA toolkit and set CUDA_HOME (or put nvcc on "
                       "PATH), pip install jax[cuda13] (it ships nvcc), or point JAXCC_NVCC at "
                       "an nvcc binary.");
}

}  // namespace jaxcc::toolchain
