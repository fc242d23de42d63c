#include "toolchain/linker.h"

#include <cstdlib>
#include <mutex>
#include <optional>

#include "toolchain/version_memo.h"
#include "util/subprocess.h"

namespace jaxcc::toolchain {
namespace {

// Fastest first for a module-sized link (measured, decision 161a). gold is deprecated upstream
// (binutils 2.44) and may be missing on newer systems, hence the others after it.
constexpr const char* kAutoOrder[] = {"gold", "lld", "mold"};

std::mutex g_memo_mutex;
std::optional<LinkerChoice> g_memo;
std::string g_memo_env;

std::string EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value ? value : fallback;
}

LinkerChoice SystemLinker(const std::string& found_by) { return {{}, "system", "", found_by}; }

// The linker `name` if `ld.<name>` is on PATH, runs and links; the reason otherwise.
Result<LinkerChoice> TryLinker(const std::string& name, const std::string& memo_path,
                               const LinkProbe& probe) {
  const std::string program = "ld." + name;
  const std::string path = FindExecutable(program);
  if (path.empty()) return MakeError(ErrorKind::kToolchain, program + " is not on PATH");
  auto version = ProbeVersion(path, memo_path, FirstLineOf);
  if (!version.ok()) return version.error();
  LinkerChoice choice{{"-fuse-ld=" + name}, name, *version, program + " on PATH"};
  auto links = probe(choice, path);
  if (!links.ok()) return links.error();
  return choice;
}

}  // namespace

void ResetLinkerMemo() {
  std::lock_guard<std::mutex> lock(g_memo_mutex);
  g_memo.reset();
}

Result<LinkerChoice> ChooseLinker(const std::string& memo_path, const LinkProbe& probe) {
  const std::string wanted = EnvOr("JAXCC_LINKER", "");
  // $CXX too: the probe links with the compiler it names, and a linker may work with one
  // compiler and not another.
  const std::string env_key = wanted + '\n' + EnvOr("PATH", "") + '\n' + EnvOr("CXX", "");
  std::lock_guard<std::mutex> lock(g_memo_mutex);
  if (g_memo && g_memo_env == env_key) return *g_memo;

  Result<LinkerChoice> choice = SystemLinker("no gold, lld or mold on PATH");
  if (wanted == "system") {
    choice = SystemLinker("$JAXCC_LINKER=system");
  } else if (wanted.empty() || wanted == "auto") {
    std::string passed_over;  // installed linkers that could not link here, and why
    for (const char* name : kAutoOrder) {
      if (FindExecutable(std::string("ld.") + name).empty()) continue;
      auto found = TryLinker(name, memo_path, probe);
      if (found.ok()) {
        choice = std::move(found);
        break;
      }
      passed_over +=
          std::string(passed_over.empty() ? "" : "; ") + name + ": " + found.error().message;
    }
    if (choice->name == "system" && !passed_over.empty()) {
      choice->found_by = "the compiler's own (passed over: " + passed_over + ")";
    }
  } else if (wanted == "gold" || wanted == "lld" || wanted == "mold") {
    auto found = TryLinker(wanted, memo_path, probe);
    if (!found.ok()) {
      return MakeError(ErrorKind::kToolchain,
                       "$JAXCC_LINKER=" + wanted + " but " + found.error().message +
                           ". Install it (Debian/Ubuntu: apt-get install " +
                           (wanted == "gold" ? std::string("binutils") : wanted) +
                           "), or unset JAXCC_LINKER to let jaxcc pick one");
    }
    choice = std::move(found);
    choice->found_by = "$JAXCC_LINKER=" + wanted;
  } else {
    return MakeError(ErrorKind::kToolchain,
                     "$JAXCC_LINKER=" + wanted +
                         " is not a linker jaxcc knows; use auto, system, gold, lld or mold");
  }
  g_memo = *choice;
  g_memo_env = env_key;
  return choice;
}

}  // namespace jaxcc::toolchain
