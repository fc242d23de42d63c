// jaxcc._core: the Python entry points of the C++ pipeline. The GIL is released while building.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/raise_error.h"
#include "bindings/request_from_python.h"
#include "cache/cache_dir.h"
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
  m.def("validate_name", &jaxcc::bindings::ValidateNamePy, nb::arg("name"), nb::arg("what"));
  m.def("version", [] { return std::string(JAXCC_VERSION); });
}
