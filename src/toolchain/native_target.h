// `-march=native` and its kin resolved to what the compiler chose on this CPU: the same text
// means another target on every CPU model, so the cache key holds the concrete target
// (decision 173).
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::toolchain {

/// The options of `flags` that ask the compiler to choose from the CPU it runs on
/// (`-march=native`, `-mcpu=native`, `-mtune=native`, also inside nvcc's `-Xcompiler` lists);
/// empty when none does.
std::vector<std::string> NativeTargetFlags(const std::vector<std::string>& flags);

/// What `compiler` makes of `native_flags` here: the target options of its compiler proper's
/// command line in `-###` (GCC: "-march=znver3 -mavx2 -mno-avx512f ... --param ..."; Clang:
/// "-target-cpu znver3 -target-feature +avx2 ..."). Memoised per process. A compiler that does
/// not say is an ErrorKind::kToolchain error naming the flag and the fix (a concrete -march=).
Result<std::string> ResolveNativeTarget(const std::string& compiler,
                                        const std::vector<std::string>& native_flags);

/// The target options of one `-###` output (for tests).
std::string NativeTargetOfDriverOutput(const std::string& output);

/// The instruction-set features a resolved target enables, in /proc/cpuinfo's spelling where it
/// differs ("sse4.2" -> "sse4_2", "lzcnt" -> "abm"): what a bundle records and its loader checks.
std::vector<std::string> EnabledFeatures(const std::string& resolved_target);

/// This CPU as /proc/cpuinfo names it: vendor, family, model and feature flags of the first
/// processor, read once per process; "" where unreadable. Enough to tell CPU models apart.
const std::string& HostCpuSignature();

/// The feature flags of this CPU (/proc/cpuinfo's "flags" or "Features" line), read once.
const std::vector<std::string>& HostCpuFeatures();

}  // namespace jaxcc::toolchain
