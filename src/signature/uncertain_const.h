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

/// For a declaration spelled as written: another definition of the same name (`others`: every
/// declaration of that name) in a branch jaxcc could not evaluate that takes a tensor by value
/// where `decl` does, with the other `const` (`#ifdef X` / `void f(const Tensor x)` / `#else` /
/// `void f(Tensor x)`): which one the compiler compiles decides input or output, and the
/// function type cannot tell. The parameter and the directive, or nullopt.
std::optional<UncertainConst> FindAlternativeConst(const Declaration& decl,
                                                   const std::vector<const Declaration*>& others,
                                                   const std::vector<UncertainRegion>& uncertain);

}  // namespace jaxcc::signature
