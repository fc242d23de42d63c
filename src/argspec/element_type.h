// The element types a tensor operand may declare in an arg_spec (`arg:float32`, `ret:int32`):
// the dtype names JAX and NumPy use, complex included (attributes cannot be complex; operands can).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jaxcc::argspec {

/// A tensor's declared element type. Absent (std::nullopt in a Param) means "any dtype", what an
/// untyped `arg`/`ret` and every inferred tensor parameter say.
enum class ElementType {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
};

const char* ElementTypeName(ElementType type);  ///< "float32", numpy's `dtype.name`
std::optional<ElementType> ElementTypeFromName(std::string_view name);
/// Every valid dtype name, comma-separated, for error messages: "bool, int8, ...".
std::string ElementTypeNameList();
/// The dtype a user probably meant by `spelling` ("float" -> "float32", "cfloat" ->
/// "complex64", "flaot32" -> "float32"); nullopt when nothing is close.
std::optional<std::string> SuggestElementTypeName(std::string_view spelling);

}  // namespace jaxcc::argspec
