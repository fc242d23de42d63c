#include "pipeline/debug_profile.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "toolchain/host_compiler.h"

namespace jaxcc::pipeline {
namespace {

void Append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

// The major version of a GCC or Clang --version line, or 0: Clang's follows "clang version ",
// GCC's is the first number after the parenthesised package name ("g++ (Debian 12.2.0-14)
// 12.2.0", "g++ (GCC) 13.1.1 20230614").
int MajorVersion(const std::string& version) {
  if (toolchain::IsClangVersion(version)) {
    const size_t at = version.find("clang version ");
    return at == std::string::npos ? 0 : std::atoi(version.c_str() + at + 14);
  }
  for (const char* gcc : {"g++", "c++", "gcc", "GCC"}) {
    if (version.find(gcc) == std::string::npos) continue;
    const size_t paren = version.rfind(')');
    const size_t digit =
        version.find_first_of("0123456789", paren == std::string::npos ? 0 : paren + 1);
    return digit == std::string::npos ? 0 : std::atoi(version.c_str() + digit);
  }
  return 0;
}

}  // namespace

bool TakesPatternInit(const std::string& version) {
  const int major = MajorVersion(version);
  return toolchain::IsClangVersion(version) ? major >= 8 : major >= 12;
}

void ApplyDebugProfile(BuildPlan& plan, const std::string& compiler_version) {
  Append(plan.user_flags, {"-O0", "-g", "-fno-omit-frame-pointer", "-DJAXCC_DEBUG=1"});
  // Uninitialised locals hold a pattern (floats read as about -1.7e38, pointers fault) instead of
  // what the optimised build happened to leave in the register or stack slot, so a kernel that
  // reads one computes other numbers here than at -O3, which check_kernel's bounds row compares.
  if (TakesPatternInit(compiler_version)) {
    Append(plan.user_flags, {"-ftrivial-auto-var-init=pattern"});
  }
  if (!plan.cuda_flags.empty()) {
    // ptxas refuses an optimisation level beside -G ("Optimized debugging not supported"), and
    // -G already turns device optimisation off: the level jaxcc passed goes.
    auto& cuda = plan.cuda_flags;
    cuda.erase(
        std::remove_if(cuda.begin(), cuda.end(),
                       [](const std::string& flag) { return flag.rfind("-Xptxas=-O", 0) == 0; }),
        cuda.end());
    Append(cuda,
           {"-O0", "-G", "-g", "-Xcompiler=-O0,-g,-fno-omit-frame-pointer", "-DJAXCC_DEBUG=1"});
  }
  Append(plan.wrapper_flags, {"-O0", "-g"});
  Append(plan.runtime_flags, {"-O0", "-g", "-DJAXCC_DEBUG_GUARDS=1"});
}

}  // namespace jaxcc::pipeline
