#include "cache/ownership.h"

#include <unistd.h>

#include <cstdio>

#include "util/fs.h"

namespace jaxcc::cache {

Status CheckPrivatePath(const std::string& path, const std::string& what, const std::string& fix) {
  FileInfo info = StatPath(path);
  if (!info.exists) return OkStatus();
  if (info.owner != ::geteuid()) {
    return MakeError(ErrorKind::kCache,
                     "refusing to use " + what + " " + path + ": it belongs to uid " +
                         std::to_string(info.owner) + ", not to this user (uid " +
                         std::to_string(::geteuid()) +
                         "), and code from it would run in this process. " + fix);
  }
  if ((info.mode & 022) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.mode & 07777));
    return MakeError(ErrorKind::kCache,
                     "refusing to use " + what + " " + path + ": its mode " + mode +
                         " lets other users write to it, so they could plant code this process "
                         "would load. " +
                         fix + " (or: chmod go-w " + path + ")");
  }
  return OkStatus();
}

}  // namespace jaxcc::cache
