// What a build's tools read beyond the request's own text (decisions 170-174): the environment
// variables they document, the compiler's identity, the target `-march=native` resolves to here,
// the files the flags name, and the directories they search. The cache key holds the first four;
// the entry watches the files and directories, so a change to any of them rebuilds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pipeline/build_plan.h"
#include "pipeline/flag_files.h"
#include "pipeline/load_request.h"
#include "toolchain/host_compiler.h"
#include "util/result.h"

namespace jaxcc::pipeline {

struct BuildWorld {
  std::vector<std::string> environment;  ///< tool_environment.h, "NAME=value" or "NAME"
  std::vector<std::string> identities;   ///< "<tool path>\t<content digest>" per compiler
  std::string native_target;             ///< what -march=native etc. chose here; "" without
  FlagFiles flag_files;
  /// The compiler's own directories (compiler_identity.h): files under them are watched by
  /// their directory; the include ones are watched by their names too.
  std::vector<std::string> toolchain_dirs;
  /// Directories watched by their names: the include and library search (sources' directories,
  /// extra_include_paths, directories named by flags, CPATH and its kin, LIBRARY_PATH, the
  /// compiler's own include directories).
  std::vector<std::string> search_dirs;
};

/// Every flag of the request: extra_cflags, the CUDA cflags, extra_ldflags.
std::vector<std::string> RequestFlags(const LoadRequest& request);

/// Whether a flag of the request asks for the target of the CPU the compiler runs on.
bool AsksForNativeTarget(const LoadRequest& request);

/// Reads the world of `request`'s build; `cuda` null for a CPU module. Errors: a response file
/// that cannot be read or nests too deep (kSpec), a native target the compiler does not name, a
/// compiler that cannot be read (kToolchain).
Result<BuildWorld> ReadBuildWorld(const LoadRequest& request,
                                  const toolchain::HostCompiler& compiler,
                                  const std::optional<CudaToolchain>& cuda,
                                  const std::string& memo_path);

/// The key's lines for `world`: environment, identities, native target, flag files.
std::vector<std::string> WorldKeyLines(const BuildWorld& world);

}  // namespace jaxcc::pipeline
