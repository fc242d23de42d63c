// Keeping error messages readable when a source line is megabytes long.
#pragma once

#include <cstddef>
#include <string>

namespace jaxcc {

/// `text` with its over-long lines cut, so a generated or minified source line cannot make an
/// error message megabytes long (the full text stays in the build log).
///
/// A quoted source line followed by its caret line (blanks, an optional compiler gutter such as
/// "    3 | ", then `^` and `~`) keeps `window` bytes around the caret in both lines, with "..."
/// where text was cut, so the caret still points at the same character. Any other line longer
/// than `max_line` bytes is cut there with "... (N bytes)" appended. Cuts never split a UTF-8
/// character. Text without long lines is returned unchanged.
std::string ClipLongLines(const std::string& text, size_t window = 200, size_t max_line = 2000);

}  // namespace jaxcc
