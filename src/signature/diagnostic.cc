// The caret line is what makes a signature error actionable: it shows which parameter is meant.
#include "signature/diagnostic.h"

#include <algorithm>

#include "util/clip_lines.h"

namespace jaxcc::signature {
namespace {

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

Span SpanOf(const Token& first, const Token& last) {
  Span span{first.line, first.column, 1};
  if (last.line != first.line || first.text.find('\n') != std::string::npos) {
    span.length = kToLineEnd;
    return span;
  }
  size_t end = std::max(last.end_offset(), first.end_offset());
  span.length = std::max<int>(1, static_cast<int>(end - first.offset));
  return span;
}

std::string_view SourceLine(std::string_view text, int line) {
  size_t begin = 0;
  for (int current = 1; current < line; ++current) {
    size_t newline = text.find('\n', begin);
    if (newline == std::string_view::npos) return {};
    begin = newline + 1;
  }
  size_t end = text.find('\n', begin);
  std::string_view result = text.substr(begin, end == std::string_view::npos ? end : end - begin);
  if (!result.empty() && result.back() == '\r') result.remove_suffix(1);
  return result;
}

std::string FormatDiagnostic(std::string_view label, std::string_view text, const Span& span,
                             std::string_view severity, std::string_view message) {
  std::string out = std::string(label) + ":" + std::to_string(span.line) + ":" +
                    std::to_string(span.column) + ": " + std::string(severity) + ": " +
                    std::string(message);
  std::string_view line = SourceLine(text, span.line);
  out += "\n" + std::string(line) + "\n";
  size_t column = static_cast<size_t>(std::max(1, span.column) - 1);
  for (size_t i = 0; i < column; ++i) {
    if (i >= line.size()) {
      out += ' ';
    } else if (line[i] == '\t') {
      out += '\t';
    } else if (!IsContinuationByte(line[i])) {
      out += ' ';
    }
  }
  out += '^';
  size_t end = std::min(line.size(), column + static_cast<size_t>(std::max(1, span.length)));
  for (size_t i = column + 1; i < end; ++i) {
    if (!IsContinuationByte(line[i])) out += '~';
  }
  return ClipLongLines(out);  // a generated one-line source must not make a huge message
}

}  // namespace jaxcc::signature
