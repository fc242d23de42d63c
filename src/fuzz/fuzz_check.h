// Invariant checks for the fuzz targets: a failure prints what broke and aborts, so libFuzzer
// records the input as a crash.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace jaxcc::fuzz {

[[noreturn]] inline void FailInvariant(const char* file, int line, const char* condition,
                                       const std::string& detail) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n%s\n", file, line, condition,
               detail.c_str());
  std::abort();
}

/// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
/// Messages are decoded by Python; a message built from valid input must stay valid.
inline bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length = c < 0x80           ? 1
                    : (c >> 5) == 0x6  ? 2
                    : (c >> 4) == 0xE  ? 3
                    : (c >> 3) == 0x1E ? 4
                                       : 0;
    if (length == 0 || i + length > text.size()) return false;
    unsigned int code = length == 1 ? c : c & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
      unsigned char next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    static constexpr unsigned int kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kMinimum[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

/// `text` split on `separator`; a trailing separator ends the last piece, it starts no new one.
inline std::vector<std::string> SplitOn(std::string_view text, char separator) {
  std::vector<std::string> pieces;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(separator, begin);
    if (end == std::string_view::npos) end = text.size();
    pieces.emplace_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return pieces;
}

}  // namespace jaxcc::fuzz

/// Aborts with `detail` (a std::string expression, evaluated only on failure) unless `condition`.
#define JAXCC_FUZZ_CHECK(condition, detail)                                              \
  do {                                                                                   \
    if (!(condition)) {                                                                  \
      ::jaxcc::fuzz::FailInvariant(__FILE__, __LINE__, #condition, std::string(detail)); \
    }                                                                                    \
  } while (false)
