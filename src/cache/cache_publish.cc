// CacheDir::Publish: library first (temp name, fsync, rename), manifest last, so a reader that
// finds a manifest always finds the library it describes.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>

#include "cache/cache_dir.h"
#include "cache/cache_error.h"
#include "cache/entry_names.h"
#include "util/fault_point.h"
#include "util/fs.h"
#include "util/host_identity.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

// Temp files of a publisher that died; an hour is far beyond any copy, so no live one is hit.
constexpr std::int64_t kStaleTempNs = 3600LL * 1000000000;

Error IoError(const std::string& what, const std::string& path, int err) {
  return MakeError(ErrorKind::kIo, what + " " + path + ": " + std::strerror(err));
}

// Copies `from` to the new file `to` and returns the SHA-256 of the bytes written, computed in
// the same pass so the digest describes exactly what landed on disk.
Result<std::string> CopyAndHash(const std::string& from, const std::string& to) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return IoError("cannot open the built library", from, errno);
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
  if (out < 0) {
    int saved = errno;
    ::close(in);
    return IoError("cannot create", to, saved);
  }
  Sha256Builder hash;
  std::optional<Error> error;
  char buffer[1 << 16];
  while (!error) {
    ssize_t n = ::read(in, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = IoError("cannot read", from, errno);
    if (n <= 0) break;
    hash.Update(std::string_view(buffer, static_cast<size_t>(n)));
    for (ssize_t done = 0; done < n && !error;) {
      ssize_t w = ::write(out, buffer + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) error = IoError("cannot write", to, errno);
      if (w > 0) done += w;
    }
  }
  if (!error && ::fsync(out) != 0) error = IoError("cannot sync", to, errno);
  if (::close(out) != 0 && !error) error = IoError("cannot close", to, errno);
  ::close(in);
  if (error) {
    ::unlink(to.c_str());
    return *error;
  }
  return hash.FinishHex();
}

void RemoveStaleTempFiles(const std::string& dir) {
  (void)RemoveStaleTemporaries(dir, kStaleTempNs, IsTempFileName);
}

}  // namespace

Result<Entry> CacheDir::Publish(const std::string& name, const std::string& key,
                                const std::string& built_library, Manifest manifest) const {
  JAXCC_RETURN_IF_ERROR(ValidateModuleName(name, "module name"));
  if (key.size() < kEntryKeyChars) {
    return MakeError(ErrorKind::kCache, "invalid cache key '" + key + "' (too short)");
  }
  if (!StatPath(built_library).exists) {
    return MakeError(ErrorKind::kIo, "the built library " + built_library + " does not exist");
  }
  Entry entry;
  entry.dir = EntryDir(name, key);
  // The root is private (0700) when jaxcc creates it; entries inside need no further restriction.
  Status made = MakeDirs(root_, 0700);
  if (made.ok()) made = MakeDirs(entry.dir, 0755);
  if (!made.ok()) return CacheWriteError(root_, made.error());
  RemoveStaleTempFiles(entry.dir);

  // Host and pid in the name: on a cache shared over NFS two hosts may run the same pid.
  std::string temp = JoinPath(entry.dir, ".tmp-" + UniqueTempTag() + ".so");
  auto sha = CopyAndHash(built_library, temp);
  if (!sha.ok()) return CacheWriteError(root_, sha.error());
  std::string file_name = LibraryFileName(name, *sha);
  entry.library_path = JoinPath(entry.dir, file_name);
  // Same content already there (e.g. a forced rebuild): keep that file, which live processes may
  // have mapped. Different content under the name (a damaged file): replace it.
  auto existing = Sha256FileHex(entry.library_path);
  if (existing.ok() && *existing == *sha) {
    ::unlink(temp.c_str());
  } else if (::rename(temp.c_str(), entry.library_path.c_str()) != 0) {
    int saved = errno;
    ::unlink(temp.c_str());
    return CacheWriteError(root_,
                           IoError("cannot rename " + temp + " to", entry.library_path, saved));
  }

  // The build's compile database for editors (build::kCompileDatabaseName), when it wrote one:
  // written before the manifest like the library, and never part of what a lookup verifies.
  std::string database = JoinPath(DirName(built_library), "compile_commands.json");
  if (auto text = ReadFile(database); text.ok()) {
    Status copied = WriteFileAtomic(JoinPath(entry.dir, "compile_commands.json"), *text, 0644);
    if (!copied.ok()) return CacheWriteError(root_, copied.error());
  }

  FaultPoint("publish");
  manifest.schema = 1;
  manifest.key = key;
  manifest.module_name = name;
  manifest.library_file = file_name;
  manifest.library_sha256 = *sha;
  // Older library files of this entry stay: a running process may still have them mapped.
  Status written =
      WriteFileAtomic(JoinPath(entry.dir, "manifest.json"), ManifestToJson(manifest), 0644);
  if (!written.ok()) return CacheWriteError(root_, written.error());
  entry.manifest = std::move(manifest);
  return entry;
}

}  // namespace jaxcc::cache
