// Filters over the token stream: what the compiler would actually see as code.
#pragma once

#include <vector>

#include "signature/lexer.h"

namespace jaxcc::signature {

/// `tokens` without the branches of `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else` groups that are
/// certainly disabled, comments inside them included. This is the one owner of the rule for
/// conditionals (decision 87): a condition is evaluated (EvaluateCondition) over the macros the
/// source itself `#define`s and `#undef`s before it, in order; one that depends on a macro the
/// source never mentions (`__CUDACC__`, `NDEBUG`, a `-D` flag), or on one defined only inside a
/// branch of unknown liveness, is unknown, and jaxcc keeps every branch of its group rather
/// than guess the compiler's macros (so `#ifndef GUARD` / `#define GUARD` keeps its body).
/// Directives of live branches are kept, so macro expansion can replay the `#define`s in order.
std::vector<Token> DropDisabledBranches(std::vector<Token> tokens);

/// Only the tokens of code: comments and preprocessor lines removed.
std::vector<Token> CodeTokens(const std::vector<Token>& tokens);

}  // namespace jaxcc::signature
