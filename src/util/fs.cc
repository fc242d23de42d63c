// POSIX implementations of the fs.h helpers; every failure names the path and errno's text.
#include "util/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>

#include "util/host_identity.h"

namespace jaxcc {
namespace {

Error IoError(const std::string& what, const std::string& path, int err) {
  return MakeError(ErrorKind::kIo, what + " " + path + ": " + std::strerror(err));
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("cannot write", path, errno);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

// Removes `name` inside the directory `dir_fd`. Works through file descriptors and
// AT_SYMLINK_NOFOLLOW / O_NOFOLLOW, so a symlink is unlinked, never entered, and a directory
// swapped for a symlink mid-walk cannot redirect the removal outside the tree.
Status RemoveAt(int dir_fd, const char* name, const std::string& shown_path) {
  struct stat st;
  if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? OkStatus() : Status(IoError("cannot stat", shown_path, errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dir_fd, name, 0) != 0 && errno != ENOENT) {
      return IoError("cannot remove", shown_path, errno);
    }
    return OkStatus();
  }
  int fd = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return errno == ENOENT ? OkStatus() : Status(IoError("cannot open", shown_path, errno));
  }
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    int saved = errno;
    ::close(fd);
    return IoError("cannot list", shown_path, saved);
  }
  std::vector<std::string> children;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string child = entry->d_name;
    if (child != "." && child != "..") children.push_back(std::move(child));
  }
  Status status = OkStatus();
  for (const std::string& child : children) {
    status = RemoveAt(fd, child.c_str(), shown_path + "/" + child);
    if (!status.ok()) break;
  }
  ::closedir(dir);  // also closes fd
  if (!status.ok()) return status;
  if (::unlinkat(dir_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return IoError("cannot remove", shown_path, errno);
  }
  return OkStatus();
}

}  // namespace

std::int64_t WallClockNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t LastModifiedNs(const FileInfo& info) {
  return info.mtime_ns > WallClockNs() ? info.ctime_ns : info.mtime_ns;
}

bool TimestampSettled(std::int64_t stamp_ns) {
  // Whole seconds (std::time) would read up to a second early and refuse stamps that settled.
  return WallClockNs() - stamp_ns >= 3'000'000'000LL;
}

int RemoveStaleTemporaries(const std::string& dir, std::int64_t max_age_ns,
                           const std::function<bool(const std::string&)>& is_temporary) {
  const std::int64_t now_ns = WallClockNs();
  int removed = 0;
  for (const std::string& name : ListDir(dir)) {
    if (!is_temporary(name)) continue;
    const std::string path = JoinPath(dir, name);
    FileInfo info = StatPath(path);
    if (info.exists && !info.is_dir && now_ns - info.mtime_ns > max_age_ns &&
        ::unlink(path.c_str()) == 0) {
      ++removed;
    }
  }
  return removed;
}

namespace {

FileInfo InfoOf(const struct stat& st) {
  FileInfo info;
  info.exists = true;
  info.is_dir = S_ISDIR(st.st_mode);
  info.size = static_cast<std::int64_t>(st.st_size);
  info.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  info.ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  info.inode = static_cast<std::uint64_t>(st.st_ino);
  info.device = static_cast<std::uint64_t>(st.st_dev);
  info.owner = st.st_uid;
  info.mode = st.st_mode;
  return info;
}

}  // namespace

FileInfo StatPath(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return {};
  return InfoOf(st);
}

FileInfo StatOpenFile(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return {};
  return InfoOf(st);
}

Status ReadFileChunks(const std::string& path,
                      const std::function<void(std::string_view)>& on_chunk) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open", path, errno);
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int saved = errno;
      ::close(fd);
      return IoError("cannot read", path, saved);
    }
    if (n == 0) break;
    on_chunk(std::string_view(buffer, static_cast<size_t>(n)));
  }
  ::close(fd);
  return OkStatus();
}

Result<std::string> ReadFile(const std::string& path) {
  std::string contents;
  JAXCC_RETURN_IF_ERROR(
      ReadFileChunks(path, [&](std::string_view chunk) { contents.append(chunk); }));
  return contents;
}

Status WriteFileAtomic(const std::string& path, std::string_view contents, mode_t mode,
                       Durability durability) {
  std::string temp = path + ".tmp-" + UniqueTempTag();
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return IoError("cannot create", temp, errno);
  Status status = WriteAll(fd, contents, temp);
  // fsync before rename: otherwise a crash can leave the new name pointing at an empty file.
  if (status.ok() && durability == Durability::kSynced && ::fsync(fd) != 0) {
    status = IoError("cannot sync", temp, errno);
  }
  if (::close(fd) != 0 && status.ok()) status = IoError("cannot close", temp, errno);
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = IoError("cannot rename " + temp + " to", path, errno);
  }
  if (!status.ok()) ::unlink(temp.c_str());
  return status;
}

Status WriteFile(const std::string& path, std::string_view contents) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create", path, errno);
  Status status = WriteAll(fd, contents, path);
  if (::close(fd) != 0 && status.ok()) status = IoError("cannot close", path, errno);
  return status;
}

Status MakeDirs(const std::string& path, mode_t mode) {
  if (path.empty()) return OkStatus();
  // Walk the prefixes left to right; mkdir each, accepting ones that already are directories
  // (another process may create them at the same moment).
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    std::string prefix = path.substr(0, pos);
    if (prefix.empty() || prefix.back() == '/') continue;
    if (::mkdir(prefix.c_str(), mode) == 0) continue;
    int err = errno;
    if (err == EEXIST || err == EACCES || err == EROFS) {
      // An existing directory is fine even where we may not create one (e.g. "/home").
      if (StatPath(prefix).is_dir) continue;
      if (err == EEXIST) {
        return MakeError(ErrorKind::kIo, "cannot create directory " + prefix +
                                             ": a file that is not a directory is in the way");
      }
    }
    return IoError("cannot create directory", prefix, err);
  }
  return OkStatus();
}

Status RemoveTree(const std::string& path) {
  // A trailing slash would make the kernel follow a symlink named by the last component.
  size_t end = path.find_last_not_of('/');
  if (path.empty()) return OkStatus();
  if (end == std::string::npos) {
    return MakeError(ErrorKind::kIo, "refusing to remove the root directory");
  }
  std::string trimmed = path.substr(0, end + 1);
  return RemoveAt(AT_FDCWD, trimmed.c_str(), trimmed);
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return names;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

std::string JoinPath(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  // Exactly one separator: "a/" + "/b" is "a/b". An absolute `b` is appended, not substituted,
  // so a stray leading '/' in a name can never escape the directory `a`.
  size_t start = b.find_first_not_of('/');
  if (start == std::string::npos) return a;
  return (a.back() == '/' ? a : a + "/") + b.substr(start);
}

std::string DirName(const std::string& path) {
  size_t end = path.find_last_not_of('/');
  if (end == std::string::npos) return path.empty() ? "." : "/";
  size_t slash = path.rfind('/', end);
  if (slash == std::string::npos) return ".";
  size_t dir_end = path.find_last_not_of('/', slash);
  return dir_end == std::string::npos ? "/" : path.substr(0, dir_end + 1);
}

std::string BaseName(const std::string& path) {
  size_t end = path.find_last_not_of('/');
  if (end == std::string::npos) return path.empty() ? "" : "/";
  size_t slash = path.rfind('/', end);
  size_t start = slash == std::string::npos ? 0 : slash + 1;
  return path.substr(start, end + 1 - start);
}

std::string AbsolutePath(const std::string& path) {
  std::string full = path;
  if (path.empty() || path[0] != '/') {
    char cwd[4096];
    std::string base = ::getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : "/";
    full = base + "/" + path;
  }
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= full.size()) {
    size_t next = full.find('/', pos);
    if (next == std::string::npos) next = full.size();
    std::string part = full.substr(pos, next - pos);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(std::move(part));
    }
    pos = next + 1;
  }
  std::string result;
  for (const std::string& part : parts) result += "/" + part;
  return result.empty() ? "/" : result;
}

Result<std::string> MakeTempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  std::string pattern = JoinPath(base, prefix + "-XXXXXX");
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    return IoError("cannot create a temporary directory", pattern, errno);
  }
  return std::string(buffer.data());
}

std::string RandomHex(int n_chars) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(n_chars > 0 ? static_cast<size_t>(n_chars) : 0);
  // A fresh random_device per call, never a seeded PRNG held in a static: after fork() a copied
  // PRNG state would give parent and child the same "unique" names.
  try {
    std::random_device device;
    while (static_cast<int>(hex.size()) < n_chars) {
      unsigned int bits = device();
      for (int i = 0; i < 8 && static_cast<int>(hex.size()) < n_chars; ++i, bits >>= 4) {
        hex.push_back(kDigits[bits & 0xf]);
      }
    }
    return hex;
  } catch (...) {
    // No entropy source: pid, clock and a counter still make names unique on this machine.
  }
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t mix =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (static_cast<std::uint64_t>(::getpid()) << 32) ^ (++counter * 0x9e3779b97f4a7c15ULL);
  hex.clear();
  while (static_cast<int>(hex.size()) < n_chars) {
    mix ^= mix >> 33;
    mix *= 0xff51afd7ed558ccdULL;
    mix ^= mix >> 33;
    hex.push_back(kDigits[mix & 0xf]);
  }
  return hex;
}

}  // namespace jaxcc
