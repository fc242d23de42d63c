// GPU architecture names: normalising what users write ("8.0", "90", "sm_90a") and turning a set of
// architectures into nvcc -gencode flags. Groundwork for the CUDA path (issue 3).
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::toolchain {

/// "8.0", "80", "sm_80", "compute_80" -> "80"; "9.0a", "90a", "sm_90a" -> "90a". Anything else
/// (empty, one digit, major < 3, unknown suffix) is ErrorKind::kSpec naming the accepted forms.
Result<std::string> NormalizeArch(const std::string& text);

/// Splits on commas, semicolons and spaces, normalises each, removes duplicates, sorts ascending
/// by number ("80" < "90" < "90a" < "100").
Result<std::vector<std::string>> ParseArchList(const std::vector<std::string>& items);

/// SASS for every architecture plus PTX for the highest, so newer GPUs can JIT it. PTX of an
/// arch-specific target ("90a") runs only on that GPU, so the PTX uses the plain "90" instead.
std::vector<std::string> GencodeFlags(const std::vector<std::string>& arches);

}  // namespace jaxcc::toolchain
