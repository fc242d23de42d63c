#include "pipeline/debug_profile.h"

#include <algorithm>
#include <string>
#include <vector>

namespace jaxcc::pipeline {
namespace {

void Append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

void ApplyDebugProfile(BuildPlan& plan) {
  Append(plan.user_flags, {"-O0", "-g", "-fno-omit-frame-pointer", "-DJAXCC_DEBUG=1"});
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
