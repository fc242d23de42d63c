// Which linker a CPU module's link asks the compiler driver for (`-fuse-ld=`).
//
// A module's link is a handful of small objects against libstdc++, yet GNU ld (bfd) takes about
// 48 ms for it on the 2-core development machine, gold 20 ms and lld 29 ms: on an edited
// kernel's reload that difference is a tenth of the whole edit-to-result time (issue 39 item 5,
// decision 161a). The driver finds `ld.<name>` itself; jaxcc only checks that one is installed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::toolchain {

struct LinkerChoice {
  std::vector<std::string> flags;  ///< {"-fuse-ld=gold"}, or {} for the driver's own linker
  std::string name;                ///< "gold", "lld", "mold", or "system"
  std::string version;             ///< first line of `ld.<name> --version`; "" for "system"
  std::string found_by;            ///< "$JAXCC_LINKER=lld", "ld.gold on PATH", ...
};

/// Whether the compiler driver can link a C++ shared library with `linker` (installed at
/// `linker_path`): an error saying why not. A linker that answers `--version` may still be unable
/// to link here (seen on the GPU machine: its gold dropped libstdc++, so every module's link failed
/// with undefined `std::runtime_error` symbols), hence an actual link before a linker is chosen.
using LinkProbe =
    std::function<Result<bool>(const LinkerChoice& linker, const std::string& linker_path)>;

/// The probe of a real build (linker_probe.cc): `compiler` links a one-function C++ shared
/// library that needs libstdc++ under `-z defs`, the outcome remembered in `memo_path` by both
/// executables' identities, so only the first process on a machine pays for the link.
LinkProbe LinkWithCompiler(const std::string& compiler_path, const std::string& memo_path);

/// $JAXCC_LINKER decides: unset or "auto" takes the first of gold, lld and mold that is on PATH,
/// answers `--version` (remembered in `memo_path` like compiler versions, so a later process
/// starts no subprocess) and passes `probe`, else the driver's own (found_by says why each was
/// passed over); "system" always the driver's own; a name, that linker or an ErrorKind::kToolchain
/// error saying how to install it or why it cannot link. Memoised per process by PATH, $CXX and
/// $JAXCC_LINKER.
Result<LinkerChoice> ChooseLinker(const std::string& memo_path, const LinkProbe& probe);

/// Forgets the per-process choice (tests change PATH and $JAXCC_LINKER between calls).
void ResetLinkerMemo();

}  // namespace jaxcc::toolchain
