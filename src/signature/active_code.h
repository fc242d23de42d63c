// Filters over the token stream: what the compiler would actually see as code.
#pragma once

#include <vector>

#include "signature/command_line_macros.h"
#include "signature/lexer.h"

namespace jaxcc::signature {

/// A stretch of kept tokens (offsets `begin` to `end`, directives included) whose liveness
/// jaxcc could not decide, and the innermost directive that made it so.
struct UncertainRegion {
  size_t begin = 0;
  size_t end = 0;
  Token directive;  ///< the `#if`/`#ifdef`/`#elif`/... whose condition is unknown
};

/// `tokens` without the branches of `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else` groups that are
/// certainly disabled, comments inside them included. This is the one owner of the rule for
/// conditionals (decisions 87, 147): a condition is evaluated (EvaluateCondition) over the
/// compile command's `-D`/`-U` (`flags`, read first, in order) and the macros the source itself
/// `#define`s and `#undef`s before it, in order; one that depends on a macro neither mentions
/// (`__CUDACC__`, `NDEBUG`, a header's), or on one defined only inside a branch of unknown
/// liveness, is unknown, and jaxcc keeps every branch of its group rather than guess the
/// compiler's macros (so `#ifndef GUARD` / `#define GUARD` keeps its body). Each kept stretch of
/// unknown liveness is appended to `*uncertain` when given. Directives of live branches are
/// kept, so macro expansion can replay the `#define`s in order.
std::vector<Token> DropDisabledBranches(std::vector<Token> tokens,
                                        const std::vector<CommandLineMacro>& flags = {},
                                        std::vector<UncertainRegion>* uncertain = nullptr);

/// Only the tokens of code: comments and preprocessor lines removed.
std::vector<Token> CodeTokens(const std::vector<Token>& tokens);

}  // namespace jaxcc::signature
