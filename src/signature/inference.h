// Reading an arg_spec off a C++ declaration (list form of `functions`, bare annotations).
#pragma once

#include "argspec/function_spec.h"
#include "signature/declarations.h"
#include "signature/resolve.h"
#include "util/result.h"

namespace jaxcc::signature {

/// The spec `decl` implies: const tensors are `arg`, other tensors `ret`, the one stream
/// candidate (a `cudaStream_t`, or an int64 parameter named `stream`) is `stream`, scalars are
/// `attr.<param name>:<type>`. Names, namespaces and source_index are filled in. Errors
/// (kSignature, pointing at `source`): a parameter no role fits (never silently dropped), an
/// unnamed scalar, two stream candidates, no output tensor.
Result<argspec::FunctionSpec> InferSpec(const Declaration& decl, const SourceFile& source);

}  // namespace jaxcc::signature
