// Spellings of the attribute types: one table so the parser, codegen and Python agree.
#include "argspec/function_spec.h"

namespace jaxcc::argspec {
namespace {

struct AttrTypeInfo {
  AttrType type;
  const char* name;      // arg_spec spelling
  const char* cpp_name;  // what the generated bridge declares
};

// Order matches the documentation: integers, then floats; float16/bfloat16 travel as raw bits.
constexpr AttrTypeInfo kAttrTypes[] = {
    {AttrType::kBool, "bool", "bool"},
    {AttrType::kInt8, "int8", "std::int8_t"},
    {AttrType::kInt16, "int16", "std::int16_t"},
    {AttrType::kInt32, "int32", "std::int32_t"},
    {AttrType::kInt64, "int64", "std::int64_t"},
    {AttrType::kUInt8, "uint8", "std::uint8_t"},
    {AttrType::kUInt16, "uint16", "std::uint16_t"},
    {AttrType::kUInt32, "uint32", "std::uint32_t"},
    {AttrType::kUInt64, "uint64", "std::uint64_t"},
    {AttrType::kFloat32, "float32", "float"},
    {AttrType::kFloat64, "float64", "double"},
    {AttrType::kFloat16, "float16", "uint16_t"},
    {AttrType::kBFloat16, "bfloat16", "uint16_t"},
};

const AttrTypeInfo& Info(AttrType type) {
  for (const AttrTypeInfo& info : kAttrTypes) {
    if (info.type == type) return info;
  }
  return kAttrTypes[0];  // unreachable for valid enumerators
}

}  // namespace

const char* AttrTypeName(AttrType type) { return Info(type).name; }

std::string FunctionSpec::ProofKey() const {
  std::string text = " proof@" + std::to_string(line) + ":" + std::to_string(column);
  for (const Param& p : params) text += " " + p.cpp_type + ";";
  return text;
}

const char* AttrTypeCppName(AttrType type) { return Info(type).cpp_name; }

const char* ParamKindName(ParamKind kind) {
  switch (kind) {
    case ParamKind::kArg:
      return "arg";
    case ParamKind::kRet:
      return "ret";
    case ParamKind::kStream:
      return "stream";
    case ParamKind::kAttr:
      return "attr";
    case ParamKind::kPool:
      return "pool";
    case ParamKind::kState:
      return "state";
    case ParamKind::kAsync:
      return "async";
    case ParamKind::kScratch:
      return "scratch";
    case ParamKind::kScratchAlloc:
      return "scratch_alloc";
  }
  return "arg";
}

std::optional<ParamKind> ParamKindFromName(const std::string& name) {
  for (ParamKind kind :
       {ParamKind::kArg, ParamKind::kRet, ParamKind::kStream, ParamKind::kAttr, ParamKind::kPool,
        ParamKind::kState, ParamKind::kAsync, ParamKind::kScratch, ParamKind::kScratchAlloc}) {
    if (name == ParamKindName(kind)) return kind;
  }
  return std::nullopt;
}

std::optional<AttrType> AttrTypeFromName(const std::string& name) {
  for (const AttrTypeInfo& info : kAttrTypes) {
    if (name == info.name) return info.type;
  }
  return std::nullopt;
}

std::string AttrTypeNameList() {
  std::string list;
  for (const AttrTypeInfo& info : kAttrTypes) {
    if (!list.empty()) list += ", ";
    list += info.name;
  }
  return list;
}

}  // namespace jaxcc::argspec
