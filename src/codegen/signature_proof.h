// The compiler's proof of each signature jaxcc read (decision 147): the kernel unit binds every
// entry point through a pointer of exactly the parameter types jaxcc claims, so a macro, a `-D`
// flag, a typedef or an overload that makes the compiler see another function is a compile
// error at the user's line, never a silent conversion.
#pragma once

#include <string>

#include "argspec/function_spec.h"

namespace jaxcc::codegen {

/// For the kernel unit, inside `namespace jaxcc_generated` after the user's source: a binder
/// `jaxcc_read_<f>` whose `Bind(&f)` accepts only a function of the claimed parameter types
/// (argspec::Param::cpp_type; a parameter without one is deduced), a `static_assert` whose
/// message starts "jaxcc signature proof" and names jaxcc's reading, and the bound pointer
/// `jaxcc_fn_<f>` the bridge calls. Placed under `#line <spec.line> "<label>"` so the compiler
/// reports a disagreement at the user's annotation or declaration; the text ends with a
/// `#line` back to "<label> (jaxcc bridge)".
std::string SignatureProof(const argspec::FunctionSpec& spec, const std::string& qualified_name,
                           const std::string& label);

/// The callee the bridge calls: `jaxcc_fn_<f>`.
std::string ProvenCallee(const argspec::FunctionSpec& spec);

}  // namespace jaxcc::codegen
