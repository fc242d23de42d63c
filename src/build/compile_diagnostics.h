// Picking the first real error out of compiler and linker output, for a short message.
#pragma once

#include <string>

namespace jaxcc::build {

/// The first `file:line:col: error:` (or `fatal error:`) diagnostic with the source line and caret
/// lines the compiler printed under it; else the first linker error ("undefined reference",
/// "ld: ..."); else the last lines of the output. Never longer than about 40 lines.
std::string FirstError(const std::string& output);

/// "How to fix: ..." for a failure that one of the load options fixes (a missing header or
/// library, an unknown compiler flag, an undefined symbol), for `first_error` as FirstError
/// returns it; "" when there is no such advice.
std::string FixHint(const std::string& first_error);

}  // namespace jaxcc::build
