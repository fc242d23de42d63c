// LinkWithCompiler (linker.h): the one link that proves a linker can build a module here.
#include <string>

#include "toolchain/linker.h"
#include "toolchain/version_memo.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace jaxcc::toolchain {
namespace {

// Needs libstdc++ (an exception type, its destructor, the personality routine): exactly what a
// module's link needs and what the GPU machine's gold failed to find.
constexpr const char kProbeSource[] =
    "#include <stdexcept>\n"
    "extern \"C\" void jaxcc_link_probe(int n) {\n"
    "  if (n < 0) throw std::runtime_error(\"negative\");\n"
    "}\n";

constexpr const char kLinks[] = "links";

// The error lines of a failed link, at most a few, for found_by and the $JAXCC_LINKER error.
std::string Gist(const std::string& output) {
  std::string gist;
  size_t begin = 0;
  int lines = 0;
  while (begin < output.size() && lines < 3) {
    size_t end = output.find('\n', begin);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(begin, end - begin);
    if (line.find("error") != std::string::npos || line.find("undefined") != std::string::npos) {
      gist += (gist.empty() ? "" : " | ") + line;
      ++lines;
    }
    begin = end + 1;
  }
  return gist.empty() ? output.substr(0, 300) : gist;
}

Result<std::string> LinkOnce(const std::string& compiler, const LinkerChoice& linker) {
  auto dir = MakeTempDir("jaxcc-link-probe");
  if (!dir.ok()) return dir.error();
  const std::string source = JoinPath(*dir, "probe.cc");
  std::string outcome;
  if (auto written = WriteFile(source, kProbeSource); !written.ok()) {
    outcome = "could not write the probe: " + written.error().message;
  } else {
    std::vector<std::string> argv{compiler, "-shared", "-fPIC", "-Wl,-z,defs"};
    argv.insert(argv.end(), linker.flags.begin(), linker.flags.end());
    argv.insert(argv.end(), {source, "-o", JoinPath(*dir, "probe.so")});
    ProcessOptions options;
    options.timeout_seconds = 60;
    auto run = RunProcess(argv, options);
    if (!run.ok()) {
      outcome = run.error().message;
    } else if (run->exit_code != 0) {
      outcome = "a C++ library's link failed: " + Gist(run->output);
    } else if (!StatPath(JoinPath(*dir, "probe.so")).exists) {
      outcome = "the link exited 0 but wrote no library";
    } else {
      outcome = kLinks;
    }
  }
  (void)RemoveTree(*dir);
  return outcome;
}

}  // namespace

LinkProbe LinkWithCompiler(const std::string& compiler_path, const std::string& memo_path) {
  return [compiler_path, memo_path](const LinkerChoice& linker,
                                    const std::string& linker_path) -> Result<bool> {
    // Both executables' identities: a new compiler or linker is probed again.
    const std::string identity =
        "link-probe|" + ExecutableIdentity(compiler_path) + "|" + ExecutableIdentity(linker_path);
    std::string outcome;
    if (auto known = LookupVersion(memo_path, identity)) {
      outcome = *known;
    } else {
      auto linked = LinkOnce(compiler_path, linker);
      if (!linked.ok()) return linked.error();  // not remembered: may work next time
      outcome = *linked;
      RememberVersion(memo_path, identity, outcome);
    }
    if (outcome == kLinks) return true;
    return MakeError(ErrorKind::kToolchain, outcome);
  };
}

}  // namespace jaxcc::toolchain
