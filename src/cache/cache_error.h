// The one message for "the cache directory cannot be written", shared by the CacheDir files.
#pragma once

#include <string>

#include "util/result.h"

namespace jaxcc::cache {

/// Turns a filesystem failure under the cache root into ErrorKind::kCache with the fix.
inline Error CacheWriteError(const std::string& root, const Error& cause) {
  return MakeError(ErrorKind::kCache,
                   "cannot write to the jaxcc cache directory " + root + ": " + cause.message +
                       ". Check its permissions and free disk space, or set a different cache "
                       "directory (jaxcc.set_cache_dir or $JAXCC_CACHE_DIR).");
}

}  // namespace jaxcc::cache
