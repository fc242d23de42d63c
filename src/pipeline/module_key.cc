#include "pipeline/module_key.h"

#include "argspec/arg_spec.h"
#include "util/fs.h"

namespace jaxcc::pipeline {

using argspec::FunctionSpec;

std::string CanonicalSpecs(const std::vector<FunctionSpec>& specs) {
  std::string text;
  for (const FunctionSpec& spec : specs) {
    text += spec.name + "@" + std::to_string(spec.source_index) + ":";
    for (const std::string& ns : spec.namespaces) text += ns + "::";
    for (const std::string& token : argspec::ToTokens(spec)) text += " " + token;
    text += spec.ProofKey() + "\n";
  }
  return text;
}

cache::KeyInputs ModuleKeyInputs(const LoadRequest& request, const std::vector<FunctionSpec>& specs,
                                 const BuildPlan& plan, const CudaToolchain* cuda,
                                 const toolchain::HostCompiler& compiler,
                                 const std::string& header_digest) {
  cache::KeyInputs key_inputs;
  key_inputs.jaxcc_version = JAXCC_VERSION;
  key_inputs.platform = request.platform;
  key_inputs.module_name = request.name;
  for (const auto& source : request.sources)
    key_inputs.sources.emplace_back(source.label, source.text);
  key_inputs.specs = CanonicalSpecs(specs);
  key_inputs.compile_flags = plan.user_flags;
  key_inputs.compile_flags.insert(key_inputs.compile_flags.end(), plan.wrapper_flags.begin(),
                                  plan.wrapper_flags.end());
  key_inputs.compile_flags.insert(key_inputs.compile_flags.end(), plan.cuda_flags.begin(),
                                  plan.cuda_flags.end());
  if (cuda != nullptr) {
    key_inputs.toolchain = {"nvcc", cuda->nvcc.path, cuda->nvcc.version};
    if (!cuda->shared_runtime.empty()) {
      // The runtime linked against is a tool too: another wheel version in the same folder is
      // another module (linking proves the runtime has every symbol the module uses).
      FileInfo runtime = StatPath(cuda->shared_runtime);
      key_inputs.toolchain.insert(
          key_inputs.toolchain.end(),
          {"cudart", cuda->shared_runtime,
           std::to_string(runtime.size) + ":" + std::to_string(runtime.mtime_ns)});
    }
    key_inputs.codegen_options = {std::string("allow_cuda_graph=") +
                                  (request.cuda.allow_cuda_graph ? "1" : "0")};
  }
  if (request.debug) key_inputs.codegen_options.push_back("debug=1");  // others' keys unchanged
  key_inputs.link_flags = plan.graph.link_command;
  key_inputs.link_flags.insert(key_inputs.link_flags.end(), plan.graph.link_flags.begin(),
                               plan.graph.link_flags.end());
  key_inputs.include_paths = request.extra_include_paths;
  key_inputs.compiler_path = compiler.path;
  key_inputs.compiler_version = compiler.version;
  key_inputs.header_digest = header_digest;
  return key_inputs;
}

}  // namespace jaxcc::pipeline
