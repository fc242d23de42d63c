// Reading the Makefile-style dependency files that `-MD` writes.
#pragma once

#include <string>
#include <vector>

namespace jaxcc::build {

/// Prerequisites listed in a depfile (the target before ':' is dropped), with backslash-newline
/// continuations and escaped spaces handled. Malformed text yields whatever could be read.
std::vector<std::string> ParseDepfile(const std::string& text);

/// `path` escaped for a depfile that ninja reads (spaces, '#', '$').
std::string EscapeDepfilePath(const std::string& path);

}  // namespace jaxcc::build
