#include "toolchain/native_target.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

#include "util/fs.h"
#include "util/subprocess.h"

namespace jaxcc::toolchain {
namespace {

bool IsNativeOption(const std::string& text) {
  for (const char* option : {"-march=native", "-mcpu=native", "-mtune=native"}) {
    if (text == option) return true;
  }
  return false;
}

// The words of one line of `-###` output: double-quoted or bare, as the drivers print them.
std::vector<std::string> SplitDriverLine(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false, in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '\\' && i + 1 < line.size()) {
      word += line[++i];
    } else if (c == '"') {
      quoted = !quoted;
      in_word = true;
    } else if (!quoted && (c == ' ' || c == '\t')) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace

std::vector<std::string> NativeTargetFlags(const std::vector<std::string>& flags) {
  std::vector<std::string> native;
  for (const std::string& flag : flags) {
    if (flag.find("native") == std::string::npos) continue;
    // "-Xcompiler=-march=native,-O3" and "-Xcompiler" "-march=native": the comma-separated parts.
    std::string list = flag;
    for (const char* prefix : {"-Xcompiler=", "--compiler-options=", "-Xcompiler", "-Wp,"}) {
      if (list.rfind(prefix, 0) == 0) list = list.substr(std::string(prefix).size());
    }
    for (size_t start = 0; start <= list.size();) {
      size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      const std::string part = list.substr(start, end - start);
      if (IsNativeOption(part) && std::find(native.begin(), native.end(), part) == native.end()) {
        native.push_back(part);
      }
      start = end + 1;
    }
  }
  return native;
}

std::string NativeTargetOfDriverOutput(const std::string& output) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> words = SplitDriverLine(line);
    const bool gcc = !words.empty() && words[0].find("cc1") != std::string::npos;
    const bool clang = std::find(words.begin(), words.end(), "-cc1") != words.end();
    if (!gcc && !clang) continue;
    std::string target;
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string& w = words[i];
      const bool takes_next = w == "-target-cpu" || w == "-target-feature" || w == "-tune-cpu" ||
                              (gcc && w == "--param");
      if (takes_next && i + 1 < words.size()) {
        target += (target.empty() ? "" : " ") + w + " " + words[++i];
      } else if (gcc && w.rfind("-m", 0) == 0) {
        target += (target.empty() ? "" : " ") + w;
      }
    }
    return target;
  }
  return "";
}

Result<std::string> ResolveNativeTarget(const std::string& compiler,
                                        const std::vector<std::string>& native_flags) {
  static std::mutex mutex;
  static std::map<std::string, std::string> resolved;
  std::string memo_key = compiler;
  for (const std::string& flag : native_flags) memo_key += "\n" + flag;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = resolved.find(memo_key);
    if (it != resolved.end()) return it->second;
  }
  std::vector<std::string> argv = {compiler, "-###", "-E", "-x", "c++"};
  argv.insert(argv.end(), native_flags.begin(), native_flags.end());
  argv.push_back("/dev/null");
  ProcessOptions options;
  options.timeout_seconds = 30;
  options.environment = {"LC_ALL=C"};
  auto run = RunProcess(argv, options);
  std::string target =
      run.ok() && run->exit_code == 0 ? NativeTargetOfDriverOutput(run->output) : "";
  if (target.empty()) {
    return MakeError(ErrorKind::kToolchain,
                     native_flags.front() + ": " + compiler +
                         " did not say which target it chose on this CPU (`" + ShellJoin(argv) +
                         "`), so the cache cannot key the build by it. Name the target instead, "
                         "e.g. -march=x86-64-v3.");
  }
  std::lock_guard<std::mutex> lock(mutex);
  resolved[memo_key] = target;
  return target;
}

std::vector<std::string> EnabledFeatures(const std::string& resolved_target) {
  // GCC's and LLVM's names where /proc/cpuinfo spells the same feature otherwise.
  static const std::map<std::string, std::string> kCpuinfoName = {{"sse3", "pni"},
                                                                  {"sse4.1", "sse4_1"},
                                                                  {"sse4.2", "sse4_2"},
                                                                  {"lzcnt", "abm"},
                                                                  {"pclmul", "pclmulqdq"},
                                                                  {"crc32", "sse4_2"},
                                                                  {"prfchw", "3dnowprefetch"},
                                                                  {"sahf", "lahf_lm"},
                                                                  {"rdrnd", "rdrand"},
                                                                  {"sha", "sha_ni"},
                                                                  {"bmi", "bmi1"}};
  std::vector<std::string> features;
  std::istringstream words(resolved_target);
  std::string previous;
  for (std::string w; words >> w; previous = w) {
    std::string name;
    if (previous == "-target-feature" && w.size() > 1 && w[0] == '+') {
      name = w.substr(1);
    } else if (w.rfind("-m", 0) == 0 && w.rfind("-mno-", 0) != 0 &&
               w.find('=') == std::string::npos) {
      name = w.substr(2);
    }
    if (name.empty()) continue;
    auto mapped = kCpuinfoName.find(name);
    if (mapped != kCpuinfoName.end()) name = mapped->second;
    if (std::find(features.begin(), features.end(), name) == features.end()) {
      features.push_back(name);
    }
  }
  return features;
}

namespace {

struct CpuInfo {
  std::string signature;
  std::vector<std::string> features;
};

const CpuInfo& ReadCpuInfo() {
  static const CpuInfo info = [] {
    CpuInfo read;
    auto text = ReadFile("/proc/cpuinfo");
    if (!text.ok()) return read;
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) break;  // the first processor only
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string field = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
      const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
      for (const char* kept : {"vendor_id", "cpu family", "model", "model name", "flags",
                               "CPU implementer", "CPU part", "CPU variant", "Features"}) {
        if (field == kept) read.signature += field + "=" + value + "\n";
      }
      if (field == "flags" || field == "Features") {
        std::istringstream words(value);
        for (std::string w; words >> w;) read.features.push_back(w);
      }
    }
    return read;
  }();
  return info;
}

}  // namespace

const std::string& HostCpuSignature() { return ReadCpuInfo().signature; }

const std::vector<std::string>& HostCpuFeatures() { return ReadCpuInfo().features; }

}  // namespace jaxcc::toolchain
