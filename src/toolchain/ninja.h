// Finding the ninja executable: $JAXCC_NINJA, the directories the caller suggests (the `ninja`
// PyPI package's bin dir), then PATH.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::toolchain {

Result<std::string> FindNinja(const std::vector<std::string>& extra_dirs);

/// Where the `ninja` PyPI wheel may keep its binary: <entry>/ninja/data/bin for every entry of
/// `python_path` (sys.path, made absolute, empty entries skipped) in import order, then the
/// directory of `python_executable`. The first that holds the wheel is the one
/// importlib.util.find_spec("ninja") would pick; only strings are made, nothing is read.
std::vector<std::string> NinjaWheelDirs(const std::vector<std::string>& python_path,
                                        const std::string& python_executable);

}  // namespace jaxcc::toolchain
