// What a C++ parameter type means to jaxcc: a tensor, the stream, a scalar attribute, or none.
#pragma once

#include <optional>
#include <string>

#include "argspec/function_spec.h"
#include "signature/parameters.h"

namespace jaxcc::signature {

enum class CppRole {
  kInputTensor,   ///< `const Tensor`, `const Tensor&`, `Tensor const&`
  kOutputTensor,  ///< `Tensor`, `Tensor&`
  kStream,        ///< `cudaStream_t` (by value or const reference)
  kScalar,        ///< a type with an AttrType, by value or const reference
  kPool,          ///< `jaxcc::ThreadPool&`: XLA's intra-op thread pool (CPU)
  kState,         ///< `jaxcc::State<T>&`: per-call-site state
  kAsync,         ///< `jaxcc::Async`: the function runs asynchronously (CPU)
  kScratch,       ///< `jaxcc::Scratch`: workspace for the call (a hidden result buffer)
  kScratchAlloc,  ///< `jaxcc::ScratchAllocator&`: allocates while the call runs
  kUnknown,       ///< a named type jaxcc does not know (a typedef, a class): maybe fine
  kUnsupported,   ///< certainly not passable (pointer, `__half`, variadic, ...)
};

struct CppParamClass {
  CppRole role = CppRole::kUnknown;
  std::optional<argspec::AttrType> scalar;  ///< for kScalar
  /// For kUnknown and kUnsupported: why, and how to fix it, as a sentence fragment.
  std::string problem;
};

/// The AttrType of a scalar type spelling (`core_type` of a parameter): the <cstdint> names with
/// or without `std::`/`::`, the built-in integer spellings (LP64: `long` is 64-bit), `size_t`,
/// `ptrdiff_t`, `float`, `double`, `bool`. nullopt otherwise (plain `char` included).
std::optional<argspec::AttrType> ScalarAttrType(const std::string& core_type);

/// True for `Tensor`, `BE::Tensor`, `jaxcc::Tensor`, `::jaxcc::Tensor`, `::BE::Tensor`.
bool IsJaxccTensor(const std::string& core_type);

/// Classifies one parameter on its type alone (the name plays no part here).
CppParamClass ClassifyParam(const ParsedParam& param);

}  // namespace jaxcc::signature
