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

/// Offset of the first byte of `text` that does not belong to well-formed UTF-8 (a stray
/// continuation byte, a truncated sequence, an overlong form, a surrogate, a value past
/// U+10FFFF), or std::string_view::npos when all of it does. Runs of ASCII are skipped eight bytes
/// at a time: source files are mostly ASCII, and this runs on every load of a file.
size_t FindInvalidUtf8(std::string_view text);

/// 1-based line and column (in bytes) of `offset` in `text`, for messages that point into a file.
struct LineColumn {
  size_t line = 1;
  size_t column = 1;
};
LineColumn LineColumnAt(std::string_view text, size_t offset);

}  // namespace jaxcc
