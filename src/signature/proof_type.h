// The exact C++ type jaxcc claims for a parameter, which the generated code makes the compiler
// prove (decision 147).
#pragma once

#include <string>

#include "argspec/function_spec.h"
#include "signature/parameters.h"

namespace jaxcc::signature {

/// `param`'s type as jaxcc read it, in the spelling argspec::Param::cpp_type documents, from its
/// role and, when there is one, the declaration's parameter (`declared`, else nullptr): tensors
/// by reference or by value as declared, scalars as their AttrType's C++ type (by value, or by
/// const reference as declared). "" for the parameters jaxcc leaves to the compiler.
std::string ProofType(const argspec::Param& param, const ParsedParam* declared);

}  // namespace jaxcc::signature
