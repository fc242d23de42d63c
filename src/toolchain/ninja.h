// Finding the ninja executable: $JAXCC_NINJA, the directories the caller suggests (the `ninja`
// PyPI package's bin dir), then PATH.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::toolchain {

Result<std::string> FindNinja(const std::vector<std::string>& extra_dirs);

}  // namespace jaxcc::toolchain
