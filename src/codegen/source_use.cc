#include "codegen/source_use.h"

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

// Calls `visit(identifier, qualified_by_std, next)` for every identifier of `s` outside comments
// and literals (`next` is the index just after it) until it returns true; returns whether one did.
template <typename Visit>
bool AnyCodeIdentifier(const std::string& s, Visit visit) {
  size_t i = 0;
  // The identifier before this one, and whether `::` came between them: `std::hex`.
  std::string previous;
  bool scope_after_previous = false;
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
      previous.clear();
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
      previous.clear();
    } else if (IsIdentifierChar(c)) {
      size_t start = i;
      while (i < s.size() && IsIdentifierChar(s[i])) ++i;
      std::string id = s.substr(start, i - start);
      if (visit(id, scope_after_previous && previous == "std", i)) return true;
      if (i < s.size() && s[i] == '"' && !id.empty() && id.back() == 'R') {
        i = SkipRawString(s, i);  // R"(...)", u8R"(...)", LR"(...)"
        previous.clear();
      } else {
        previous = id;
      }
      scope_after_previous = false;
    } else if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      scope_after_previous = true;
      i += 2;
    } else {
      if (!std::isspace(static_cast<unsigned char>(c))) {
        previous.clear();
        scope_after_previous = false;
      }
      ++i;
    }
  }
  return false;
}

// Stream names nobody uses for anything else.
bool NamesAStream(const std::string& id) {
  static const char* const kNames[] = {"ostream",
                                       "istream",
                                       "iostream",
                                       "ostringstream",
                                       "istringstream",
                                       "stringstream",
                                       "basic_ostream",
                                       "basic_istream",
                                       "basic_ios",
                                       "ios",
                                       "ios_base",
                                       "streambuf",
                                       "basic_streambuf",
                                       "fstream",
                                       "ofstream",
                                       "ifstream",
                                       "sstream",
                                       "iomanip",
                                       "iosfwd",
                                       "syncstream",
                                       "cout",
                                       "cerr",
                                       "clog",
                                       "cin",
                                       "wcout",
                                       "wcerr",
                                       "endl",
                                       "setw",
                                       "setprecision",
                                       "setfill",
                                       "setbase",
                                       "setiosflags",
                                       "resetiosflags",
                                       "boolalpha",
                                       "noboolalpha",
                                       "showbase",
                                       "noshowbase",
                                       "showpoint",
                                       "noshowpoint",
                                       "showpos",
                                       "noshowpos",
                                       "hexfloat",
                                       "defaultfloat",
                                       "scientific",
                                       "nouppercase",
                                       "unitbuf",
                                       "nounitbuf",
                                       "streamsize",
                                       "osyncstream",
                                       "put_time",
                                       "put_money"};
  for (const char* name : kNames) {
    if (id == name) return true;
  }
  return false;
}

// Manipulators and stream members whose names are common words: streams only as `std::<name>`.
bool NamesAManipulatorAfterStd(const std::string& id) {
  static const char* const kNames[] = {"hex",   "dec",      "oct",       "fixed",  "left",
                                       "right", "internal", "uppercase", "flush",  "ends",
                                       "ws",    "quoted",   "locale",    "skipws", "noskipws"};
  for (const char* name : kNames) {
    if (id == name) return true;
  }
  return false;
}

}  // namespace

bool MayUseStdComplex(const std::string& source) {
  return AnyCodeIdentifier(source,
                           [](const std::string& id, bool, size_t) { return NamesComplex(id); });
}

bool MayUseStreams(const std::string& source) {
  std::string before_previous, previous;
  return AnyCodeIdentifier(source, [&](const std::string& id, bool after_std, size_t next) {
    // `using namespace std;` lets every manipulator appear unqualified.
    bool using_std = before_previous == "using" && previous == "namespace" && id == "std";
    before_previous = previous;
    previous = id;
    if (using_std || NamesAStream(id) || (after_std && NamesAManipulatorAfterStd(id))) {
      return true;
    }
    if (id != "operator") return false;
    while (next < source.size() && std::isspace(static_cast<unsigned char>(source[next]))) ++next;
    return source.compare(next, 2, "<<") == 0;  // declares a stream output operator
  });
}

}  // namespace jaxcc::codegen
