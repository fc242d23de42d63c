#include "toolchain/ninja.h"

#include <cstdlib>

#include "util/fs.h"
#include "util/subprocess.h"

namespace jaxcc::toolchain {

Result<std::string> FindNinja(const std::vector<std::string>& extra_dirs) {
  std::string tried;
  if (const char* env = std::getenv("JAXCC_NINJA"); env && *env) {
    std::string found = FindExecutable(env);
    if (!found.empty()) return found;
    tried += "  x $JAXCC_NINJA=" + std::string(env) + ": not an executable file\n";
  }
  for (const std::string& dir : extra_dirs) {
    std::string found = FindExecutable(dir + "/ninja");
    if (!found.empty()) return found;
    tried += "  x " + dir + "/ninja: not found\n";
  }
  std::string found = FindExecutable("ninja");
  if (!found.empty()) return found;
  tried += "  x ninja on PATH: not found\n";
  return MakeError(ErrorKind::kToolchain,
                   "ninja is needed to build kernels but was not found. Tried, in order:\n" +
                       tried +
                       "How to fix: pip install ninja (or apt-get install ninja-build), or set "
                       "JAXCC_NINJA to its path.");
}

std::vector<std::string> NinjaWheelDirs(const std::vector<std::string>& python_path,
                                        const std::string& python_executable) {
  std::vector<std::string> dirs;
  for (const std::string& entry : python_path) {
    if (entry.empty()) continue;  // the script's directory: never where a wheel installs
    dirs.push_back(JoinPath(AbsolutePath(entry), "ninja/data/bin"));
  }
  if (!python_executable.empty()) dirs.push_back(DirName(AbsolutePath(python_executable)));
  return dirs;
}

}  // namespace jaxcc::toolchain
