// The integer expression of an `#if` / `#elif`, evaluated in three values: true, false, or
// unknown when it depends on a macro the sources never define (the compiler's, a system
// header's, a `-D` flag's) or on anything else jaxcc cannot know.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "signature/lexer.h"
#include "signature/macro_expander.h"

namespace jaxcc::signature {

enum class Condition { kFalse, kTrue, kUnknown };

/// What a condition may ask about one name.
class MacroState : public MacroLookup {
 public:
  /// kTrue: defined (for certain), kFalse: `#undef`-ined (for certain), kUnknown: never seen by
  /// the sources, or defined or undefined in a branch whose liveness is unknown.
  virtual Condition Defined(const std::string& name) = 0;
  /// Whether an expansion used a macro whose value is not certain (see Defined).
  virtual bool used_uncertain() const = 0;
};

/// Evaluates the tokens after `#if` / `#elif` (no comments): `defined X`, `defined(X)`, macros
/// expanded with `macros` (then `true`, `false`, and names known to be undefined, which count
/// as 0), integer literals, character literals, and C's operators with short-circuit `&&`,
/// `||` and `?:`. Anything unknown, malformed or overflowing gives kUnknown.
Condition EvaluateCondition(const std::vector<Token>& tokens, MacroState* macros);

}  // namespace jaxcc::signature
