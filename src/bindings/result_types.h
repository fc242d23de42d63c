// The typed results the core hands back to Python: LoadedModule, FunctionSpec and its Params,
// and the cache's entry rows and prune report.
#pragma once

#include <nanobind/nanobind.h>

namespace jaxcc::bindings {

void BindResultTypes(nanobind::module_& m);

}  // namespace jaxcc::bindings
