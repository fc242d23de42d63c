// jaxcc._core: the Python entry points of the C++ pipeline. Everything that crosses is a typed
// class (request_types.h, result_types.h); the GIL is released while building.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/bundle_types.h"
#include "bindings/raise_error.h"
#include "bindings/request_types.h"
#include "bindings/result_types.h"
#include "bindings/rules.h"
#include "bindings/tools.h"
#include "cache/cache_dir.h"
#include "cache/cache_usage.h"
#include "cache/entry_names.h"
#include "cache/lock_mode.h"
#include "pipeline/build_plan.h"
#include "pipeline/load_module.h"
#include "pipeline/source_text.h"
#include "toolchain/ninja.h"
#include "util/load_trace.h"

namespace nb = nanobind;

namespace jaxcc::bindings {
namespace {

pipeline::LoadedModule LoadModulePy(const FrozenRequest& request,
                                    pipeline::BuildEnvironment environment, nb::object on_output,
                                    nb::object on_build_start, nb::object on_progress) {
  AttachCallbacks(environment, std::move(on_output), std::move(on_build_start),
                  std::move(on_progress));
  Result<pipeline::LoadedModule> loaded = [&] {
    nb::gil_scoped_release release;
    return pipeline::LoadModule(request.value, environment);
  }();
  if (!loaded.ok()) RaiseError(loaded.error());
  return std::move(*loaded);
}

std::vector<argspec::FunctionSpec> ResolveSpecsPy(const FrozenRequest& request) {
  pipeline::LoadRequest read = request.value;
  auto unchanged = pipeline::ReadDeferredSources(read);
  if (!unchanged.ok()) RaiseError(unchanged.error());
  auto specs =
      signature::ResolveSpecs(read.sources, read.functions, pipeline::SourceUserFlags(read));
  if (!specs.ok()) RaiseError(specs.error());
  return std::move(*specs);
}

std::vector<signature::TuneDeclaration> TuneDeclarationsPy(const FrozenRequest& request) {
  pipeline::LoadRequest read = request.value;
  auto unchanged = pipeline::ReadDeferredSources(read);
  if (!unchanged.ok()) RaiseError(unchanged.error());
  std::vector<signature::TuneDeclaration> tune;
  auto specs =
      signature::ResolveSpecs(read.sources, read.functions, pipeline::SourceUserFlags(read), &tune);
  if (!specs.ok()) RaiseError(specs.error());
  return tune;
}

int ClearCachePy(const std::string& cache_dir, std::optional<std::string> name) {
  if (name) {
    Status valid = cache::ValidateModuleName(*name, "module name");
    if (!valid.ok()) RaiseError(valid.error());
  }
  auto removed = cache::CacheDir(cache_dir).Clear(name);
  if (!removed.ok()) RaiseError(removed.error());
  return *removed;
}

cache::PruneReport CachePrunePy(const std::string& cache_dir, std::optional<std::int64_t> max_bytes,
                                std::optional<double> older_than_seconds) {
  cache::PruneOptions options;
  if (max_bytes) options.max_bytes = *max_bytes;
  if (older_than_seconds)
    options.older_than_seconds = static_cast<std::int64_t>(*older_than_seconds);
  Result<cache::PruneReport> report = [&] {
    nb::gil_scoped_release release;
    return cache::Prune(cache::CacheDir(cache_dir), options);
  }();
  if (!report.ok()) RaiseError(report.error());
  return *report;
}

std::int64_t CacheMaxBytesPy() {
  auto bytes = pipeline::CacheMaxBytes();
  if (!bytes.ok()) RaiseError(bytes.error());
  return *bytes;
}

std::string CacheLockModePy(const std::string& cache_dir) {
  auto mode = cache::DescribeLockMode(cache_dir);
  if (!mode.ok()) RaiseError(mode.error());
  return *mode;
}

std::int64_t ParseByteSizePy(const std::string& text) {
  auto bytes = cache::ParseByteSize(text);
  if (!bytes.ok()) RaiseError(bytes.error());
  return *bytes;
}

}  // namespace
}  // namespace jaxcc::bindings

NB_MODULE(_core, m) {
  using namespace jaxcc::bindings;
  m.doc() = "jaxcc's C++ core: spec resolution, code generation, cached builds and loading.";
  // A loaded module lives as long as the process (XLA's registry keeps its handlers, and a
  // library is never unloaded), and what refers to it is often held by JAX's C++ caches, which
  // outlive the interpreter's teardown. nanobind would report those objects as leaked at every
  // such exit (seen after brainevent's Numba operators); they are not faults (decision 142).
  nb::set_leak_warnings(false);
  BindRequestTypes(m);
  BindResultTypes(m);
  BindRules(m);
  BindTools(m);
  BindBundle(m);
  m.def("load_module", &LoadModulePy, nb::arg("request"), nb::arg("environment"),
        nb::arg("on_output") = nb::none(), nb::arg("on_build_start") = nb::none(),
        nb::arg("on_progress") = nb::none(),
        "Resolve, build (or fetch from the cache) and dlopen a module. on_output(text) gets the "
        "verbose build output, on_build_start() is called when a build begins (not on a hit), "
        "on_progress(finished, total) as ninja starts each build step.");
  m.def("include_dir", &KernelIncludeDir,
        "Directory of jaxcc's kernel headers (jaxcc/jaxcc.h, brainevent/common.h).");
  m.def("ninja_search_dirs", &jaxcc::toolchain::NinjaWheelDirs, nb::arg("python_path"),
        nb::arg("python_executable"),
        "Where the ninja wheel may keep its binary, for these sys.path entries and interpreter.");
  m.def("resolve_specs", &ResolveSpecsPy, nb::arg("request"),
        "Resolve the FunctionSpecs of a request's sources without building anything.");
  m.def("tune_declarations", &TuneDeclarationsPy, nb::arg("request"),
        "The sources' open tune=\"...\" declarations (read and checked, nothing built).");
  m.def("clear_cache", &ClearCachePy, nb::arg("cache_dir"), nb::arg("name") = nb::none(),
        "Remove cache entries; returns how many were removed.");
  m.def("cache_list", &jaxcc::cache::ListEntries, nb::arg("cache_dir"),
        "Entries of the cache, most recently used first (no hashing).");
  m.def("cache_prune", &CachePrunePy, nb::arg("cache_dir"), nb::arg("max_bytes") = nb::none(),
        nb::arg("older_than_seconds") = nb::none(),
        "Evict least recently used entries and remove orphans.");
  m.def("cache_max_bytes", &CacheMaxBytesPy,
        "The size cap from $JAXCC_CACHE_MAX_BYTES (0 = none).");
  m.def("cache_lock_mode", &CacheLockModePy, nb::arg("cache_dir"),
        "How entry locks under cache_dir are taken ($JAXCC_CACHE_LOCK, else by filesystem).");
  m.def("last_load_trace", &jaxcc::trace::Last,
        "(stage, seconds) of this thread's last load_module, in order (for benchmarks).");
  m.def("parse_byte_size", &ParseByteSizePy, nb::arg("text"));
  m.def("version", [] { return std::string(JAXCC_VERSION); });
}
