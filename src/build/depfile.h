// Reading the Makefile-style dependency files that `-MD` writes.
#pragma once

#include <string>
#include <vector>

namespace jaxcc::build {

/// Prerequisites listed in a depfile (the target before ':' is dropped), with backslash-newline
/// continuations and escaped spaces handled. Malformed text yields whatever could be read.
std::vector<std::string> ParseDepfile(const std::string& text);

}  // namespace jaxcc::build
