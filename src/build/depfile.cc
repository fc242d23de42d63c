#include "build/depfile.h"

namespace jaxcc::build {

std::vector<std::string> ParseDepfile(const std::string& text) {
  std::vector<std::string> words;
  std::string current;
  bool seen_colon = false;
  auto flush = [&] {
    if (current.empty()) return;
    if (seen_colon) words.push_back(current);
    current.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      char next = text[i + 1];
      if (next == '\n') {  // line continuation
        flush();
        ++i;
        continue;
      }
      if (next == '\r' && i + 2 < text.size() && text[i + 2] == '\n') {
        flush();
        i += 2;
        continue;
      }
      if (next == ' ' || next == '#' || next == '\\') {
        current += next;
        ++i;
        continue;
      }
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      current += '$';
      ++i;
      continue;
    }
    if (!seen_colon && c == ':' &&
        (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n' ||
         text[i + 1] == '\\')) {
      current.clear();
      seen_colon = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
      continue;
    }
    current += c;
  }
  flush();
  return words;
}

std::string EscapeDepfilePath(const std::string& path) {
  std::string escaped;
  for (char c : path) {
    if (c == ' ' || c == '#') escaped += '\\';
    if (c == '$') escaped += '$';
    escaped += c;
  }
  return escaped;
}

}  // namespace jaxcc::build
