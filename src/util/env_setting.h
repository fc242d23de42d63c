// On/off settings read from the environment (JAXCC_LAZY_LOAD, JAXCC_DEFER_SOURCES, ...): one rule
// for what counts as on, off and wrong, and one wording of the error.
#pragma once

#include "util/result.h"

namespace jaxcc {

/// $`variable`: true when unset, empty or "1", false for "0"; any other value is a kSpec error
/// "<variable>=<value> is not a setting; use 1 (<on_meaning>, the default) or 0 (<off_meaning>)".
Result<bool> OnOffSetting(const char* variable, const char* on_meaning, const char* off_meaning);

}  // namespace jaxcc
