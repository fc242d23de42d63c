#include "build/ninja_log.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace jaxcc::build {
namespace {

bool ParseMilliseconds(const std::string& field, double* seconds) {
  if (field.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long ms = std::strtoll(field.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || ms < 0) return false;
  *seconds = static_cast<double>(ms) / 1000.0;
  return true;
}

}  // namespace

std::vector<BuildStep> ParseNinjaLogSince(const std::string& log_text, size_t from_offset) {
  std::vector<BuildStep> steps;
  if (from_offset >= log_text.size()) return steps;
  std::istringstream lines(log_text.substr(from_offset));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;  // the "# ninja log vN" header
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
    BuildStep step;
    if (fields.size() < 4 || fields[3].empty() ||
        !ParseMilliseconds(fields[0], &step.start_seconds) ||
        !ParseMilliseconds(fields[1], &step.end_seconds) || step.end_seconds < step.start_seconds) {
      continue;
    }
    step.output = fields[3];
    steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace jaxcc::build
