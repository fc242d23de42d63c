// One table of tensor dtype names, so the parser, the caches, bundles and Python agree.
#include "argspec/element_type.h"

#include <cctype>
#include <vector>

#include "argspec/suggest.h"

namespace jaxcc::argspec {
namespace {

struct ElementTypeInfo {
  ElementType type;
  const char* name;  // numpy's dtype.name, which is also what Python compares against
};

constexpr ElementTypeInfo kElementTypes[] = {
    {ElementType::kBool, "bool"},
    {ElementType::kInt8, "int8"},
    {ElementType::kInt16, "int16"},
    {ElementType::kInt32, "int32"},
    {ElementType::kInt64, "int64"},
    {ElementType::kUInt8, "uint8"},
    {ElementType::kUInt16, "uint16"},
    {ElementType::kUInt32, "uint32"},
    {ElementType::kUInt64, "uint64"},
    {ElementType::kFloat16, "float16"},
    {ElementType::kBFloat16, "bfloat16"},
    {ElementType::kFloat32, "float32"},
    {ElementType::kFloat64, "float64"},
    {ElementType::kComplex64, "complex64"},
    {ElementType::kComplex128, "complex128"},
};

// Spellings of complex types users bring from C++ and NumPy (lower-cased); the real types'
// aliases are the attribute table's (SuggestAttrTypeName).
struct ComplexAlias {
  std::string_view spelling;
  const char* name;
};
constexpr ComplexAlias kComplexAliases[] = {{"complex", "complex64"},
                                            {"cfloat", "complex64"},
                                            {"c64", "complex64"},
                                            {"std::complex<float>", "complex64"},
                                            {"complex<float>", "complex64"},
                                            {"cdouble", "complex128"},
                                            {"c128", "complex128"},
                                            {"std::complex<double>", "complex128"},
                                            {"complex<double>", "complex128"}};

}  // namespace

const char* ElementTypeName(ElementType type) {
  for (const ElementTypeInfo& info : kElementTypes) {
    if (info.type == type) return info.name;
  }
  return kElementTypes[0].name;  // unreachable for valid enumerators
}

std::optional<ElementType> ElementTypeFromName(std::string_view name) {
  for (const ElementTypeInfo& info : kElementTypes) {
    if (name == info.name) return info.type;
  }
  return std::nullopt;
}

std::string ElementTypeNameList() {
  std::string list;
  for (const ElementTypeInfo& info : kElementTypes) {
    if (!list.empty()) list += ", ";
    list += info.name;
  }
  return list;
}

std::optional<std::string> SuggestElementTypeName(std::string_view spelling) {
  std::string lower(spelling);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const ComplexAlias& alias : kComplexAliases) {
    if (lower == alias.spelling) return std::string(alias.name);
  }
  if (auto real = SuggestAttrTypeName(spelling)) return real;  // the attribute types are real
  std::vector<std::string> names;
  for (const ElementTypeInfo& info : kElementTypes) names.emplace_back(info.name);
  std::vector<std::string> near = NearMisses(spelling, names, 1);
  if (near.empty()) return std::nullopt;
  return near[0];
}

}  // namespace jaxcc::argspec
