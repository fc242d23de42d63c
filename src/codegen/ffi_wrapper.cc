#include "codegen/ffi_wrapper.h"

#include <algorithm>
#include <utility>

#include "codegen/kernel_unit.h"

namespace jaxcc::codegen {
namespace {

using argspec::FunctionSpec;
using argspec::Param;
using argspec::ParamKind;

// The scalar type XLA passes for an attribute: the bridge's C++ type (float16/bfloat16 travel
// as their uint16 bits).
const char* FrameDataType(argspec::AttrType type) {
  using argspec::AttrType;
  switch (type) {
    case AttrType::kBool:
      return "::jaxcc::detail::FrameScalar::kPred";
    case AttrType::kInt8:
      return "::jaxcc::detail::FrameScalar::kS8";
    case AttrType::kInt16:
      return "::jaxcc::detail::FrameScalar::kS16";
    case AttrType::kInt32:
      return "::jaxcc::detail::FrameScalar::kS32";
    case AttrType::kInt64:
      return "::jaxcc::detail::FrameScalar::kS64";
    case AttrType::kUInt8:
      return "::jaxcc::detail::FrameScalar::kU8";
    case AttrType::kUInt16:
    case AttrType::kFloat16:
    case AttrType::kBFloat16:
      return "::jaxcc::detail::FrameScalar::kU16";
    case AttrType::kUInt32:
      return "::jaxcc::detail::FrameScalar::kU32";
    case AttrType::kUInt64:
      return "::jaxcc::detail::FrameScalar::kU64";
    case AttrType::kFloat32:
      return "::jaxcc::detail::FrameScalar::kF32";
    case AttrType::kFloat64:
      return "::jaxcc::detail::FrameScalar::kF64";
  }
  return "::jaxcc::detail::FrameScalar::kInvalid";
}

// The FrameElement (frame_entry.h) of a declared buffer dtype; kAny for an undeclared one.
std::string FrameElementOf(const Param& param) {
  using argspec::ElementType;
  const char* name = "kAny";
  if (param.dtype) {
    switch (*param.dtype) {
      case ElementType::kBool:
        name = "kPred";
        break;
      case ElementType::kInt8:
        name = "kS8";
        break;
      case ElementType::kInt16:
        name = "kS16";
        break;
      case ElementType::kInt32:
        name = "kS32";
        break;
      case ElementType::kInt64:
        name = "kS64";
        break;
      case ElementType::kUInt8:
        name = "kU8";
        break;
      case ElementType::kUInt16:
        name = "kU16";
        break;
      case ElementType::kUInt32:
        name = "kU32";
        break;
      case ElementType::kUInt64:
        name = "kU64";
        break;
      case ElementType::kFloat16:
        name = "kF16";
        break;
      case ElementType::kBFloat16:
        name = "kBF16";
        break;
      case ElementType::kFloat32:
        name = "kF32";
        break;
      case ElementType::kFloat64:
        name = "kF64";
        break;
      case ElementType::kComplex64:
        name = "kC64";
        break;
      case ElementType::kComplex128:
        name = "kC128";
        break;
    }
  }
  return std::string("::jaxcc::detail::FrameElement::") + name;
}

// `constexpr FrameElement <array>[] = {...};` over the buffers (arguments, then results), or
// nothing when no buffer declares a dtype (the spec then holds nullptr: no check at the call).
std::string DTypeArray(const std::vector<const Param*>& buffers, const std::string& array) {
  bool declared = false;
  for (const Param* p : buffers) declared = declared || p->dtype.has_value();
  if (!declared) return "";
  std::string text = "constexpr ::jaxcc::detail::FrameElement " + array + "[] = {";
  for (size_t i = 0; i < buffers.size(); ++i) {
    text += (i ? ", " : "") + FrameElementOf(*buffers[i]);
  }
  return text + "};\n";
}

std::vector<const Param*> ParamsOf(const FunctionSpec& spec, ParamKind kind) {
  std::vector<const Param*> params;
  for (const Param& p : spec.params) {
    if (p.kind == kind) params.push_back(&p);
  }
  return params;
}

// `constexpr const char* <array>[] = {"x", "y"};`, or nothing (the spec then holds nullptr).
std::string NameArray(const std::vector<const Param*>& params, const std::string& array) {
  if (params.empty()) return "";
  std::string text = "constexpr const char* " + array + "[] = {";
  for (size_t i = 0; i < params.size(); ++i) {
    text += (i ? ", " : "") + CStringLiteral(params[i]->name);
  }
  return text + "};\n";
}

// XLA passes attributes sorted by name; each FrameAttr records where its attribute sits.
std::string AttrArray(const std::vector<const Param*>& attrs, const std::string& array) {
  if (attrs.empty()) return "";
  std::vector<std::string> sorted;
  for (const Param* p : attrs) sorted.push_back(p->name);
  std::sort(sorted.begin(), sorted.end());
  std::string text = "constexpr ::jaxcc::detail::FrameAttr " + array + "[] = {";
  for (size_t i = 0; i < attrs.size(); ++i) {
    auto at = std::find(sorted.begin(), sorted.end(), attrs[i]->name) - sorted.begin();
    text += std::string(i ? ",\n    " : "\n    ") + "{" + CStringLiteral(attrs[i]->name) + ", " +
            FrameDataType(*attrs[i]->attr_type) + ", " + std::to_string(at) + "}";
  }
  return text + "};\n";
}

std::string Count(size_t n) { return std::to_string(n); }
std::string AtLeastOne(size_t n) { return std::to_string(n == 0 ? 1 : n); }

}  // namespace

std::uint32_t HandlerTraits(const FunctionSpec& spec, const WrapperOptions& options) {
  // XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE (kFrameCommandBufferCompatible).
  constexpr std::uint32_t kCommandBufferCompatible = 1u;
  bool cuda = options.platform == "cuda";
  return cuda && options.allow_cuda_graph && !spec.has_scratch_alloc() ? kCommandBufferCompatible
                                                                       : 0u;
}

namespace {

// `constexpr FrameCrashSite kSite_<f> = {module, function, source};` (crash_site.h).
std::string CrashSite(const FunctionSpec& spec, const WrapperOptions& options) {
  const auto index = static_cast<size_t>(spec.source_index);
  const std::string source =
      index < options.source_labels.size() ? options.source_labels[index] : "";
  return "constexpr ::jaxcc::detail::FrameCrashSite kSite_" + spec.name + " = {" +
         CStringLiteral(options.module_name) + ", " + CStringLiteral(spec.name) + ", " +
         CStringLiteral(source) + "};\n";
}

std::string GenerateHandler(const FunctionSpec& spec, const WrapperOptions& options) {
  bool cuda = options.platform == "cuda";
  bool bind_stream = cuda && spec.has_stream();
  auto args = ParamsOf(spec, ParamKind::kArg);
  auto rets = ParamsOf(spec, ParamKind::kRet);
  // The workspace is a hidden extra result, last in XLA's frame.
  for (const Param* scratch : ParamsOf(spec, ParamKind::kScratch)) rets.push_back(scratch);
  auto attrs = ParamsOf(spec, ParamKind::kAttr);
  const std::string& f = spec.name;
  std::vector<const Param*> buffers = args;
  buffers.insert(buffers.end(), rets.begin(), rets.end());
  const std::string dtypes = DTypeArray(buffers, "kDTypes_" + f);
  std::string text = "// " + f + "\nnamespace {\n";
  text += NameArray(args, "kArgs_" + f) + NameArray(rets, "kRets_" + f) +
          AttrArray(attrs, "kAttrs_" + f) + dtypes;
  // State: XLA's type id for it (registered on first need) and the kernel unit's deleter.
  if (spec.has_state()) {
    text += "::jaxcc::detail::FrameTypeId jaxcc_state_type_" + f + " = {0};\n";
    text += "constexpr ::jaxcc::detail::FrameTypeInfo kStateInfo_" + f +
            " = {sizeof(::jaxcc::detail::FrameTypeInfo), nullptr, "
            "&::jaxcc_generated::jaxcc_state_delete_" +
            f + "};\n";
    text += "constexpr ::jaxcc::detail::FrameStateType kState_" + f + " = {&jaxcc_state_type_" + f +
            ", &kStateInfo_" + f + "};\n";
  }
  text +=
      "constexpr ::jaxcc::detail::FrameSpec kSpec_" + f + " = {" + CStringLiteral(f) + ", " +
      Count(args.size()) + ", " + Count(rets.size()) + ", " + Count(attrs.size()) + ", " +
      (args.empty() ? "nullptr" : "kArgs_" + f) + ", " + (rets.empty() ? "nullptr" : "kRets_" + f) +
      ", " + (attrs.empty() ? "nullptr" : "kAttrs_" + f) + ", " + (bind_stream ? "true" : "false") +
      ", " +
      (HandlerTraits(spec, options) != 0 ? "::jaxcc::detail::kFrameCommandBufferCompatible" : "0");
  // Only a function that takes them asks XLA for its pool, state, Future or allocator
  // (decisions 94, 105); only one that declares a dtype has it checked (decision 180).
  if (spec.has_pool() || spec.has_state() || spec.is_async() || spec.has_scratch_alloc() ||
      !dtypes.empty()) {
    text += std::string(", ") + (spec.has_pool() ? "true" : "false") + ", " +
            (spec.has_state() ? "&kState_" + f : std::string("nullptr")) + ", " +
            (spec.is_async() ? "true" : "false");
  }
  if (spec.has_scratch_alloc() || !dtypes.empty()) {
    text += std::string(", ::jaxcc::detail::FrameScratch::") + (!spec.has_scratch_alloc() ? "kNone"
                                                                : cuda ? "kDevice"
                                                                       : "kHost");
  }
  if (!dtypes.empty()) text += ", kDTypes_" + f;
  std::string bridge_args = "call.args, call.rets, ";
  bridge_args += bind_stream ? "reinterpret_cast<std::int64_t>(call.stream)" : "0";
  if (spec.has_context()) bridge_args += ", *call.context";
  std::string attr_values;
  for (size_t i = 0; i < attrs.size(); ++i) {
    attr_values += std::string(i ? ", " : "") + "call.attr<" +
                   std::string(argspec::AttrTypeCppName(*attrs[i]->attr_type)) + ">(" +
                   std::to_string(i) + ")";
  }
  if (!attr_values.empty()) bridge_args += ", " + attr_values;
  // The body the decoder runs (inside CUDA's call scope for a function with a stream: the
  // stream's device current, a launch error it left raised with its name).
  // The crash report's mark (crash_site.h, decision 150b) stays on the thread while the user's
  // code runs: the bridge call, and the state factory at XLA's instantiate stage.
  text += "};\n" + CrashSite(spec, options);
  text += "void Body_" + f + "(const ::jaxcc::detail::FrameView& call) {\n";
  text += "  ::jaxcc::detail::FrameSiteScope site(&kSite_" + f + ");\n";
  text += "  ::jaxcc_generated::jaxcc_bridge_" + f + "(" + bridge_args + ");\n}\n";
  if (spec.has_state()) {
    text += "void* State_" + f + "(const ::jaxcc::detail::FrameView& call) {\n";
    text += "  ::jaxcc::detail::FrameSiteScope site(&kSite_" + f + ");\n";
    if (attrs.empty()) text += "  (void)call;\n";
    text += "  return ::jaxcc_generated::jaxcc_state_new_" + f + "(" + attr_values + ");\n}\n";
  }
  text += "}  // namespace\n\n";
  text += "extern \"C\" __attribute__((visibility(\"default\"))) XLA_FFI_Error* " +
          HandlerSymbol(f) + "(XLA_FFI_CallFrame* frame) {\n";
  // Left uninitialised: the decoder builds each Tensor in place.
  text += "  ::jaxcc::detail::FrameTensorSlot args[" + AtLeastOne(args.size()) + "], rets[" +
          AtLeastOne(rets.size()) + "];\n";
  text += "  const void* attrs[" + AtLeastOne(attrs.size()) + "];\n";
  text += "  return ::jaxcc::detail::RunFrame(frame, kSpec_" + f + ", &Body_" + f + ", " +
          (spec.has_state() ? "&State_" + f : std::string("nullptr")) +
          ", {args, rets, attrs});\n}\n\n";
  return text;
}

}  // namespace

std::string HandlerSymbol(const std::string& function_name) { return "jaxcc_ffi_" + function_name; }

std::string GenerateFfiWrapper(const std::vector<FunctionSpec>& specs,
                               const WrapperOptions& options) {
  std::string text = "// Generated by jaxcc: XLA FFI handlers of module " + options.module_name +
                     " (" + options.platform + ").\n";
  text += "#include <cstdint>\n\n#include \"jaxcc/detail/frame_entry.h\"\n";
  text += "\nnamespace jaxcc_generated {\n";
  for (const FunctionSpec& spec : specs) {
    text += BridgeDeclaration(spec) + ";\n" + StateFactoryDeclarations(spec);
  }
  text += "}  // namespace jaxcc_generated\n\n";
  for (const FunctionSpec& spec : specs) text += GenerateHandler(spec, options);
  return text;
}

namespace {

// ", <the set>" of RunFrameWith's Features argument (frame_features.h); nothing for every feature.
std::string FeatureArgument(const FrameFeatures& features) {
  std::string set;
  for (const auto& [carried, name] :
       {std::pair{features.async, "kFrameAsync"}, std::pair{features.state, "kFrameState"},
        std::pair{features.pool, "kFramePool"},
        std::pair{features.scratch_alloc, "kFrameScratchAllocator"}}) {
    if (carried) set += (set.empty() ? "" : " | ") + std::string(name);
  }
  if (features.async && features.state && features.pool && features.scratch_alloc) return "";
  return ", " + (set.empty() ? std::string("0u") : set);
}

}  // namespace

FrameFeatures FrameFeaturesOf(const std::vector<FunctionSpec>& specs) {
  FrameFeatures features{false, false, false, false};
  for (const FunctionSpec& spec : specs) {
    features.async = features.async || spec.is_async();
    features.state = features.state || spec.has_state();
    features.pool = features.pool || spec.has_pool();
    features.scratch_alloc = features.scratch_alloc || spec.has_scratch_alloc();
  }
  return features;
}

std::string FrameRuntimeSource(const std::string& platform, const FrameFeatures& features) {
  const bool cuda = platform == "cuda";
  std::string text = "// Generated by jaxcc: the frame decoder every handler of a module calls (" +
                     platform + ").\n// The same text for every module of the platform";
  text += cuda ? ": the object cache compiles it once per cache.\n"
               : " and feature set: the object cache\n// compiles it once per cache and set.\n";
  // The decoder streams nothing and computes with no complex value: the lean kernel headers'
  // settings (decisions 108, 129) spare it those parses too, on a cache's first build.
  text += "#define JAXCC_DETAIL_NO_STD_COMPLEX 1\n#define JAXCC_DETAIL_NO_OSTREAM 1\n";
  text += "#include \"jaxcc/detail/ffi_frame.h\"\n";
  if (cuda) text += "#include \"jaxcc/detail/cuda_call.h\"\n";
  text +=
      "\nXLA_FFI_Error* jaxcc::detail::RunFrame(XLA_FFI_CallFrame* frame, const FrameSpec& spec,\n"
      "                                       FrameBody body, FrameInstantiate instantiate,\n"
      "                                       FrameSlots slots) noexcept {\n";
  // What no function of the module takes is not compiled (frame_features.h); every feature is
  // RunFrameWith's default. A CUDA build is nvcc's seconds: its runtime carries everything.
  text += std::string("  return RunFrameWith<") +
          (cuda ? "CudaCallScope" : "NoCallScope" + FeatureArgument(features)) +
          ">(frame, spec, body, instantiate, slots);\n}\n";
  // The crash report's hook (crash_site.h, decision 150b): jaxcc's loader calls it once when it
  // maps the library, with the accessor of its thread-local slot.
  text +=
      "\njaxcc::detail::FrameSiteSlot jaxcc::detail::frame_site_slot = nullptr;\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) int jaxcc_crash_attach(\n"
      "    jaxcc::detail::FrameSiteSlot slot) noexcept {\n"
      "  jaxcc::detail::frame_site_slot = slot;\n  return 1;\n}\n";
  // _exit and _Exit end the process with no hook to run: the module's own calls bind to these
  // hidden definitions instead (assembler names, which leave the C library's declarations
  // alone), which have jaxcc's loader name the running kernel before the same system call
  // (decision 184).
  text +=
      "\n#include <sys/syscall.h>\n#include <unistd.h>\n"
      "namespace {\nvoid (*jaxcc_exit_report)(const char* how) = nullptr;\n}  // namespace\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) int jaxcc_exit_attach(\n"
      "    void (*report)(const char* how)) noexcept {\n"
      "  jaxcc_exit_report = report;\n  return 1;\n}\n"
      "[[noreturn]] __attribute__((visibility(\"hidden\"), used)) void jaxcc_exit(int status) "
      "noexcept __asm__(\"_exit\");\n"
      "[[noreturn]] __attribute__((visibility(\"hidden\"), used)) void jaxcc_Exit(int status) "
      "noexcept __asm__(\"_Exit\");\n"
      "void jaxcc_exit(int status) noexcept {\n"
      "  if (jaxcc_exit_report != nullptr) jaxcc_exit_report(\"_exit()\");\n"
      "  for (;;) ::syscall(SYS_exit_group, status);\n}\n"
      "void jaxcc_Exit(int status) noexcept {\n"
      "  if (jaxcc_exit_report != nullptr) jaxcc_exit_report(\"_Exit()\");\n"
      "  for (;;) ::syscall(SYS_exit_group, status);\n}\n";
  return text;
}

}  // namespace jaxcc::codegen
