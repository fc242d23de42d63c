// Raising a jaxcc.errors exception class that matches a core ErrorKind.
#pragma once

#include "util/result.h"

namespace jaxcc::bindings {

/// Sets the Python error (class chosen by kind, with `log_path` attached) and throws
/// nanobind::python_error so nanobind propagates it.
[[noreturn]] void RaiseError(const Error& error);

}  // namespace jaxcc::bindings
