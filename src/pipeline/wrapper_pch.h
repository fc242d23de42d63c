// The generated wrapper's headers (XLA's C API, jaxcc's frame decoder and tensor) are the same for
// every module, and parsing them was about 40% of each wrapper's g++ time. With GCC they are
// precompiled once per compiler, wrapper flags and header set into <cache>/.pch and later wrapper
// compiles read that instead (decision 122).
#pragma once

#include <string>
#include <vector>

namespace jaxcc::pipeline {

/// What the wrapper's compile command gets to read the precompiled prelude: `-isystem <dir>
/// -include wrapper_prelude.h` (found through -isystem so depfiles leave it out, like the headers
/// it holds). Empty, and the wrapper parses its headers as before, when the compiler is not GCC
/// or no trusted, intact prelude for this command is in the cache: the object code is the same
/// either way, so this is never an error. `wrapper_command` is the step's command (compiler and
/// flags, no -c/-o/depfile options).
std::vector<std::string> WrapperPchFlags(const std::string& cache_dir,
                                         const std::vector<std::string>& wrapper_command,
                                         const std::string& compiler_version,
                                         const std::string& toolchain_version,
                                         const std::string& header_digest);

/// Builds the prelude WrapperPchFlags looks for, under a lock, unless it is there already or GCC
/// failed on it before (`wrapper_prelude.failed`). Returns whether it is usable afterwards. Safe
/// to run on a thread beside the build that did not get it.
bool BuildWrapperPch(const std::string& cache_dir, const std::vector<std::string>& wrapper_command,
                     const std::string& compiler_version, const std::string& toolchain_version,
                     const std::string& header_digest, double timeout_seconds);

/// Whether `--version`'s first line names GCC's C++ compiler (PCH in GCC's format).
bool IsGccVersion(const std::string& compiler_version);

}  // namespace jaxcc::pipeline
