// Reading a LoadRequest out of the keyword dictionary the Python layer builds.
#pragma once

#include <nanobind/nanobind.h>

#include "pipeline/load_request.h"

namespace jaxcc::bindings {

/// Keys: name, platform, sources [(label, text)], functions (None | [(name, tokens|None)]),
/// extra_cflags, extra_ldflags, extra_include_paths, source_dirs, optimization_level,
/// build_directory, verbose, force_rebuild, ninja_workers, cache_dir, jaxcc_include_dir,
/// ffi_include_dir, ninja_search_dirs, build_timeout_seconds. Missing keys keep defaults.
pipeline::LoadRequest RequestFromPython(const nanobind::dict& options);

/// Converts a resolved spec to {"name", "namespaces", "params": [{"kind","name","type"}]}.
nanobind::dict SpecToPython(const argspec::FunctionSpec& spec);

}  // namespace jaxcc::bindings
