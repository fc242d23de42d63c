#include "build/compile_diagnostics.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "util/text.h"

namespace jaxcc::build {
namespace {

// "path:12:5: error: ..." or "path:12: error: ..." (nvcc omits the column sometimes).
bool IsLocatedDiagnostic(const std::string& line, const char* severity) {
  size_t pos = line.find(std::string(": ") + severity);
  if (pos == std::string::npos || pos == 0) return false;
  size_t i = pos;
  int numeric_fields = 0;
  while (i > 0) {
    size_t colon = line.rfind(':', i - 1);
    if (colon == std::string::npos) break;
    std::string field = line.substr(colon + 1, i - colon - 1);
    if (field.empty() || !std::all_of(field.begin(), field.end(), ::isdigit)) break;
    ++numeric_fields;
    i = colon;
  }
  return numeric_fields >= 1;
}

bool IsContinuation(const std::string& line) {
  // g++ prints the offending source line and the caret line indented, or with " | " gutters.
  return !line.empty() && (line[0] == ' ' || line[0] == '\t');
}

// nvcc's front end writes "path(12): error: ..."; rewritten as "path:12: error: ..." so one
// format reaches the user (and the source excerpt) whichever compiler failed.
std::string NormalizeEdgLocation(const std::string& line) {
  for (const char* marker : {"): error:", "): catastrophic error:"}) {
    size_t close = line.find(marker);
    if (close == std::string::npos) continue;
    size_t open = line.rfind('(', close);
    if (open == std::string::npos || open == 0 || open + 1 == close) continue;
    std::string number = line.substr(open + 1, close - open - 1);
    if (!std::all_of(number.begin(), number.end(), ::isdigit)) continue;
    return line.substr(0, open) + ":" + number +
           ": error:" + line.substr(close + std::string(marker).size());
  }
  return line;
}

}  // namespace

std::string FirstError(const std::string& output) {
  std::vector<std::string> lines = SplitLines(output);
  for (std::string& line : lines) line = NormalizeEdgLocation(line);
  for (const char* severity : {"error:", "fatal error:"}) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!IsLocatedDiagnostic(lines[i], severity)) continue;
      std::string result = lines[i];
      // Include an "In function ..." context line when the compiler printed one just before.
      if (i > 0 && lines[i - 1].find("In function") != std::string::npos) {
        result = lines[i - 1] + "\n" + result;
      }
      for (size_t j = i + 1; j < lines.size() && j < i + 8 && IsContinuation(lines[j]); ++j) {
        result += "\n" + lines[j];
      }
      return result;
    }
  }
  // Linkers name the symbol on the "undefined reference" line and the caller on the line before.
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("undefined reference") == std::string::npos) continue;
    if (i > 0 && lines[i - 1].find("in function") != std::string::npos) {
      return lines[i - 1] + "\n" + lines[i];
    }
    return lines[i];
  }
  for (const std::string& line : lines) {
    if (line.find("ld: ") != std::string::npos) return line;
  }
  size_t start = lines.size() > 40 ? lines.size() - 40 : 0;
  std::string tail;
  for (size_t i = start; i < lines.size(); ++i) tail += (tail.empty() ? "" : "\n") + lines[i];
  return tail;
}

}  // namespace jaxcc::build
