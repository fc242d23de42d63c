// The C++ keyword list: names that can be neither exported functions nor attributes.
#pragma once

#include <string_view>

namespace jaxcc::argspec {

/// True for C++20 keywords and alternative operator tokens (`and`, `not_eq`, ...). Names such
/// as `final` or `override` are identifiers with a special meaning, not keywords, so false.
bool IsCppKeyword(std::string_view word);

}  // namespace jaxcc::argspec
