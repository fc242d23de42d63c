// The core's rules that the Python layer needs before or without a load: name rules, the rank
// limit of jaxcc::Tensor, vmap methods, GPU architecture spelling. Owned in C++, exported here.
#pragma once

#include <nanobind/nanobind.h>

namespace jaxcc::bindings {

void BindRules(nanobind::module_& m);

}  // namespace jaxcc::bindings
