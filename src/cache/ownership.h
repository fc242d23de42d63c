// Trust checks: a directory or library that another user owns, or that others can write, could
// hand this process code to run, so the cache refuses it.
#pragma once

#include <string>

#include "util/result.h"

namespace jaxcc::cache {

/// OK when `path` does not exist or belongs to this process's effective user and is writable by
/// nobody else; otherwise ErrorKind::kCache naming the path, the owner or mode, and `fix`.
Status CheckPrivatePath(const std::string& path, const std::string& what, const std::string& fix);

}  // namespace jaxcc::cache
