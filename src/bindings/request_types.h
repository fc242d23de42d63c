// The typed load request Python hands to the core: jaxcc._core.LoadRequest (frozen, hashable:
// the in-process table key), CudaOptions, SourceFile, FunctionRequest and BuildEnvironment.
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <map>

#include "pipeline/load_request.h"

namespace jaxcc::bindings {

/// A LoadRequest that cannot change after construction, with its hash computed once (sources can
/// be long, and the Python layer looks requests up on every load call).
struct FrozenRequest {
  pipeline::LoadRequest value;
  std::size_t hash = 0;
};

void BindRequestTypes(nanobind::module_& m);

}  // namespace jaxcc::bindings
