#include "toolchain/compiler_identity.h"

#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "toolchain/version_memo.h"
#include "util/fs.h"
#include "util/sha256.h"
#include "util/subprocess.h"

namespace jaxcc::toolchain {
namespace {

std::mutex g_mutex;
std::map<std::string, std::string> g_known;  // "<kind>|<identity>" -> value, this process

std::optional<std::string> Known(const std::string& key, const std::string& memo_path) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_known.find(key);
    if (it != g_known.end()) return it->second;
  }
  auto remembered = LookupVersion(memo_path, key);
  if (remembered) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_known[key] = *remembered;
  }
  return remembered;
}

void Remember(const std::string& key, const std::string& memo_path, const std::string& value) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_known[key] = value;
  }
  RememberVersion(memo_path, key, value);
}

void AddDir(std::vector<std::string>& dirs, const std::string& given) {
  if (given.empty() || given[0] != '/') return;
  const std::string dir = AbsolutePath(given);
  const FileInfo info = StatPath(dir);
  if (!info.exists || !info.is_dir) return;
  for (const std::string& known : dirs) {
    if (known == dir) return;
  }
  dirs.push_back(dir);
}

}  // namespace

Result<std::string> ExecutableDigest(const std::string& path, const std::string& memo_path) {
  const std::string identity = ExecutableIdentity(path);
  if (identity.empty()) {
    return MakeError(ErrorKind::kToolchain, "the compiler " + path + " cannot be stat'ed");
  }
  const std::string key = "sha256|" + identity;
  if (auto known = Known(key, memo_path)) return *known;
  auto digest = Sha256FileHex(path);
  if (!digest.ok()) {
    return MakeError(ErrorKind::kToolchain,
                     "the compiler " + path + " cannot be read to key the cache by its content: " +
                         digest.error().message +
                         ". Make it readable (chmod a+r) or point CXX at a readable compiler.");
  }
  std::string value = "sha256:" + *digest;
  // Only a stamp that cannot change again unseen within its timestamp tick is remembered.
  if (ExecutableIdentity(path) == identity) Remember(key, memo_path, value);
  return value;
}

std::vector<std::string> ParseBuiltinSearchDirs(const std::string& verbose_preprocess,
                                                const std::string& search_dirs) {
  std::vector<std::string> dirs;
  std::istringstream lines(verbose_preprocess);
  bool in_list = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#include <...> search starts here:", 0) == 0) {
      in_list = true;
    } else if (line.rfind("End of search list.", 0) == 0) {
      in_list = false;
    } else if (in_list && !line.empty() && line[0] == ' ') {
      std::string dir = line.substr(1);
      // Clang marks framework directories: "/path (framework directory)".
      if (size_t mark = dir.find(" ("); mark != std::string::npos) dir.resize(mark);
      AddDir(dirs, dir);
    }
  }
  std::istringstream search(search_dirs);
  for (std::string line; std::getline(search, line);) {
    if (line.rfind("libraries: =", 0) != 0) continue;
    std::string list = line.substr(12);
    for (size_t start = 0; start <= list.size();) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      AddDir(dirs, list.substr(start, end - start));
      start = end + 1;
    }
  }
  return dirs;
}

std::vector<std::string> BuiltinSearchDirs(const std::string& compiler,
                                           const std::string& memo_path) {
  const std::string identity = ExecutableIdentity(compiler);
  if (identity.empty()) return {};
  const std::string key = "search-dirs|" + identity;
  std::string joined;
  if (auto known = Known(key, memo_path)) {
    joined = *known;
  } else {
    ProcessOptions options;
    options.timeout_seconds = 30;
    // Set but empty: GCC and Clang then add nothing (an empty element would mean ".").
    options.environment = {"CPATH=",
                           "C_INCLUDE_PATH=",
                           "CPLUS_INCLUDE_PATH=",
                           "OBJC_INCLUDE_PATH=",
                           "OBJCPLUS_INCLUDE_PATH=",
                           "LIBRARY_PATH=",
                           "LC_ALL=C"};
    auto verbose = RunProcess({compiler, "-x", "c++", "-E", "-v", "/dev/null"}, options);
    auto search = RunProcess({compiler, "-print-search-dirs"}, options);
    if (!verbose.ok() || !search.ok() || verbose->exit_code != 0 || search->exit_code != 0) {
      return {};
    }
    for (const std::string& dir : ParseBuiltinSearchDirs(verbose->output, search->output)) {
      joined += dir + "\n";
    }
    Remember(key, memo_path, joined);
  }
  std::vector<std::string> dirs;
  std::istringstream in(joined);
  for (std::string dir; std::getline(in, dir);) {
    if (!dir.empty()) dirs.push_back(dir);
  }
  return dirs;
}

}  // namespace jaxcc::toolchain
