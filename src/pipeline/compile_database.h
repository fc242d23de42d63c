// compile_commands.json for the user's source files (issue 39 item 3): how each file is
// compiled, for editors that read a compile database (clangd), kept in the cache entry and
// written by `jaxcc build --compile-commands DIR`.
#pragma once

#include <string>
#include <vector>

#include "build/build_graph.h"
#include "pipeline/load_request.h"

namespace jaxcc::pipeline {

/// One entry per source of `request` that is a file on disk (inline sources have none), with
/// the command of its kernel unit among `kernel_steps` (the build plan's compile steps, kernel
/// units first, in source order) applied to the file itself, and the two headers the kernel
/// unit includes before the user's code (`-include`), so an editor sees what the compiler sees.
/// "" when no source is a file.
std::string CompileDatabaseJson(const LoadRequest& request,
                                const std::vector<build::CompileStep>& kernel_steps);

}  // namespace jaxcc::pipeline
