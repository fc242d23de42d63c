// One C++ parameter list, split and taken apart: type, name, default, declarator shape.
#pragma once

#include <string>
#include <vector>

#include "signature/lexer.h"

namespace jaxcc::signature {

enum class RefKind { kNone, kLValue, kRValue };

/// One parameter as written. Attributes (`[[maybe_unused]]`, `__attribute__((unused))`,
/// `alignas(...)`) are dropped, the default argument is set aside.
struct ParsedParam {
  std::vector<Token> tokens;  ///< declaration tokens: attributes and default excluded
  std::string name;           ///< "" for an unnamed parameter
  /// The type as written without name, e.g. "const BE::Tensor&" or "float*".
  std::string type_text;
  /// The type without cv-qualifiers, `*`, `&`: "BE::Tensor", "unsigned long", "std::int64_t".
  std::string core_type;
  bool is_const = false;  ///< `const` anywhere outside template arguments (before or after)
  int pointer_depth = 0;
  RefKind ref = RefKind::kNone;
  bool has_default = false;
  bool is_array = false;             ///< `float a[3]`
  bool is_function_pointer = false;  ///< any parenthesised declarator: `void (*cb)(int)`
  bool is_variadic = false;          ///< `...`

  /// A spelling equal for the prototype and the definition of one function: names, defaults
  /// and the top-level const of by-value parameters (not part of the function type) left out.
  std::string Key() const;
};

/// Splits the tokens between the parentheses of a declarator on top-level commas (template
/// argument commas in types respected) and reads each parameter. `(void)` and `()` give none.
std::vector<ParsedParam> ParseParameters(const std::vector<Token>& tokens);

/// Tokens joined the way people write types: "const BE::Tensor&", "std::vector<int, 3>".
std::string JoinTokens(const std::vector<Token>& tokens);

/// True for the words that spell built-in types (`int`, `unsigned`, `double`, ...).
bool IsBuiltinTypeWord(const std::string& word);

}  // namespace jaxcc::signature
