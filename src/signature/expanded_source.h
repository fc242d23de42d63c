// One source with its macros expanded: what macro-stamped entry points are read from.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "signature/command_line_macros.h"
#include "signature/lexer.h"
#include "signature/macro_definition.h"
#include "signature/macro_expander.h"

namespace jaxcc::signature {

struct ExpandedSource {
  /// Code tokens (no comments, no directives) with every macro the source defines expanded, as
  /// it stands at each point (`#define`, `#undef` and redefinitions are replayed in order).
  std::vector<Token> code;
  std::deque<MacroDefinition> definitions;  ///< every well-formed `#define`, in order (stable)
  std::vector<Invocation> invocations;      ///< top-level invocations, in source order
  /// Set when a bound (kMaxExpansionTokens, kMaxExpansionDepth) stopped the expansion: `code`
  /// then ends there.
  std::string limit_problem;
  Token limit_at;
  size_t tokens_created = 0;  ///< what the expansion charged against kMaxExpansionTokens

  /// The definition whose `#define` line holds `offset`, or nullptr.
  const MacroDefinition* DefinitionAt(size_t offset) const;
  /// The invocation whose name token starts at `offset`, or -1.
  int InvocationAt(size_t offset) const;
};

/// Expands `active` (the tokens of one source after DropDisabledBranches, directives and
/// comments included), after the compile command's `-D`/`-U` (`flags`). Each source is its own
/// translation unit: macros of other sources and of headers it includes are not seen, and names
/// they would define stay unexpanded.
ExpandedSource ExpandSource(const std::vector<Token>& active,
                            const std::vector<CommandLineMacro>& flags = {});

}  // namespace jaxcc::signature
