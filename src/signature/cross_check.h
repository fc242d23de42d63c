// Checking an explicit arg_spec (dict form, annotation with tokens) against the C++ declaration.
#pragma once

#include <string>
#include <vector>

#include "argspec/function_spec.h"
#include "signature/declarations.h"
#include "signature/resolve.h"
#include "util/result.h"

namespace jaxcc::signature {

/// Checks `spec` (parsed from the user's `tokens`) against `decl`, parameter by parameter:
///  - one token per parameter;
///  - `arg` on a tensor (a non-const one too: the spec decides), `ret` on a non-const tensor,
///    `stream` on a `cudaStream_t` or an int64 parameter (any name);
///  - `attr.x:T` on a scalar of type T (a `uint16_t` for float16/bfloat16);
///  - bare `attr.x` on a scalar parameter named `x`, whose type it takes.
/// A parameter of a type jaxcc does not know (a typedef) is trusted to be what the spec says:
/// the compiler checks the generated call. Returns the spec with namespaces, source_index and
/// the C++ parameter names filled in (attributes keep the spec's name). kSignature errors point
/// at the declaration and say what the spec says and what the C++ says.
Result<argspec::FunctionSpec> CheckSpec(argspec::FunctionSpec spec,
                                        const std::vector<std::string>& tokens,
                                        const Declaration& decl, const SourceFile& source);

}  // namespace jaxcc::signature
