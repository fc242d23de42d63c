#include "build/link_trace.h"

#include <algorithm>

namespace jaxcc::build {
namespace {

bool IsSharedLibrary(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t so = name.find(".so");
  return so != std::string::npos && (so + 3 == name.size() || name[so + 3] == '.');
}

}  // namespace

std::string LinkTraceFile(const std::string& output) { return output + ".inputs"; }

std::vector<std::string> ParseLinkTrace(const std::string& text) {
  std::vector<std::string> files;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line.find(": ") != std::string::npos) continue;
    if (line[0] == '(') {
      const size_t close = line.find(')');  // "(archive)member", older GNU ld
      if (close == std::string::npos) continue;
      line = line.substr(1, close - 1);
    } else if (line.back() == ')') {
      const size_t open = line.rfind('(');  // "archive(member)", gold, lld, mold
      if (open == std::string::npos || open == 0) continue;
      line.resize(open);
    }
    if (IsSharedLibrary(line)) continue;
    if (std::find(files.begin(), files.end(), line) == files.end()) files.push_back(line);
  }
  return files;
}

}  // namespace jaxcc::build
