// Choosing the one C++ function a name refers to, across every source.
#pragma once

#include <string>
#include <vector>

#include "signature/declarations.h"
#include "signature/resolve.h"
#include "util/result.h"

namespace jaxcc::signature {

/// The declaration of `name` to export, or nullptr when no source declares it at namespace
/// scope. A prototype and a definition with the same parameter types are one function; the
/// definition is preferred (its parameter names are the ones that count). kSignature errors: the
/// name is a template, a `__global__` kernel, or has declarations that differ in parameters or
/// namespace (the error lists every location).
Result<const Declaration*> FindFunction(const std::string& name,
                                        const std::vector<Declaration>& declarations,
                                        const std::vector<SourceFile>& sources);

}  // namespace jaxcc::signature
