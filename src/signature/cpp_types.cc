// The type table behind inference and the cross-check; every rejection says what to write instead.
#include "signature/cpp_types.h"

#include <string_view>
#include <vector>

namespace jaxcc::signature {
namespace {

using argspec::AttrType;

std::string StripGlobal(const std::string& type) {
  std::string_view t = type;
  if (t.substr(0, 2) == "::") t.remove_prefix(2);
  if (t.substr(0, 5) == "std::") t.remove_prefix(5);
  return std::string(t);
}

struct Named {
  const char* name;
  AttrType type;
};
constexpr Named kNamedScalars[] = {
    {"bool", AttrType::kBool},        {"int8_t", AttrType::kInt8},
    {"int16_t", AttrType::kInt16},    {"int32_t", AttrType::kInt32},
    {"int64_t", AttrType::kInt64},    {"uint8_t", AttrType::kUInt8},
    {"uint16_t", AttrType::kUInt16},  {"uint32_t", AttrType::kUInt32},
    {"uint64_t", AttrType::kUInt64},  {"size_t", AttrType::kUInt64},
    {"ptrdiff_t", AttrType::kInt64},  {"intptr_t", AttrType::kInt64},
    {"uintptr_t", AttrType::kUInt64}, {"float", AttrType::kFloat32},
    {"double", AttrType::kFloat64},
};

// Built-in integer spellings in any word order: "unsigned long long int", "short signed".
std::optional<AttrType> BuiltinInteger(const std::string& type) {
  int is_signed = 0, is_unsigned = 0, shorts = 0, longs = 0, ints = 0, chars = 0;
  size_t pos = 0;
  while (pos < type.size()) {
    size_t end = type.find(' ', pos);
    if (end == std::string::npos) end = type.size();
    std::string_view word(type.data() + pos, end - pos);
    if (word == "signed")
      ++is_signed;
    else if (word == "unsigned")
      ++is_unsigned;
    else if (word == "short")
      ++shorts;
    else if (word == "long")
      ++longs;
    else if (word == "int")
      ++ints;
    else if (word == "char")
      ++chars;
    else
      return std::nullopt;
    pos = end + 1;
  }
  if (is_signed + is_unsigned > 1 || ints > 1 || chars > 1 || shorts > 1 || longs > 2 ||
      (shorts && longs) || (chars && (shorts || longs || ints))) {
    return std::nullopt;
  }
  bool u = is_unsigned == 1;
  if (chars) {
    if (!is_signed && !is_unsigned) return std::nullopt;  // plain char: signedness varies
    return u ? AttrType::kUInt8 : AttrType::kInt8;
  }
  if (shorts) return u ? AttrType::kUInt16 : AttrType::kInt16;
  if (longs) return u ? AttrType::kUInt64 : AttrType::kInt64;
  return u ? AttrType::kUInt32 : AttrType::kInt32;
}

bool IsHalfType(const std::string& type) {
  for (const char* name :
       {"__half", "half", "__nv_half", "__nv_bfloat16", "nv_bfloat16", "__hip_bfloat16",
        "hip_bfloat16", "_Float16", "__fp16", "float16_t", "bfloat16_t", "__bf16"}) {
    if (type == name) return true;
  }
  return false;
}

// "Tensor" with a namespace qualifier other than BE/jaxcc: torch::Tensor, at::Tensor, ...
bool IsForeignTensor(const std::string& core) {
  const std::string suffix = "::Tensor";
  return core.size() > suffix.size() &&
         core.compare(core.size() - suffix.size(), suffix.size(), suffix) == 0 &&
         !IsJaxccTensor(core);
}

CppParamClass Unsupported(std::string problem) {
  return {CppRole::kUnsupported, std::nullopt, std::move(problem)};
}

constexpr const char* kTensorHint =
    "take an input as `const jaxcc::Tensor&` and an output as `jaxcc::Tensor&`";

CppParamClass ClassifyTensor(const ParsedParam& p) {
  if (p.pointer_depth > 0)
    return Unsupported(std::string("tensors are not passed by pointer; ") + kTensorHint);
  if (p.ref == RefKind::kRValue) {
    return Unsupported(std::string("an rvalue reference cannot bind the tensors jaxcc passes; ") +
                       kTensorHint);
  }
  return {p.is_const ? CppRole::kInputTensor : CppRole::kOutputTensor, std::nullopt, ""};
}

CppParamClass ClassifyScalar(const ParsedParam& p, AttrType type) {
  if (p.pointer_depth > 0) {
    return Unsupported(
        "pointers cannot come from JAX; pass arrays as tensors (`const jaxcc::Tensor&`) and "
        "scalars by value");
  }
  if (p.ref == RefKind::kRValue || (p.ref == RefKind::kLValue && !p.is_const)) {
    return Unsupported(
        "a scalar attribute is an input and cannot be written back; take it by value (or by "
        "const reference)");
  }
  return {CppRole::kScalar, type, ""};
}

}  // namespace

std::optional<AttrType> ScalarAttrType(const std::string& core_type) {
  std::string type = StripGlobal(core_type);
  bool qualified = type != core_type;
  for (const Named& named : kNamedScalars) {
    if (type != named.name) continue;
    // `std::float` is no type; only the <cstdint>/<cstddef> typedefs live in std.
    bool keyword = type == "bool" || type == "float" || type == "double";
    if (qualified && keyword) return std::nullopt;
    return named.type;
  }
  if (core_type.find("::") != std::string::npos) return std::nullopt;
  return BuiltinInteger(type);
}

namespace {

// `name` spelled bare, `jaxcc::name`, `BE::name`, with or without a leading `::`.
bool IsJaxccName(const std::string& core_type, std::string_view name) {
  std::string_view t = core_type;
  if (t.substr(0, 2) == "::") t.remove_prefix(2);
  if (t.substr(0, 7) == "jaxcc::") {
    t.remove_prefix(7);
  } else if (t.substr(0, 4) == "BE::") {
    t.remove_prefix(4);
  }
  return t == name;
}

// The parameters through which a function takes more of XLA than buffers and attributes
// (decision 94); nullopt when `p` is none of them.
std::optional<CppParamClass> ClassifyContext(const ParsedParam& p) {
  const std::string& core = p.core_type;
  std::string_view head(core.data(),
                        core.find('<') == std::string::npos ? core.size() : core.find('<'));
  if (IsJaxccName(core, "ThreadPool")) {
    if (p.pointer_depth > 0 || p.ref != RefKind::kLValue || p.is_const) {
      return Unsupported("take the pool by reference: `jaxcc::ThreadPool& pool`");
    }
    return CppParamClass{CppRole::kPool, std::nullopt, ""};
  }
  if (head.size() < core.size() && IsJaxccName(std::string(head), "State")) {
    if (p.pointer_depth > 0 || p.ref != RefKind::kLValue) {
      return Unsupported("take the state by reference: `jaxcc::State<T>& state`");
    }
    return CppParamClass{CppRole::kState, std::nullopt, ""};
  }
  if (IsJaxccName(core, "Async")) {
    if (p.pointer_depth > 0 || p.ref == RefKind::kRValue ||
        (p.ref == RefKind::kLValue && !p.is_const)) {
      return Unsupported("take the tag by value: `jaxcc::Async`");
    }
    return CppParamClass{CppRole::kAsync, std::nullopt, ""};
  }
  if (IsJaxccName(core, "Scratch")) {
    if (p.pointer_depth > 0 || p.ref == RefKind::kRValue) {
      return Unsupported("take the workspace by value or reference: `jaxcc::Scratch scratch`");
    }
    return CppParamClass{CppRole::kScratch, std::nullopt, ""};
  }
  if (IsJaxccName(core, "ScratchAllocator")) {
    if (p.pointer_depth > 0 || p.ref != RefKind::kLValue || p.is_const) {
      return Unsupported("take the allocator by reference: `jaxcc::ScratchAllocator& alloc`");
    }
    return CppParamClass{CppRole::kScratchAlloc, std::nullopt, ""};
  }
  return std::nullopt;
}

}  // namespace

bool IsJaxccTensor(const std::string& core_type) {
  std::string_view t = core_type;
  if (t.substr(0, 2) == "::") t.remove_prefix(2);
  return t == "Tensor" || t == "BE::Tensor" || t == "jaxcc::Tensor";
}

CppParamClass ClassifyParam(const ParsedParam& p) {
  if (p.is_variadic) {
    return Unsupported(
        "a variadic parameter list cannot be called with a fixed set of buffers; export a "
        "wrapper with a fixed parameter list");
  }
  if (p.is_function_pointer) {
    return Unsupported(
        "function pointers cannot come from JAX; choose the function inside the kernel (e.g. "
        "from an integer attribute)");
  }
  if (p.is_array) return Unsupported("an array parameter is a pointer; pass a tensor instead");
  const std::string& core = p.core_type;
  if (core.empty()) return Unsupported("the parameter has no type");
  if (IsJaxccTensor(core)) return ClassifyTensor(p);
  if (auto context = ClassifyContext(p)) return *context;
  if (IsForeignTensor(core)) {
    return Unsupported("`" + core + "` is not jaxcc's tensor; " + kTensorHint +
                       " (`BE::Tensor` works too)");
  }
  if (StripGlobal(core) == "cudaStream_t") {
    if (p.pointer_depth > 0 || (p.ref != RefKind::kNone && !p.is_const)) {
      return Unsupported("take the stream by value: `cudaStream_t stream`");
    }
    return {CppRole::kStream, std::nullopt, ""};
  }
  if (auto scalar = ScalarAttrType(core)) return ClassifyScalar(p, *scalar);
  if (p.pointer_depth > 0) {
    return Unsupported(
        "pointers cannot come from JAX; pass arrays as tensors (`const jaxcc::Tensor&`) and "
        "scalars by value");
  }
  std::string bare = StripGlobal(core);
  if (IsHalfType(bare)) {
    return Unsupported(
        "float16 and bfloat16 attributes arrive as raw 16 bits: declare the parameter "
        "`uint16_t` with the token `attr.<name>:float16` (or `:bfloat16`) and reinterpret the "
        "bits");
  }
  if (bare == "char" || bare == "signed char" || bare == "unsigned char") {
    // Only plain char gets here: its signedness depends on the platform.
    return Unsupported(
        "plain `char` is signed on some platforms and unsigned on others; use "
        "`int8_t` or `uint8_t`");
  }
  if (bare == "long double") return Unsupported("XLA FFI has no long double attribute; use double");
  if (bare == "auto") {
    return Unsupported(
        "an `auto` parameter makes the function a template; give it a concrete "
        "type");
  }
  if (bare == "void") return Unsupported("`void` is not a parameter type");
  for (const char* wide : {"wchar_t", "char8_t", "char16_t", "char32_t"}) {
    if (bare == wide)
      return Unsupported(
          "character types are not attributes; use a fixed-width "
          "integer such as `uint32_t`");
  }
  return {CppRole::kUnknown, std::nullopt,
          "jaxcc does not know the type `" + core +
              "`: it maps `jaxcc::Tensor` (const: input, non-const: output), `cudaStream_t`, "
              "`jaxcc::ThreadPool&`, `jaxcc::State<T>&`, `jaxcc::Async`, `jaxcc::Scratch`, "
              "`jaxcc::ScratchAllocator&` and the "
              "scalars bool, "
              "int8_t..int64_t, uint8_t..uint64_t, float and double"};
}

}  // namespace jaxcc::signature
