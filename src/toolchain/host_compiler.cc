#include "toolchain/host_compiler.h"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <sstream>

#include "toolchain/compiler_identity.h"
#include "toolchain/version_memo.h"
#include "util/subprocess.h"

namespace jaxcc::toolchain {
namespace {

std::mutex g_memo_mutex;
std::optional<HostCompiler> g_memo;
std::string g_memo_env;   // CXX and PATH the memo was computed under
std::string g_memo_stat;  // ExecutableIdentity of the compiler when the memo was computed

std::vector<std::string> SplitWords(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value ? value : fallback;
}

// $CXX set to something that is no compiler: an error, never a quiet fall back to another
// compiler, since the user asked for this one (decision 252).
Error CxxNamesNoCompiler(const std::string& value, const std::string& why) {
  return MakeError(ErrorKind::kToolchain,
                   "$CXX=" + value + " names no usable C++ compiler (" + why +
                       "); jaxcc does not fall back to another compiler when CXX is set.\n"
                       "How to fix: unset CXX (jaxcc then takes g++, c++ or clang++ from PATH), "
                       "or point it at a C++17 compiler, e.g. CXX=/usr/bin/g++.");
}

}  // namespace

void ResetHostCompilerMemo() {
  std::lock_guard<std::mutex> lock(g_memo_mutex);
  g_memo.reset();
}

namespace {

Result<HostCompiler> FindCompiler(const std::string& memo_path) {
  std::string env_cxx = EnvOr("CXX", "");
  std::string env_key = env_cxx + '\n' + EnvOr("PATH", "");
  std::lock_guard<std::mutex> lock(g_memo_mutex);
  if (g_memo && g_memo_env == env_key && ExecutableIdentity(g_memo->path) == g_memo_stat) {
    return *g_memo;
  }

  std::vector<std::vector<std::string>> candidates;
  std::vector<std::string> tried;
  if (!env_cxx.empty()) candidates.push_back(SplitWords(env_cxx));
  for (const char* name : {"g++", "c++", "clang++"}) candidates.push_back({name});

  for (size_t i = 0; i < candidates.size(); ++i) {
    std::vector<std::string> command = candidates[i];
    if (command.empty()) continue;
    bool from_env = i == 0 && !env_cxx.empty();
    std::string label = from_env ? "$CXX=" + env_cxx : command.back();
    for (std::string& word : command) {
      std::string resolved = FindExecutable(word);
      if (!resolved.empty()) word = resolved;
    }
    const std::string& compiler = command.back();
    if (FindExecutable(compiler).empty()) {
      if (from_env) return CxxNamesNoCompiler(env_cxx, "not found");
      tried.push_back("  x " + label + ": not found");
      continue;
    }
    auto version = ProbeVersion(compiler, memo_path, FirstLineOf);
    if (!version.ok()) {
      if (from_env) return CxxNamesNoCompiler(env_cxx, version.error().message);
      tried.push_back("  x " + label + ": " + version.error().message);
      continue;
    }
    auto identity = ExecutableDigest(compiler, memo_path);
    if (!identity.ok()) {
      if (from_env) return CxxNamesNoCompiler(env_cxx, identity.error().message);
      tried.push_back("  x " + label + ": " + identity.error().message);
      continue;
    }
    g_memo = HostCompiler{
        command, compiler, *version, *identity, from_env ? label : label + " on PATH", {}};
    g_memo_env = env_key;
    g_memo_stat = ExecutableIdentity(compiler);
    return *g_memo;
  }
  std::string message = "no usable host C++ compiler found. Tried, in order:\n";
  for (const std::string& t : tried) message += t + "\n";
  message +=
      "How to fix: install one (Debian/Ubuntu: apt-get install g++) or point CXX at a C++17 "
      "compiler, e.g. CXX=/usr/bin/g++-12.";
  return MakeError(ErrorKind::kToolchain, message);
}

}  // namespace

Result<HostCompiler> FindHostCompiler(const std::string& memo_path) {
  auto compiler = FindCompiler(memo_path);
  if (!compiler.ok()) return compiler;
  auto linker = ChooseLinker(memo_path, LinkWithCompiler(compiler->path, memo_path));
  if (!linker.ok()) return linker.error();
  compiler->linker = *linker;
  return compiler;
}

bool IsClangVersion(const std::string& version) {
  return version.find("clang version ") != std::string::npos;
}

}  // namespace jaxcc::toolchain
