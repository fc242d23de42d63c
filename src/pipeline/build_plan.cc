#include "pipeline/build_plan.h"

#include "codegen/ffi_wrapper.h"
#include "codegen/kernel_unit.h"

namespace jaxcc::pipeline {
namespace {

std::vector<std::string> CommonFlags(const LoadRequest& request) {
  return {"-std=c++17", "-O" + std::to_string(request.optimization_level), "-fPIC",
          "-fvisibility=hidden", "-fvisibility-inlines-hidden"};
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

std::string KernelFile(size_t index) { return "kernel_" + std::to_string(index) + ".cc"; }

}  // namespace

BuildPlan MakeBuildPlan(const LoadRequest& request, const toolchain::HostCompiler& compiler) {
  BuildPlan plan;
  // User code: jaxcc's headers as a system directory (not tracked per file: they are in the
  // header digest), the user's own directories as -I so depfiles record them.
  plan.user_flags = CommonFlags(request);
  plan.user_flags.insert(plan.user_flags.end(), {"-isystem", request.jaxcc_include_dir});
  for (const std::string& dir : request.source_dirs) Append(plan.user_flags, {"-I", dir});
  for (const std::string& dir : request.extra_include_paths) Append(plan.user_flags, {"-I", dir});
  Append(plan.user_flags, request.extra_cflags);

  plan.wrapper_flags = CommonFlags(request);
  Append(plan.wrapper_flags,
         {"-DNDEBUG", "-isystem", request.ffi_include_dir, "-isystem", request.jaxcc_include_dir});

  for (size_t i = 0; i < request.sources.size(); ++i) {
    build::CompileStep step{KernelFile(i), "kernel_" + std::to_string(i) + ".o", compiler.command};
    Append(step.command, plan.user_flags);
    plan.graph.compiles.push_back(std::move(step));
  }

  build::CompileStep wrapper{"ffi_wrapper.cc", "ffi_wrapper.o", compiler.command};
  Append(wrapper.command, plan.wrapper_flags);
  plan.graph.compiles.push_back(std::move(wrapper));

  plan.graph.link_command = compiler.command;
  // -z defs: an undefined symbol is a link error naming it, not a dlopen failure later.
  Append(plan.graph.link_command, {"-shared", "-fPIC", "-Wl,-z,defs"});
  plan.graph.link_flags = request.extra_ldflags;
  plan.graph.output = request.name + ".so";
  return plan;
}

std::vector<std::pair<std::string, std::string>> GenerateSources(
    const LoadRequest& request, const std::vector<argspec::FunctionSpec>& specs) {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t i = 0; i < request.sources.size(); ++i) {
    std::vector<argspec::FunctionSpec> declared_here;
    for (const auto& spec : specs) {
      if (spec.source_index == static_cast<int>(i)) declared_here.push_back(spec);
    }
    files.emplace_back(KernelFile(i),
                       codegen::GenerateKernelUnit(request.sources[i].label,
                                                   request.sources[i].text, declared_here));
  }
  codegen::WrapperOptions options;
  options.module_name = request.name;
  options.platform = request.platform;
  files.emplace_back("ffi_wrapper.cc", codegen::GenerateFfiWrapper(specs, options));
  return files;
}

}  // namespace jaxcc::pipeline
