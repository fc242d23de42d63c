// Filters over the token stream: what the compiler would actually see as code.
#pragma once

#include <vector>

#include "signature/lexer.h"

namespace jaxcc::signature {

/// `tokens` without the branches that `#if 0` (or `#elif 0`, or the `#else` of `#if 1`) disables,
/// comments inside them included. Conditions other than a literal 0 or 1 are unknown and kept:
/// jaxcc reads both branches rather than guess the compiler's macros.
std::vector<Token> DropDisabledBranches(std::vector<Token> tokens);

/// Only the tokens of code: comments and preprocessor lines removed.
std::vector<Token> CodeTokens(const std::vector<Token>& tokens);

}  // namespace jaxcc::signature
