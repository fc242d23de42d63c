// Hand-written scanner: each Scan* function returns the end offset of one lexeme.
#include "signature/lexer.h"

#include <cstring>

namespace jaxcc::signature {
namespace {

bool IsIdentifierStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80;
}

bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

bool IsIdentifierChar(unsigned char c) { return IsIdentifierStart(c) || IsDigit(c); }

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// The scanner tries 3, then 2, then 1 characters: the longest match wins.
constexpr std::string_view kPunct3[] = {"<<=", ">>=", "...", "<=>", "->*"};
constexpr std::string_view kPunct2[] = {
    "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
    "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", ".*"};
constexpr char kPunct1[] = "{}[]()<>;:,.?~!+-*/%^&|=#";

class Scanner {
 public:
  explicit Scanner(std::string_view source) : src_(source) {}

  std::vector<Token> Run() {
    std::vector<Token> tokens;
    bool at_line_start = true;  // only whitespace (or comments) so far on this line
    size_t pos = 0;
    while (true) {
      pos = SkipSpace(pos, &at_line_start);
      if (pos >= src_.size()) break;
      TokenKind kind;
      size_t end = ScanToken(pos, at_line_start, &kind);
      Token token;
      token.kind = kind;
      token.text = std::string(src_.substr(pos, end - pos));
      token.offset = pos;
      Locate(pos, &token.line, &token.column);
      tokens.push_back(std::move(token));
      if (kind != TokenKind::kBlockComment) at_line_start = false;
      pos = end;
    }
    return tokens;
  }

 private:
  char At(size_t i) const { return i < src_.size() ? src_[i] : '\0'; }

  bool StartsAt(size_t i, std::string_view text) const {
    return src_[i] == text[0] && src_.substr(i, text.size()) == text;
  }

  // Line and column of `pos`; offsets only grow, so a running cursor keeps this linear.
  void Locate(size_t pos, int* line, int* column) {
    for (; cursor_ < pos; ++cursor_) {
      if (src_[cursor_] == '\n') {
        ++line_;
        line_start_ = cursor_ + 1;
      }
    }
    *line = line_;
    *column = static_cast<int>(pos - line_start_) + 1;
  }

  // Whitespace and backslash-newline splices; a newline starts a new line for directives.
  size_t SkipSpace(size_t pos, bool* at_line_start) const {
    while (pos < src_.size()) {
      char c = src_[pos];
      if (c == '\n') {
        *at_line_start = true;
        ++pos;
      } else if (IsSpace(c)) {
        ++pos;
      } else if (c == '\\' && SpliceLength(pos) > 0) {
        pos += SpliceLength(pos);
      } else {
        break;
      }
    }
    return pos;
  }

  // Length of a backslash-newline at `pos` (with an optional `\r`), or 0.
  size_t SpliceLength(size_t pos) const {
    if (At(pos) != '\\') return 0;
    if (At(pos + 1) == '\n') return 2;
    if (At(pos + 1) == '\r' && At(pos + 2) == '\n') return 3;
    return 0;
  }

  size_t ScanToken(size_t pos, bool at_line_start, TokenKind* kind) const {
    unsigned char c = static_cast<unsigned char>(src_[pos]);
    if (c == '/' && At(pos + 1) == '/') {
      *kind = TokenKind::kLineComment;
      return ScanLineComment(pos);
    }
    if (c == '/' && At(pos + 1) == '*') {
      *kind = TokenKind::kBlockComment;
      return ScanBlockComment(pos);
    }
    if (c == '#' && at_line_start) {
      *kind = TokenKind::kPreprocessor;
      return ScanDirective(pos);
    }
    if (IsIdentifierStart(c)) return ScanWordOrPrefixedLiteral(pos, kind);
    if (IsDigit(c) || (c == '.' && IsDigit(static_cast<unsigned char>(At(pos + 1))))) {
      *kind = TokenKind::kNumber;
      return ScanNumber(pos);
    }
    if (c == '"') {
      *kind = TokenKind::kString;
      return ScanQuoted(pos, '"');
    }
    if (c == '\'') {
      *kind = TokenKind::kChar;
      return ScanQuoted(pos, '\'');
    }
    *kind = TokenKind::kPunct;
    for (std::string_view p : kPunct3) {
      if (StartsAt(pos, p)) return pos + 3;
    }
    for (std::string_view p : kPunct2) {
      if (StartsAt(pos, p)) return pos + 2;
    }
    if (c != 0 && std::strchr(kPunct1, c) != nullptr) return pos + 1;
    *kind = TokenKind::kOther;
    return pos + 1;
  }

  // Up to the newline; a backslash right before the newline continues the comment.
  size_t ScanLineComment(size_t pos) const {
    while (pos < src_.size() && src_[pos] != '\n') {
      size_t splice = SpliceLength(pos);
      pos += splice > 0 ? splice : 1;
    }
    if (pos > 0 && pos <= src_.size() && At(pos - 1) == '\r') --pos;
    return pos;
  }

  size_t ScanBlockComment(size_t pos) const {
    size_t close = src_.find("*/", pos + 2);
    return close == std::string_view::npos ? src_.size() : close + 2;
  }

  // A directive ends at an unspliced newline. Block comments may span lines inside it, and a
  // `//` comment ends it, so an annotation written on a directive line stays part of the line.
  size_t ScanDirective(size_t pos) const {
    ++pos;
    while (pos < src_.size()) {
      char c = src_[pos];
      if (c == '\n') break;
      if (c == '\\' && SpliceLength(pos) > 0) {
        pos += SpliceLength(pos);
      } else if (c == '/' && At(pos + 1) == '/') {
        return ScanLineComment(pos);
      } else if (c == '/' && At(pos + 1) == '*') {
        pos = ScanBlockComment(pos);
      } else if (c == '"' || c == '\'') {
        pos = ScanQuoted(pos, c);
      } else {
        ++pos;
      }
    }
    if (pos > 0 && At(pos - 1) == '\r') --pos;
    return pos;
  }

  // An identifier, unless it is an encoding prefix (u8, u, U, L, with R for raw strings)
  // directly followed by a quote.
  size_t ScanWordOrPrefixedLiteral(size_t pos, TokenKind* kind) const {
    size_t end = pos;
    while (end < src_.size() && IsIdentifierChar(static_cast<unsigned char>(src_[end]))) ++end;
    std::string_view word = src_.substr(pos, end - pos);
    char next = At(end);
    bool encoding = word == "u8" || word == "u" || word == "U" || word == "L";
    bool raw = word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR";
    if (next == '"' && raw) {
      *kind = TokenKind::kString;
      size_t raw_end = ScanRawString(end);
      return raw_end != 0 ? raw_end : ScanQuoted(end, '"');
    }
    if ((next == '"' || next == '\'') && encoding) {
      *kind = next == '"' ? TokenKind::kString : TokenKind::kChar;
      return ScanQuoted(end, next);
    }
    *kind = TokenKind::kIdentifier;
    return end;
  }

  // R"delim( ... )delim" starting at the quote; 0 if the delimiter is malformed.
  size_t ScanRawString(size_t quote) const {
    size_t open = quote + 1;
    while (open < src_.size() && open - quote - 1 <= 16 && src_[open] != '(') {
      char c = src_[open];
      if (c == ')' || c == '\\' || c == '"' || IsSpace(c)) return 0;
      ++open;
    }
    if (At(open) != '(') return 0;
    std::string closing = ")" + std::string(src_.substr(quote + 1, open - quote - 1)) + "\"";
    size_t close = src_.find(closing, open + 1);
    if (close == std::string_view::npos) return src_.size();
    return UdSuffix(close + closing.size());
  }

  // "..." or '...' with escapes; stops at the end of the line if unterminated.
  size_t ScanQuoted(size_t pos, char quote) const {
    ++pos;
    while (pos < src_.size()) {
      char c = src_[pos];
      if (c == quote) return UdSuffix(pos + 1);
      if (c == '\n') return pos;
      if (c == '\\') {
        size_t splice = SpliceLength(pos);
        pos += splice > 0 ? splice : 2;
        continue;
      }
      ++pos;
    }
    return src_.size();
  }

  // User-defined literal suffix: "abc"_s, 'x'_c.
  size_t UdSuffix(size_t pos) const {
    if (!IsIdentifierStart(static_cast<unsigned char>(At(pos)))) return pos;
    while (pos < src_.size() && IsIdentifierChar(static_cast<unsigned char>(src_[pos]))) ++pos;
    return pos;
  }

  // pp-number: digits, letters, `_`, `.`, digit separators and exponent signs.
  size_t ScanNumber(size_t pos) const {
    ++pos;
    while (pos < src_.size()) {
      unsigned char c = static_cast<unsigned char>(src_[pos]);
      char prev = src_[pos - 1];
      bool exponent_sign =
          (c == '+' || c == '-') && (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P');
      bool separator = c == '\'' && IsIdentifierChar(static_cast<unsigned char>(At(pos + 1)));
      if (IsIdentifierChar(c) || c == '.' || exponent_sign || separator) {
        ++pos;
      } else {
        break;
      }
    }
    return pos;
  }

  std::string_view src_;
  size_t cursor_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
};

}  // namespace

std::vector<Token> Lex(std::string_view source) { return Scanner(source).Run(); }

}  // namespace jaxcc::signature
