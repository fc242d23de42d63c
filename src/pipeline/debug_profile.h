// The debug profile's flags (JAXCC_DEBUG=1 or debug=True; decision 150c): one place says what a
// debug build compiles differently, for every unit of a module.
#pragma once

#include "pipeline/build_plan.h"

namespace jaxcc::pipeline {

/// Appends the debug profile to `plan`'s flags (after the user's own extra_cflags, so it wins):
/// user units at -O0 -g with frame pointers and JAXCC_DEBUG=1 defined; nvcc units with -G
/// (device debug information, device optimisation off) and the host side at -O0 -g; the wrapper
/// at -O0 -g; the frame runtime at -O0 -g with JAXCC_DEBUG_GUARDS, which runs CPU outputs on
/// guarded copies (include/jaxcc/detail/debug_guards.h).
void ApplyDebugProfile(BuildPlan& plan);

}  // namespace jaxcc::pipeline
