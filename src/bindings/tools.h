// What jaxcc would build with, for `jaxcc doctor`: the host compiler, nvcc and ninja as the core
// finds them (same search order, same memo), any tool's version, the cache root's ownership check.
#pragma once

#include <nanobind/nanobind.h>

namespace jaxcc::bindings {

void BindTools(nanobind::module_& m);

}  // namespace jaxcc::bindings
