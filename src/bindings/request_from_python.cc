#include "bindings/request_from_python.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;

namespace jaxcc::bindings {
namespace {

template <class T>
void Read(const nb::dict& options, const char* key, T& out) {
  if (options.contains(key) && !options[key].is_none()) out = nb::cast<T>(options[key]);
}

const char* KindName(argspec::ParamKind kind) {
  switch (kind) {
    case argspec::ParamKind::kArg:
      return "arg";
    case argspec::ParamKind::kRet:
      return "ret";
    case argspec::ParamKind::kStream:
      return "stream";
    case argspec::ParamKind::kAttr:
      return "attr";
  }
  return "arg";
}

}  // namespace

pipeline::LoadRequest RequestFromPython(const nb::dict& options) {
  pipeline::LoadRequest request;
  Read(options, "name", request.name);
  Read(options, "platform", request.platform);
  std::vector<std::pair<std::string, std::string>> sources;
  Read(options, "sources", sources);
  for (auto& [label, text] : sources) request.sources.push_back({label, text});
  if (options.contains("functions") && !options["functions"].is_none()) {
    auto entries =
        nb::cast<std::vector<std::pair<std::string, std::optional<std::vector<std::string>>>>>(
            options["functions"]);
    std::vector<signature::FunctionRequest> functions;
    for (auto& [name, tokens] : entries) functions.push_back({name, tokens});
    request.functions = std::move(functions);
  }
  Read(options, "extra_cflags", request.extra_cflags);
  Read(options, "extra_ldflags", request.extra_ldflags);
  Read(options, "extra_include_paths", request.extra_include_paths);
  Read(options, "source_dirs", request.source_dirs);
  Read(options, "optimization_level", request.optimization_level);
  Read(options, "build_directory", request.build_directory);
  Read(options, "verbose", request.verbose);
  Read(options, "force_rebuild", request.force_rebuild);
  Read(options, "ninja_workers", request.ninja_workers);
  Read(options, "cache_dir", request.cache_dir);
  Read(options, "jaxcc_include_dir", request.jaxcc_include_dir);
  Read(options, "ffi_include_dir", request.ffi_include_dir);
  Read(options, "ninja_search_dirs", request.ninja_search_dirs);
  Read(options, "build_timeout_seconds", request.build_timeout_seconds);
  Read(options, "cuda_archs", request.cuda_archs);
  Read(options, "detected_cuda_archs", request.detected_cuda_archs);
  Read(options, "extra_cuda_cflags", request.extra_cuda_cflags);
  Read(options, "nvcc_search_dirs", request.nvcc_search_dirs);
  Read(options, "use_fast_math", request.use_fast_math);
  Read(options, "allow_cuda_graph", request.allow_cuda_graph);
  return request;
}

nb::dict SpecToPython(const argspec::FunctionSpec& spec) {
  nb::dict result;
  result["name"] = spec.name;
  result["namespaces"] = spec.namespaces;
  nb::list params;
  for (const argspec::Param& p : spec.params) {
    nb::dict param;
    param["kind"] = KindName(p.kind);
    param["name"] = p.name;
    param["type"] = p.attr_type ? nb::cast(argspec::AttrTypeName(*p.attr_type)) : nb::none();
    params.append(param);
  }
  result["params"] = params;
  return result;
}

}  // namespace jaxcc::bindings
