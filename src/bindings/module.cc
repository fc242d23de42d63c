// jaxcc._core: the Python entry points of the C++ pipeline. The GIL is released while building.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/raise_error.h"
#include "bindings/request_from_python.h"
#include "cache/cache_dir.h"
#include "cache/cache_usage.h"
#include "pipeline/load_module.h"

namespace nb = nanobind;

namespace jaxcc::bindings {
namespace {

// The Python layer checks its arguments; this is the backstop for anything it let through (a
// value of the wrong type, text that does not encode as UTF-8): a SpecError, not a bare
// RuntimeError("std::bad_cast").
pipeline::LoadRequest ReadRequest(const nb::dict& options) {
  try {
    return RequestFromPython(options);
  } catch (const nb::python_error&) {
    throw;
  } catch (const std::exception& e) {
    RaiseError(MakeError(ErrorKind::kSpec,
                         std::string("the load options could not be read (") + e.what() +
                             "): names, sources, flags and paths must be str that encode as "
                             "UTF-8, lists must hold only str; check the arguments of the call"));
  }
}

nb::dict LoadModulePy(const nb::dict& options, nb::object on_output) {
  pipeline::LoadRequest request = ReadRequest(options);
  if (!on_output.is_none()) {
    request.on_output = [on_output](std::string_view chunk) {
      nb::gil_scoped_acquire acquire;
      try {
        on_output(nb::str(chunk.data(), chunk.size()));
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("jaxcc verbose output callback");
      }
    };
  }
  Result<pipeline::LoadedModule> loaded = [&] {
    nb::gil_scoped_release release;
    return pipeline::LoadModule(request);
  }();
  if (!loaded.ok()) RaiseError(loaded.error());

  nb::dict result;
  result["library_path"] = loaded->library_path;
  result["entry_dir"] = loaded->entry_dir;
  result["key"] = loaded->key;
  result["cache_hit"] = loaded->cache_hit;
  result["miss_reason"] = loaded->miss_reason;
  result["build_seconds"] = loaded->build_seconds;
  result["build_log"] = loaded->build_log;
  result["warning"] = loaded->warning;
  result["evicted_entries"] = loaded->evicted_entries;
  result["wrapper_reused"] = loaded->wrapper_reused;
  result["cuda_archs"] = loaded->cuda_archs;
  result["cuda_archs_source"] = loaded->cuda_archs_source;
  nb::list specs;
  for (const auto& spec : loaded->specs) specs.append(SpecToPython(spec));
  result["specs"] = specs;
  nb::dict handlers;
  for (const auto& [name, address] : loaded->handlers) {
    // XLA reads the raw handler pointer out of an unnamed capsule.
    handlers[nb::str(name.c_str())] = nb::capsule(address);
  }
  result["handlers"] = handlers;
  return result;
}

nb::list ResolveSpecsPy(const nb::dict& options) {
  pipeline::LoadRequest request = ReadRequest(options);
  auto specs = signature::ResolveSpecs(request.sources, request.functions);
  if (!specs.ok()) RaiseError(specs.error());
  nb::list result;
  for (const auto& spec : *specs) result.append(SpecToPython(spec));
  return result;
}

int ClearCachePy(const std::string& cache_dir, std::optional<std::string> name) {
  if (name) {
    Status valid = pipeline::ValidateModuleName(*name, "module name");
    if (!valid.ok()) RaiseError(valid.error());
  }
  auto removed = cache::CacheDir(cache_dir).Clear(name);
  if (!removed.ok()) RaiseError(removed.error());
  return *removed;
}

nb::list CacheListPy(const std::string& cache_dir) {
  nb::list rows;
  for (const cache::EntryUsage& entry : cache::ListEntries(cache_dir)) {
    nb::dict row;
    row["name"] = entry.module_name;
    row["dir"] = entry.dir;
    row["key"] = entry.key;
    row["bytes"] = entry.bytes;
    row["last_used_ns"] = entry.last_used_ns;
    row["created_unix"] = entry.created_unix;
    row["build_seconds"] = entry.build_seconds;
    row["functions"] = entry.function_names;
    row["complete"] = entry.complete;
    rows.append(row);
  }
  return rows;
}

nb::dict CachePrunePy(const std::string& cache_dir, std::optional<std::int64_t> max_bytes,
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
  nb::dict result;
  result["entries_removed"] = report->entries_removed;
  result["bytes_freed"] = report->bytes_freed;
  result["entries_kept"] = report->entries_kept;
  result["bytes_kept"] = report->bytes_kept;
  result["busy_skipped"] = report->busy_skipped;
  result["orphans_removed"] = report->orphans_removed;
  return result;
}

std::int64_t CacheMaxBytesPy() {
  auto bytes = pipeline::CacheMaxBytes();
  if (!bytes.ok()) RaiseError(bytes.error());
  return *bytes;
}

std::int64_t ParseByteSizePy(const std::string& text) {
  auto bytes = cache::ParseByteSize(text);
  if (!bytes.ok()) RaiseError(bytes.error());
  return *bytes;
}

void ValidateNamePy(const std::string& name, const std::string& what) {
  Status valid = pipeline::ValidateModuleName(name, what.c_str());
  if (!valid.ok()) RaiseError(valid.error());
}

}  // namespace
}  // namespace jaxcc::bindings

NB_MODULE(_core, m) {
  m.doc() = "jaxcc's C++ core: spec resolution, code generation, cached builds and loading.";
  m.def("load_module", &jaxcc::bindings::LoadModulePy, nb::arg("options"),
        nb::arg("on_output") = nb::none(),
        "Resolve, build (or fetch from the cache) and dlopen a module; returns a dict.");
  m.def("resolve_specs", &jaxcc::bindings::ResolveSpecsPy, nb::arg("options"),
        "Resolve the FunctionSpecs of sources without building anything.");
  m.def("clear_cache", &jaxcc::bindings::ClearCachePy, nb::arg("cache_dir"),
        nb::arg("name") = nb::none(), "Remove cache entries; returns how many were removed.");
  m.def("cache_list", &jaxcc::bindings::CacheListPy, nb::arg("cache_dir"),
        "Entries of the cache, most recently used first (no hashing).");
  m.def("cache_prune", &jaxcc::bindings::CachePrunePy, nb::arg("cache_dir"),
        nb::arg("max_bytes") = nb::none(), nb::arg("older_than_seconds") = nb::none(),
        "Evict least recently used entries and remove orphans; returns a report dict.");
  m.def("cache_max_bytes", &jaxcc::bindings::CacheMaxBytesPy,
        "The size cap from $JAXCC_CACHE_MAX_BYTES (0 = none).");
  m.def("parse_byte_size", &jaxcc::bindings::ParseByteSizePy, nb::arg("text"));
  m.def("validate_name", &jaxcc::bindings::ValidateNamePy, nb::arg("name"), nb::arg("what"));
  m.def("version", [] { return std::string(JAXCC_VERSION); });
}
