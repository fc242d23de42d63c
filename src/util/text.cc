#include "util/text.h"

#include <cstdio>
#include <sstream>

namespace jaxcc {

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Trim(const std::string& text) {
  const char* space = " \t\r\n\f\v";
  size_t begin = text.find_first_not_of(space);
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(space);
  return text.substr(begin, end - begin + 1);
}

std::string EscapeForMessage(std::string_view text, size_t max_bytes) {
  size_t keep = text.size();
  if (keep > max_bytes) {
    keep = max_bytes;
    // Never split a UTF-8 sequence: Python decodes the message, and half a character would not.
    while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  }
  std::string out;
  out.reserve(keep + 16);
  for (size_t i = 0; i < keep; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (keep < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace jaxcc
