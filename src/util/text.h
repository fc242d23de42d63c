// Small text helpers shared by the stages that read compiler output and sources.
#pragma once

#include <string>
#include <vector>

namespace jaxcc {

/// Lines of `text` without their '\n'; a final line without '\n' is kept.
std::vector<std::string> SplitLines(const std::string& text);

/// `text` without leading and trailing whitespace.
std::string Trim(const std::string& text);

}  // namespace jaxcc
