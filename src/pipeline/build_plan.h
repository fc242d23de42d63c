// Turns a request and resolved specs into generated files and a ninja build graph.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "build/build_graph.h"
#include "pipeline/load_request.h"
#include "toolchain/host_compiler.h"

namespace jaxcc::pipeline {

struct BuildPlan {
  std::vector<std::pair<std::string, std::string>> files;  ///< generated sources
  build::BuildGraph graph;
  std::vector<std::string> user_flags;     ///< flags of the user's translation units
  std::vector<std::string> wrapper_flags;  ///< flags of the FFI wrapper translation unit
};

BuildPlan MakeBuildPlan(const LoadRequest& request, const std::vector<argspec::FunctionSpec>& specs,
                        const toolchain::HostCompiler& compiler);

}  // namespace jaxcc::pipeline
