// Finding the host C++ compiler and its version, once per process (and memoised across processes).
#pragma once

#include <string>
#include <vector>

#include "toolchain/linker.h"
#include "util/result.h"

namespace jaxcc::toolchain {

struct HostCompiler {
  /// Command prefix: a launcher such as ccache (from CXX="ccache g++") followed by the compiler.
  std::vector<std::string> command;
  std::string path;     ///< absolute path of the compiler itself (part of the cache key)
  std::string version;  ///< first line of `<compiler> --version` (part of the cache key)
  /// The driver's content digest, "sha256:<hex>" (compiler_identity.h; part of the cache key): a
  /// wrapper script or a reinstalled compiler behind the same path is another compiler.
  std::string identity;
  std::string found_by;  ///< how it was found: "$CXX=...", "g++ on PATH", ...
  /// The linker the driver is asked for on a CPU module's link (linker.h; part of the key
  /// through the link command).
  LinkerChoice linker;
};

/// Whether `version` (the first line of a compiler's --version) is Clang's ("... clang version
/// 14.0.6 ..."); Apple's and Debian's spell it so too.
bool IsClangVersion(const std::string& version);

/// Order: $CXX, then g++, c++, clang++ on PATH. The version is read with `--version` only when
/// neither this process nor the memo file (keyed by the compiler's path, size, mtime and inode)
/// knows it, so a warm load never starts a subprocess. `memo_path` may be "" (no file memo).
/// Failure is ErrorKind::kToolchain listing what was tried, in order, and how to fix it, or
/// ChooseLinker's error for a $JAXCC_LINKER it cannot honour.
Result<HostCompiler> FindHostCompiler(const std::string& memo_path);

/// The per-process result is reused while $CXX, PATH and the compiler's stat stamp hold (one
/// stat), so a compiler rewritten while the process runs is found again.
/// Forgets the per-process result (tests change CXX/PATH between calls).
void ResetHostCompilerMemo();

}  // namespace jaxcc::toolchain
