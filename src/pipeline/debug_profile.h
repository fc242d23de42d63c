// The debug profile's flags (JAXCC_DEBUG=1 or debug=True; decision 150c): one place says what a
// debug build compiles differently, for every unit of a module.
#pragma once

#include "pipeline/build_plan.h"

namespace jaxcc::pipeline {

/// Appends the debug profile to `plan`'s flags (after the user's own extra_cflags, so it wins):
/// user units at -O0 -g with frame pointers and JAXCC_DEBUG=1 defined; nvcc units with -G
/// (device debug information, device optimisation off) and the host side at -O0 -g; the wrapper
/// at -O0 -g; the frame runtime at -O0 -g with JAXCC_DEBUG_GUARDS, which runs CPU outputs on
/// guarded copies (include/jaxcc/detail/debug_guards.h). Where the host compiler of
/// `compiler_version` (the first line of its --version) takes it, user units also get
/// -ftrivial-auto-var-init=pattern, so a local read before it is written holds a pattern rather
/// than whatever -O3 happened to leave there (issue 50 item 3).
void ApplyDebugProfile(BuildPlan& plan, const std::string& compiler_version);

/// Whether the compiler of `version` takes -ftrivial-auto-var-init=pattern: GCC from 12, Clang
/// from 8; nothing else is assumed to.
bool TakesPatternInit(const std::string& version);

}  // namespace jaxcc::pipeline
