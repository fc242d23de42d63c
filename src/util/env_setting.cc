#include "util/env_setting.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace jaxcc {

Result<bool> OnOffSetting(const char* variable, const char* on_meaning, const char* off_meaning) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0' || std::strcmp(text, "1") == 0) return true;
  if (std::strcmp(text, "0") == 0) return false;
  return MakeError(ErrorKind::kSpec, std::string(variable) + "=" + text +
                                         " is not a setting; use 1 (" + on_meaning +
                                         ", the default) or 0 (" + off_meaning + ")");
}

}  // namespace jaxcc
