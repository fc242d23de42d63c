#include "util/clip_lines.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "util/text.h"

namespace jaxcc {
namespace {

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// `pos` moved back to the first byte of the UTF-8 character it falls in.
size_t CharStart(std::string_view text, size_t pos) {
  while (pos > 0 && pos < text.size() && IsContinuationByte(text[pos])) --pos;
  return pos;
}

// Caret lines count one column per character: the byte where character `unit` starts.
size_t ByteOfChar(std::string_view text, size_t unit) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (IsContinuationByte(text[i])) continue;
    if (seen++ == unit) return i;
  }
  return text.size();
}

size_t CharsBefore(std::string_view text, size_t end) {
  return static_cast<size_t>(std::count_if(text.begin(), text.begin() + end,
                                           [](char c) { return !IsContinuationByte(c); }));
}

// Where the `^` of a caret line is: the line holds only blanks, a `|` gutter, `^` and `~`.
std::optional<size_t> CaretIndex(const std::string& line) {
  size_t caret = line.find('^');
  if (caret == std::string::npos) return std::nullopt;
  bool only_marks = std::all_of(line.begin(), line.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '|' || c == '^' || c == '~';
  });
  return only_marks ? std::optional<size_t>(caret) : std::nullopt;
}

// Length of a "    3 | " gutter that the quoted line and its caret line share (g++), else 0.
size_t GutterLength(const std::string& quoted, const std::string& marks) {
  size_t bar = marks.find('|');
  if (bar == std::string::npos || bar > marks.find_first_of("^~")) return 0;
  if (bar + 1 >= marks.size() || marks[bar + 1] != ' ') return 0;
  if (bar + 1 >= quoted.size() || quoted[bar] != '|' || quoted[bar + 1] != ' ') return 0;
  return bar + 2;
}

void ClipPair(std::string& quoted, std::string& marks, size_t gutter, size_t caret, size_t window) {
  std::string_view content = std::string_view(quoted).substr(gutter);
  std::string_view underline = std::string_view(marks).substr(gutter);
  size_t caret_byte = ByteOfChar(content, caret - gutter);
  size_t before = window / 4;
  size_t start = caret_byte > before ? CharStart(content, caret_byte - before) : 0;
  size_t end = std::min(content.size(), start + window);
  if (end < content.size()) end = CharStart(content, end);
  size_t mark_start = std::min(CharsBefore(content, start), underline.size());
  size_t mark_end = end < content.size() ? CharsBefore(content, end) : underline.size();
  mark_end = std::clamp(mark_end, mark_start, underline.size());

  std::string clipped = quoted.substr(0, gutter) + (start > 0 ? "..." : "");
  clipped += content.substr(start, end - start);
  if (end < content.size()) clipped += "...";
  std::string clipped_marks = marks.substr(0, gutter) + (start > 0 ? "   " : "");
  clipped_marks += underline.substr(mark_start, mark_end - mark_start);
  quoted = std::move(clipped);
  marks = std::move(clipped_marks);
}

}  // namespace

std::string ClipLongLines(const std::string& text, size_t window, size_t max_line) {
  std::vector<std::string> lines = SplitLines(text);
  size_t limit = std::min(window, max_line);
  if (std::none_of(lines.begin(), lines.end(),
                   [&](const std::string& line) { return line.size() > limit; })) {
    return text;
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::optional<size_t> caret =
        i + 1 < lines.size() ? CaretIndex(lines[i + 1]) : std::optional<size_t>();
    if (caret) {
      size_t gutter = GutterLength(lines[i], lines[i + 1]);
      if (lines[i].size() > gutter + window || lines[i + 1].size() > gutter + window) {
        ClipPair(lines[i], lines[i + 1], gutter, *caret, window);
      }
      out += lines[i] + "\n" + lines[i + 1] + (i + 2 < lines.size() ? "\n" : "");
      ++i;
      continue;
    }
    std::string& line = lines[i];
    if (line.size() > max_line) {
      size_t size = line.size();
      line = line.substr(0, CharStart(line, max_line)) + "... (" + std::to_string(size) + " bytes)";
    }
    out += line + (i + 1 < lines.size() ? "\n" : "");
  }
  if (!text.empty() && text.back() == '\n') out += '\n';
  return out;
}

}  // namespace jaxcc
