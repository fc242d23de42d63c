// One `#define` read into tokens, and the directive-line helpers every preprocessor reader shares.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "signature/lexer.h"

namespace jaxcc::signature {

/// A macro as one `#define` line defines it.
struct MacroDefinition {
  std::string name;
  bool function_like = false;  ///< `NAME(` with no blank before the parenthesis
  bool variadic = false;       ///< the last parameter is `...` (named `__VA_ARGS__`) or `x...`
  std::vector<std::string> params;
  /// The replacement list, comments removed; every token keeps its real line, column and offset
  /// in the source, so a caret into an expansion lands on the `#define`'s own text.
  std::vector<Token> body;
  Token name_token;       ///< the name in the `#define`, for notes
  size_t end_offset = 0;  ///< one past the directive's last byte
  /// For a macro a compile flag defines (`-DREAL=double`), that flag; "" for a `#define`.
  std::string flag;

  /// Whether `offset` lies within this `#define` line (never for a flag's macro).
  bool DefinesOffset(size_t offset) const {
    return name_token.offset <= offset && offset < end_offset;
  }

  /// Index of `word` among the parameters, or -1.
  int ParamIndex(std::string_view word) const;
};

/// "#  if X // why" → name "if", argument "X" (comments cut, blanks trimmed).
struct DirectiveParts {
  std::string_view name;
  std::string_view argument;
};
DirectiveParts SplitDirective(std::string_view directive_text);

/// The tokens of a directive after its `#`, comments removed, with their real positions in the
/// source (backslash-newline continuations are joined by the lexer as usual).
std::vector<Token> DirectiveTokens(const Token& directive);

/// The macro name of a `#define` or `#undef` directive ("" when the line names none). Cheap: the
/// line is not lexed unless a comment or continuation sits before the name.
std::string DirectiveMacroName(const Token& directive, std::string_view argument);

/// The definition a `#define` directive makes, or nullopt for a malformed one (no name, a bad
/// parameter list), which the compiler reports itself.
std::optional<MacroDefinition> ParseDefine(const Token& directive);

}  // namespace jaxcc::signature
