// The rules a load's source text obeys, and reading a source file into a request: one owner for
// both, whether the text came inline from Python or from a file the core read itself.
#pragma once

#include <string>
#include <vector>

#include "signature/resolve.h"
#include "util/result.h"

namespace jaxcc::pipeline {

/// Reads the file at `path` into a SourceFile labelled with that path, without a Python string in
/// between (a warm load of a file reads it and hashes it, nothing more). A file that cannot be
/// read, or whose bytes are not UTF-8, is a kSpec error naming the file and the fix.
Result<signature::SourceFile> ReadSourceFile(const std::string& path);

/// Every source is text a compiler reads as written (no NUL byte, reported by line and column),
/// and not all of them are blank.
Status ValidateSources(const std::vector<signature::SourceFile>& sources);

}  // namespace jaxcc::pipeline
