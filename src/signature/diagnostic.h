// Compiler-style diagnostics: `label:line:col: error: message`, the source line, a caret.
#pragma once

#include <string>
#include <string_view>

#include "signature/lexer.h"

namespace jaxcc::signature {

/// A range on one source line: 1-based line and byte column, and its length in bytes (at least
/// 1; the caret covers the first character, `~` the rest).
struct Span {
  int line = 1;
  int column = 1;
  int length = 1;
};

/// A Span length that underlines up to the end of the line.
constexpr int kToLineEnd = 1 << 20;

/// The span from the start of `first` to the end of `last`; to the end of `first`'s line when
/// `last` (or `first` itself) continues on a later line.
Span SpanOf(const Token& first, const Token& last);
inline Span SpanOf(const Token& token) { return SpanOf(token, token); }

/// Text of line `line` (1-based) of `text`, without its newline ("" past the end).
std::string_view SourceLine(std::string_view text, int line);

/// One diagnostic block, no trailing newline:
///
///     label:line:col: <severity>: message
///     <the source line, verbatim>
///     <blanks up to the column>^~~~
///
/// `severity` is "error" or "note". Tabs before the column are kept in the caret line so the
/// caret stays aligned in a terminal; UTF-8 continuation bytes take no room there. A source line
/// longer than about 200 bytes is shown as a window around the caret (ClipLongLines).
std::string FormatDiagnostic(std::string_view label, std::string_view text, const Span& span,
                             std::string_view severity, std::string_view message);

}  // namespace jaxcc::signature
