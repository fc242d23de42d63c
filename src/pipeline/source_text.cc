#include "pipeline/source_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "util/text.h"

namespace jaxcc::pipeline {
namespace {

Error Unreadable(const std::string& path, int error) {
  return MakeError(ErrorKind::kSpec, "cannot read " + path + ": " + std::strerror(error) +
                                         "; pass the path of a readable source file");
}

std::string Where(std::string_view text, size_t offset) {
  LineColumn at = LineColumnAt(text, offset);
  return "line " + std::to_string(at.line) + ", column " + std::to_string(at.column);
}

}  // namespace

Result<signature::SourceFile> ReadSourceFile(const std::string& path) {
  // open(2) would stop at the NUL and read another file than the one named.
  if (path.find('\0') != std::string::npos) {
    return MakeError(ErrorKind::kSpec, "the source path " + EscapeForMessage(path, 200) +
                                           " contains a NUL character; pass the file's path");
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Unreadable(path, errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0 || S_ISDIR(info.st_mode)) {
    int error = S_ISDIR(info.st_mode) ? EISDIR : errno;
    ::close(fd);
    return Unreadable(path, error);
  }
  // One read of the size fstat gives, then on until end of file: a file that grows meanwhile is
  // read whole, one that shrinks ends early, as any reader would see it.
  std::string text(static_cast<size_t>(info.st_size > 0 ? info.st_size : 0), '\0');
  size_t filled = 0;
  while (true) {
    if (filled == text.size()) text.resize(text.size() + 4096);
    ssize_t n = ::read(fd, text.data() + filled, text.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      return Unreadable(path, error);
    }
    if (n == 0) break;
    filled += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(filled);
  size_t bad = FindInvalidUtf8(text);
  if (bad != std::string_view::npos) {
    char byte[8];
    std::snprintf(byte, sizeof(byte), "0x%02x", static_cast<unsigned char>(text[bad]));
    return MakeError(ErrorKind::kSpec, path + " is not valid UTF-8 (byte " + byte + " at " +
                                           Where(text, bad) +
                                           " starts no UTF-8 character); save it as UTF-8");
  }
  return signature::SourceFile{path, std::move(text)};
}

Status ValidateSources(const std::vector<signature::SourceFile>& sources) {
  bool all_blank = true;
  for (const signature::SourceFile& source : sources) {
    size_t nul = source.text.find('\0');
    if (nul != std::string::npos) {
      return MakeError(ErrorKind::kSpec,
                       "source " + source.label + " contains a NUL character at " +
                           Where(source.text, nul) +
                           "; C++ sources are text (a binary file or a bad concatenation?): "
                           "remove the NUL");
    }
    if (all_blank && source.text.find_first_not_of(" \t\n\r\f\v") != std::string::npos) {
      all_blank = false;
    }
  }
  if (all_blank) {
    return MakeError(ErrorKind::kSpec,
                     "the C++ source is empty; pass the source text that defines the functions "
                     "to export");
  }
  return OkStatus();
}

}  // namespace jaxcc::pipeline
