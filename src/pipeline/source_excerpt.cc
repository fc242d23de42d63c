#include "pipeline/source_excerpt.h"

#include "util/text.h"

namespace jaxcc::pipeline {
namespace {

bool ParseNumber(const std::string& text, size_t& pos, long& out) {
  size_t start = pos;
  out = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    out = out * 10 + (text[pos] - '0');
    if (out > 100000000) return false;
    ++pos;
  }
  return pos > start;
}

// "label:LINE:COL: " at the start of `line` for a label in `sources`; fills line/column.
const signature::SourceFile* MatchLocation(const std::string& line,
                                           const std::vector<signature::SourceFile>& sources,
                                           long& line_no, long& column) {
  for (const auto& source : sources) {
    const std::string& label = source.label;
    if (label.empty() || label[0] != '<') continue;  // real files are quoted by the compiler
    if (line.compare(0, label.size(), label) != 0 || line.size() <= label.size() ||
        line[label.size()] != ':') {
      continue;
    }
    size_t pos = label.size() + 1;
    if (!ParseNumber(line, pos, line_no) || pos >= line.size() || line[pos] != ':') continue;
    ++pos;
    if (!ParseNumber(line, pos, column)) column = 1;
    if (line.find(" error:", pos) == std::string::npos) continue;
    return &source;
  }
  return nullptr;
}

}  // namespace

std::string AddSourceExcerpt(const std::string& first_error,
                             const std::vector<signature::SourceFile>& sources) {
  std::vector<std::string> lines = SplitLines(first_error);
  std::string result;
  for (size_t i = 0; i < lines.size(); ++i) {
    result += (i ? "\n" : "") + lines[i];
    long line_no = 0, column = 0;
    const signature::SourceFile* source = MatchLocation(lines[i], sources, line_no, column);
    // g++ quotes with " | " gutters; nvcc indents the line and puts a caret under it.
    bool already_quoted = i + 1 < lines.size() &&
                          (lines[i + 1].find(" | ") != std::string::npos ||
                           (i + 2 < lines.size() && !lines[i + 1].empty() &&
                            lines[i + 1][0] == ' ' && lines[i + 2].find('^') != std::string::npos));
    if (source == nullptr || already_quoted || line_no < 1) continue;
    std::vector<std::string> source_lines = SplitLines(source->text);
    if (static_cast<size_t>(line_no) > source_lines.size()) continue;
    const std::string& text = source_lines[line_no - 1];
    std::string number = std::to_string(line_no);
    std::string gutter(number.size() < 5 ? 5 - number.size() : 0, ' ');
    result += "\n" + gutter + number + " | " + text;
    std::string caret_pad;
    for (long c = 1; c < column && static_cast<size_t>(c) <= text.size(); ++c) {
      caret_pad += text[c - 1] == '\t' ? '\t' : ' ';
    }
    result += "\n" + std::string(gutter.size() + number.size(), ' ') + " | " + caret_pad + "^";
  }
  return result;
}

}  // namespace jaxcc::pipeline
