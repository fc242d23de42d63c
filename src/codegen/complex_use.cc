#include "codegen/complex_use.h"

#include <cctype>
#include <cstddef>
#include <cstring>

namespace jaxcc::codegen {
namespace {

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

bool NamesComplex(const std::string& id) {
  std::string lower;
  for (char c : id) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::string kSuffix = "DISPATCH_ALL";
  return lower.find("complex") != std::string::npos ||
         (id.size() >= kSuffix.size() &&
          id.compare(id.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0);
}

// Skips a "..." or '...' literal starting at `i` (the quote); stops at its end or at the end of
// the line (an unterminated literal), so a misread quote never hides more than one line.
size_t SkipQuoted(const std::string& s, size_t i) {
  char quote = s[i++];
  while (i < s.size() && s[i] != quote && s[i] != '\n') i += (s[i] == '\\') ? 2 : 1;
  return i + 1;
}

// Skips R"delim( ... )delim" starting at the quote; an unreadable delimiter is read as code.
size_t SkipRawString(const std::string& s, size_t quote) {
  size_t open = s.find('(', quote + 1);
  if (open == std::string::npos || open - quote - 1 > 16) return quote + 1;
  std::string close = ")" + s.substr(quote + 1, open - quote - 1) + "\"";
  size_t end = s.find(close, open + 1);
  return end == std::string::npos ? s.size() : end + close.size();
}

}  // namespace

bool MayUseStdComplex(const std::string& source) {
  const std::string& s = source;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      i = s.find('\n', i);  // a `\` continued comment reads on as code: errs towards true
      if (i == std::string::npos) return false;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t end = s.find("*/", i + 2);
      if (end == std::string::npos) return false;
      i = end + 2;
    } else if (c == '"' || c == '\'') {
      i = SkipQuoted(s, i);
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < s.size() &&
                std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      // A pp-number, digit separators included (1'000), so its ' opens no literal.
      ++i;
      while (i < s.size() &&
             (IsIdentifierChar(s[i]) || s[i] == '.' || s[i] == '\'' ||
              ((s[i] == '+' || s[i] == '-') && std::strchr("eEpP", s[i - 1]) != nullptr))) {
        ++i;
      }
    } else if (IsIdentifierChar(c)) {
      size_t start = i;
      while (i < s.size() && IsIdentifierChar(s[i])) ++i;
      std::string id = s.substr(start, i - start);
      if (NamesComplex(id)) return true;
      if (i < s.size() && s[i] == '"' && !id.empty() && id.back() == 'R') {
        i = SkipRawString(s, i);  // R"(...)", u8R"(...)", LR"(...)"
      }
    } else {
      ++i;
    }
  }
  return false;
}

}  // namespace jaxcc::codegen
