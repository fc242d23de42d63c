// Refusing, rather than guessing, the one part of a signature the compiler cannot prove: the
// `const` of a tensor taken by value, which decides input or output (decision 147).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "signature/active_code.h"
#include "signature/declarations.h"
#include "signature/expanded_source.h"
#include "util/result.h"

namespace jaxcc::signature {

/// For a declaration that macro expansion produced (`decl`, read off `expanded`): the first
/// tensor parameter taken by value whose spelling involves a macro defined or undefined in a
/// branch jaxcc could not evaluate (`uncertain`, from DropDisabledBranches over `active`), with
/// that macro's name and the directive whose condition is unknown. A function type does not
/// show a by-value parameter's `const` (`void f(const T)` is `void f(T)`), so the compiler
/// cannot prove jaxcc's reading of it there, and inference must not guess.
struct UncertainConst {
  size_t param = 0;
  std::string macro;
  Token directive;
};
std::optional<UncertainConst> FindUncertainConst(const Declaration& decl,
                                                 const ExpandedSource& expanded,
                                                 const std::vector<Token>& active,
                                                 const std::vector<UncertainRegion>& uncertain);

}  // namespace jaxcc::signature
