#include "pipeline/compile_database.h"

#include <nlohmann/json.hpp>

#include "util/fs.h"

namespace jaxcc::pipeline {

std::string CompileDatabaseJson(const LoadRequest& request,
                                const std::vector<build::CompileStep>& kernel_steps) {
  nlohmann::json entries = nlohmann::json::array();
  for (size_t i = 0; i < request.sources.size() && i < kernel_steps.size(); ++i) {
    const std::string& path = request.sources[i].label;
    if (path.empty() || path[0] != '/') continue;  // "<name>": an inline source
    FileInfo info = StatPath(path);
    if (!info.exists || info.is_dir) continue;
    std::vector<std::string> arguments = kernel_steps[i].command;
    // The kernel unit's prelude (codegen::GenerateKernelUnit) includes these before the code.
    for (const char* header : {"jaxcc/jaxcc.h", "brainevent/tensor.h"}) {
      arguments.insert(arguments.end(), {"-include", header});
    }
    arguments.insert(arguments.end(), {"-c", path});
    entries.push_back({{"directory", DirName(path)}, {"file", path}, {"arguments", arguments}});
  }
  if (entries.empty()) return "";
  return entries.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace jaxcc::pipeline
