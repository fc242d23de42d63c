// The typed load request Python hands to the core: jaxcc._core.LoadRequest (frozen, hashable:
// the in-process table key), CudaOptions, SourceFile, FunctionRequest and BuildEnvironment.
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <map>
#include <string>

#include "pipeline/load_request.h"

namespace jaxcc::bindings {

/// A LoadRequest that cannot change after construction, with its hash computed once (sources can
/// be long, and the Python layer looks requests up on every load call).
struct FrozenRequest {
  pipeline::LoadRequest value;
  std::size_t hash = 0;
};

/// Python callables for the environment's callbacks (None: no callback), each run with the GIL
/// held from the core's thread; an exception in one is reported as unraisable, never propagated
/// into the build.
void AttachCallbacks(pipeline::BuildEnvironment& environment, nanobind::object on_output,
                     nanobind::object on_build_start,
                     nanobind::object on_progress = nanobind::none());

/// The directory holding jaxcc's kernel headers: `include/` beside this extension module.
const std::string& KernelIncludeDir();

void BindRequestTypes(nanobind::module_& m);

}  // namespace jaxcc::bindings
