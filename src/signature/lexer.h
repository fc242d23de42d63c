// A C++ lexer precise enough to read declarations: it never mistakes a comment, a string or a
// preprocessor line for code, which is what the anchor's regular expressions got wrong.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace jaxcc::signature {

enum class TokenKind {
  kIdentifier,    ///< also keywords: `const`, `void`, ...
  kNumber,        ///< a pp-number: 42, 1.0f, 0x1p-3, 1'000
  kString,        ///< "...", u8"...", L"...", R"d(...)d" (prefix included)
  kChar,          ///< 'a', u'\n', L'x'
  kPunct,         ///< operators and punctuators, longest match: `::`, `->`, `...`, `>>=`
  kLineComment,   ///< `// ...` up to (not including) the newline; `\` continuations joined
  kBlockComment,  ///< `/* ... */`
  kPreprocessor,  ///< a whole directive line from `#`, continuations and comments included
  kOther,         ///< a stray byte (`@`, a backslash, ...): kept so nothing is lost
};

/// One token. `line` and `column` are 1-based; the column counts bytes.
struct Token {
  TokenKind kind = TokenKind::kOther;
  std::string text;  ///< exact spelling, delimiters included
  int line = 1;
  int column = 1;
  size_t offset = 0;  ///< byte offset of the first character in the source
  /// -1 for a token read from the source as is; for one that macro expansion produced (or
  /// consumed as an argument), the index of the top-level invocation it came from in its
  /// source's expansion (`ExpandedSource::invocations`). Line, column and offset stay where
  /// the token is spelled: in the `#define`'s body, or in the invocation's arguments.
  int expansion = -1;

  bool Is(TokenKind k, std::string_view spelling) const {
    // Sizes first: this runs for nearly every token the declaration scanner looks at.
    return kind == k && text.size() == spelling.size() &&
           std::string_view(text).compare(spelling) == 0;
  }
  bool IsPunct(std::string_view spelling) const { return Is(TokenKind::kPunct, spelling); }
  bool IsIdentifier(std::string_view spelling) const {
    return Is(TokenKind::kIdentifier, spelling);
  }
  size_t end_offset() const { return offset + text.size(); }
};

/// Splits `source` into tokens, comments and preprocessor lines included (whitespace dropped).
/// Never fails: an unterminated comment, string or raw string extends to the end of the input
/// (or, for an ordinary string or character literal, to the end of its line), as far as the
/// compiler would read it before complaining itself.
std::vector<Token> Lex(std::string_view source);

}  // namespace jaxcc::signature
