// Naming rules of the cache layout (see entry_names.h).
#include "cache/entry_names.h"

#include <cctype>
#include <climits>
#include <cstdlib>

namespace jaxcc::cache {
namespace {

bool IsLowerHex(const std::string& text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return !text.empty();
}

bool IsDigits(const std::string& text) {
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return !text.empty();
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

Status ValidateModuleName(const std::string& name, const char* what) {
  bool ok = !name.empty() && name.size() <= kMaxModuleNameChars &&
            (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  }
  if (ok && name.find("..") == std::string::npos) return OkStatus();
  return MakeError(ErrorKind::kSpec,
                   std::string("invalid ") + what + " '" + name +
                       "': it names files and FFI targets, so it must start with a letter or '_' "
                       "and contain only letters, digits, '_', '-' and '.' (at most 128 "
                       "characters). Pick a name such as 'my_kernels'.");
}

std::string ModuleNameFromPath(const std::string& path) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  size_t dot = stem.find_last_of('.');
  if (dot != std::string::npos && dot > 0) stem.resize(dot);
  std::string name;
  for (char c : stem) {
    bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    name += keep ? c : '_';
  }
  if (name.empty()) name = "module";
  // "2024_ops.cc", ".hidden.cc": a name must start with a letter or '_'.
  if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_') name = "_" + name;
  while (name.find("..") != std::string::npos) name.replace(name.find(".."), 2, "._");
  if (name.size() > kMaxModuleNameChars) name.resize(kMaxModuleNameChars);
  return name;
}

std::string EntryDirName(const std::string& name, const std::string& key) {
  return name + "-" + key.substr(0, kEntryKeyChars);
}

std::string LibraryFileName(const std::string& name, const std::string& library_sha256) {
  return name + "." + library_sha256.substr(0, kLibraryHashChars) + ".so";
}

std::optional<std::string> ModuleOfEntryDir(const std::string& dir_name) {
  if (dir_name.size() < kEntryKeyChars + 2) return std::nullopt;
  size_t dash = dir_name.size() - kEntryKeyChars - 1;
  std::string module = dir_name.substr(0, dash);
  if (dir_name[dash] != '-' || !IsLowerHex(dir_name.substr(dash + 1)) ||
      !ValidateModuleName(module, "module name").ok()) {
    return std::nullopt;
  }
  return module;
}

std::string BuildDirName(const std::string& name, pid_t pid, const std::string& host,
                         const std::string& random) {
  return name + "-" + std::to_string(pid) + "@" + host + "-" + random;
}

std::optional<ParsedBuildDir> ParseBuildDirName(const std::string& dir_name) {
  size_t random_dash = dir_name.rfind('-');
  if (random_dash == std::string::npos || random_dash == 0) return std::nullopt;
  size_t pid_dash = dir_name.rfind('-', random_dash - 1);
  if (pid_dash == std::string::npos) return std::nullopt;
  std::string pid_text = dir_name.substr(pid_dash + 1, random_dash - pid_dash - 1);
  std::string host;
  if (size_t at = pid_text.find('@'); at != std::string::npos) {
    host = pid_text.substr(at + 1);
    pid_text.resize(at);
    if (host.empty()) return std::nullopt;
  }
  std::string module = dir_name.substr(0, pid_dash);
  if (!IsDigits(pid_text) || pid_text.size() > 10 ||
      !IsLowerHex(dir_name.substr(random_dash + 1)) ||
      !ValidateModuleName(module, "module name").ok()) {
    return std::nullopt;
  }
  long long pid = std::strtoll(pid_text.c_str(), nullptr, 10);
  if (pid <= 0 || pid > INT_MAX) return std::nullopt;
  return ParsedBuildDir{module, static_cast<pid_t>(pid), host};
}

bool IsTempFileName(const std::string& file_name) {
  // ".tmp-<host>-<pid>-<random>.so" and "manifest.json.tmp-<host>-<pid>-<random>" (older: no host).
  return StartsWith(file_name, ".tmp-") || StartsWith(file_name, "manifest.json.tmp-");
}

}  // namespace jaxcc::cache
