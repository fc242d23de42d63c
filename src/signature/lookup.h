// Choosing the one C++ function a name refers to, across every source.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "signature/declarations.h"
#include "signature/resolve.h"
#include "util/result.h"

namespace jaxcc::signature {

/// Declarations grouped by name, pointing into the vector they were built from.
using DeclarationIndex = std::unordered_map<std::string, std::vector<const Declaration*>>;
DeclarationIndex IndexByName(const std::vector<Declaration>& declarations);

/// The declaration of `name` to export, or nullptr when no source declares it at namespace
/// scope. A prototype and a definition with the same parameter types are one function; the
/// definition is preferred (its parameter names are the ones that count). kSignature errors: the
/// name is a template, a `__global__` kernel, or has declarations that differ in parameters or
/// namespace (the error lists every location).
Result<const Declaration*> FindFunction(const std::string& name, const DeclarationIndex& index,
                                        const std::vector<SourceFile>& sources);

}  // namespace jaxcc::signature
