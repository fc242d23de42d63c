// Adds the user's source line and a caret under compiler errors at inline labels ("<name>:7:5"),
// which the compiler cannot quote itself because no such file exists on disk.
#pragma once

#include <string>
#include <vector>

#include "signature/resolve.h"

namespace jaxcc::pipeline {

/// Returns `first_error` with `    7 | <line>` and `      |     ^` inserted under every
/// `label:line:col: error:` line whose label is one of `sources` and that the compiler did not
/// already quote. Anything it cannot match is returned unchanged.
std::string AddSourceExcerpt(const std::string& first_error,
                             const std::vector<signature::SourceFile>& sources);

}  // namespace jaxcc::pipeline
