// Small text helpers shared by the stages that read compiler output and sources.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace jaxcc {

/// Lines of `text` without their '\n'; a final line without '\n' is kept.
std::vector<std::string> SplitLines(const std::string& text);

/// `text` without leading and trailing whitespace.
std::string Trim(const std::string& text);

/// `text` made safe to quote in an error message: control bytes become `\xNN` (a NUL or a newline
/// inside a name would otherwise be invisible or break the message's layout), and text longer
/// than `max_bytes` is cut at a UTF-8 character boundary with "... (N bytes)" appended, so a
/// megabyte-long token cannot make a megabyte-long message.
std::string EscapeForMessage(std::string_view text, size_t max_bytes = 80);

}  // namespace jaxcc
