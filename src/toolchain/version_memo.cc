#include "toolchain/version_memo.h"

#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/subprocess.h"

namespace jaxcc::toolchain {

std::string ExecutableIdentity(const std::string& path) {
  FileInfo info = StatPath(path);
  if (!info.exists) return "";
  return path + "|" + std::to_string(info.size) + "|" + std::to_string(info.mtime_ns) + "|" +
         std::to_string(info.ctime_ns) + "|" + std::to_string(info.inode);
}

namespace {
nlohmann::json ReadMemo(const std::string& memo_path) {
  auto text = ReadFile(memo_path);
  if (!text.ok()) return nlohmann::json::object();
  nlohmann::json memo = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return memo.is_object() ? memo : nlohmann::json::object();
}
}  // namespace

std::optional<std::string> LookupVersion(const std::string& memo_path,
                                         const std::string& identity) {
  if (memo_path.empty() || identity.empty()) return std::nullopt;
  nlohmann::json memo = ReadMemo(memo_path);
  auto it = memo.find(identity);
  if (it == memo.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

void RememberVersion(const std::string& memo_path, const std::string& identity,
                     const std::string& version) {
  if (memo_path.empty() || identity.empty()) return;
  nlohmann::json memo = ReadMemo(memo_path);
  memo[identity] = version;
  if (!MakeDirs(DirName(memo_path), 0700).ok()) return;
  (void)WriteFileAtomic(memo_path, memo.dump(1), 0600);
}

Result<std::string> FirstLineOf(const std::string& output) {
  return output.substr(0, output.find('\n'));
}

Result<std::string> ProbeVersion(const std::string& path, const std::string& memo_path,
                                 const VersionLinePicker& pick) {
  std::string identity = ExecutableIdentity(path);
  if (auto known = LookupVersion(memo_path, identity)) return *known;
  ProcessOptions options;
  options.timeout_seconds = 30;
  auto run = RunProcess({path, "--version"}, options);
  if (!run.ok() || run->exit_code != 0) {
    return MakeError(
        ErrorKind::kToolchain,
        "'" + path + " --version' failed" +
            (run.ok() ? " (exit " + std::to_string(run->exit_code) + "):\n" + run->output
                      : ": " + run.error().message));
  }
  auto line = pick(run->output);
  if (!line.ok()) return line.error();
  RememberVersion(memo_path, identity, *line);
  return *line;
}

}  // namespace jaxcc::toolchain
