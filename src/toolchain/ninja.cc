#include "toolchain/ninja.h"

#include <cstdlib>

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

}  // namespace jaxcc::toolchain
