#include "pipeline/source_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cache/lock_mode.h"
#include "util/env_setting.h"
#include "util/fs.h"
#include "util/text.h"

namespace jaxcc::pipeline {
namespace {

Error Unreadable(const std::string& path, int error) {
  return MakeError(ErrorKind::kSpec, "cannot read " + path + ": " + std::strerror(error) +
                                         "; pass the path of a readable source file");
}

Error NulInPath(const std::string& path) {
  return MakeError(ErrorKind::kSpec, "the source path " + EscapeForMessage(path, 200) +
                                         " contains a NUL character; pass the file's path");
}

std::string Where(std::string_view text, size_t offset) {
  LineColumn at = LineColumnAt(text, offset);
  return "line " + std::to_string(at.line) + ", column " + std::to_string(at.column);
}

// The text of the file at `path`, and its status once read (`after`): one read of the size fstat
// gives, then on until end of file, so a file that grows meanwhile is read whole and one that
// shrinks ends early, as any reader would see it.
Result<std::string> ReadText(const std::string& path, FileInfo* after) {
  // open(2) would stop at the NUL and read another file than the one named.
  if (path.find('\0') != std::string::npos) return NulInPath(path);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Unreadable(path, errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0 || S_ISDIR(info.st_mode)) {
    int error = S_ISDIR(info.st_mode) ? EISDIR : errno;
    ::close(fd);
    return Unreadable(path, error);
  }
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
  if (after != nullptr) *after = StatOpenFile(fd);
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
  return text;
}

}  // namespace

Result<signature::SourceFile> ReadSourceFile(const std::string& path) {
  auto text = ReadText(path, nullptr);
  if (!text.ok()) return text.error();
  return signature::SourceFile{path, std::move(*text)};
}

Result<bool> DeferSourcesSetting() {
  return OnOffSetting("JAXCC_DEFER_SOURCES", "a settled source file is known by its stamp",
                      "read every source file at every load");
}

Result<SourceInput> OpenSourceFile(const std::string& path) {
  if (path.find('\0') != std::string::npos) return NulInPath(path);
  auto defer = DeferSourcesSetting();
  if (!defer.ok()) return defer.error();
  FileInfo info = *defer ? StatPath(path) : FileInfo{};
  // Only a regular file's stamp moves with its bytes (a FIFO's or a device's does not), and only
  // a local file system's stat is current: an NFS client may answer from attributes it cached
  // before another host wrote the file, while open(2) and read(2) see the new bytes.
  if (info.exists && S_ISREG(info.mode) && TimestampSettled(info.mtime_ns) &&
      TimestampSettled(info.ctime_ns) && cache::FilesystemKind(path) == "local") {
    return SourceInput(DeferredSource{path, cache::StampOf(info)});
  }
  auto source = ReadSourceFile(path);
  if (!source.ok()) return source.error();
  return SourceInput(std::move(*source));
}

void SetSources(LoadRequest& request, std::vector<SourceInput> inputs) {
  request.sources.clear();
  request.source_stamps.clear();
  bool deferred = false;
  for (const SourceInput& input : inputs) deferred |= std::holds_alternative<DeferredSource>(input);
  for (SourceInput& input : inputs) {
    if (auto* file = std::get_if<DeferredSource>(&input)) {
      request.sources.push_back({std::move(file->path), ""});
      request.source_stamps.push_back(file->stamp);
    } else {
      request.sources.push_back(std::move(std::get<signature::SourceFile>(input)));
      if (deferred) request.source_stamps.push_back({});
    }
  }
}

std::vector<SourceInput> SourceInputs(const LoadRequest& request) {
  std::vector<SourceInput> inputs;
  for (size_t i = 0; i < request.sources.size(); ++i) {
    if (IsDeferredSource(request.source_stamps, i)) {
      inputs.emplace_back(DeferredSource{request.sources[i].label, request.source_stamps[i]});
    } else {
      inputs.emplace_back(request.sources[i]);
    }
  }
  return inputs;
}

bool HasDeferredSources(const LoadRequest& request) {
  for (const cache::LibraryStamp& stamp : request.source_stamps) {
    if (stamp.known) return true;
  }
  return false;
}

Result<bool> ReadDeferredSources(LoadRequest& request) {
  bool unchanged = true;
  for (size_t i = 0; i < request.source_stamps.size(); ++i) {
    if (!request.source_stamps[i].known) continue;
    FileInfo after;
    auto text = ReadText(request.sources[i].label, &after);
    if (!text.ok()) return text.error();
    request.sources[i].text = std::move(*text);
    if (!(cache::StampOf(after) == request.source_stamps[i])) unchanged = false;
  }
  request.source_stamps.clear();
  JAXCC_RETURN_IF_ERROR(ValidateSources(request.sources));
  return unchanged;
}

Status ValidateSources(const std::vector<signature::SourceFile>& sources,
                       const std::vector<cache::LibraryStamp>& deferred_stamps) {
  bool all_blank = true;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (IsDeferredSource(deferred_stamps, i)) {
      all_blank = false;  // unknown until read; ReadDeferredSources checks again
      continue;
    }
    const signature::SourceFile& source = sources[i];
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
