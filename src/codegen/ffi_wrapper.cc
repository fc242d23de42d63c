#include "codegen/ffi_wrapper.h"

#include "codegen/kernel_unit.h"

namespace jaxcc::codegen {
namespace {

using argspec::FunctionSpec;
using argspec::Param;
using argspec::ParamKind;

struct HandlerParts {
  std::string parameters;  // impl parameter list, in binding order
  std::string binding;     // .Ctx/.Arg/.Ret/.Attr chain, same order
};

// XLA binds context first, then args, rets and attributes; the user's order is restored in the
// bridge call, so the handler only has to follow XLA's order.
HandlerParts DescribeHandler(const FunctionSpec& spec, bool bind_stream) {
  HandlerParts parts;
  auto add_param = [&](const std::string& decl) {
    parts.parameters += parts.parameters.empty() ? "" : ",\n    ";
    parts.parameters += decl;
  };
  if (bind_stream) {
    add_param("void* stream");
    parts.binding += "\n        .Ctx<ffi::PlatformStream<void*>>()";
  }
  int index = 0;
  for (const Param& p : spec.params) {
    if (p.kind != ParamKind::kArg) continue;
    add_param("ffi::AnyBuffer arg" + std::to_string(index++));
    parts.binding += "\n        .Arg<ffi::AnyBuffer>()  /* " + p.name + " */";
  }
  index = 0;
  for (const Param& p : spec.params) {
    if (p.kind != ParamKind::kRet) continue;
    add_param("ffi::Result<ffi::AnyBuffer> ret" + std::to_string(index++));
    parts.binding += "\n        .Ret<ffi::AnyBuffer>()  /* " + p.name + " */";
  }
  index = 0;
  for (const Param& p : spec.params) {
    if (p.kind != ParamKind::kAttr) continue;
    std::string cpp_type = argspec::AttrTypeCppName(*p.attr_type);
    add_param(cpp_type + " attr" + std::to_string(index++) + "_" + p.name);
    parts.binding += "\n        .Attr<" + cpp_type + ">(" + CStringLiteral(p.name) + ")";
  }
  return parts;
}

// Declares `array` holding one Tensor per parameter of `kind`; conversion errors name the
// user's parameter.
std::string TensorArray(const FunctionSpec& spec, ParamKind kind, const char* array,
                        const char* convert, const char* prefix) {
  std::string items;
  int count = 0;
  for (const Param& p : spec.params) {
    if (p.kind != kind) continue;
    items += (count ? ",\n        " : "") + std::string("::jaxcc::detail::") + convert + "(" +
             prefix + std::to_string(count) + ", " + CStringLiteral(p.name) + ")";
    ++count;
  }
  if (count == 0) return std::string("    ::jaxcc::Tensor* ") + array + " = nullptr;\n";
  return std::string("    ::jaxcc::Tensor ") + array + "[" + std::to_string(count) +
         "] = {\n        " + items + "};\n";
}

std::string GenerateHandler(const FunctionSpec& spec, const WrapperOptions& options) {
  bool cuda = options.platform == "cuda";
  bool bind_stream = cuda && spec.has_stream();
  HandlerParts parts = DescribeHandler(spec, bind_stream);
  std::string impl = "jaxcc_impl_" + spec.name;
  std::string symbol = HandlerSymbol(spec.name);

  std::string bridge_args = "args, rets, ";
  bridge_args += bind_stream ? "reinterpret_cast<std::int64_t>(stream)" : "0";
  int attr = 0;
  for (const Param& p : spec.params) {
    if (p.kind == ParamKind::kAttr) bridge_args += ", attr" + std::to_string(attr++) + "_" + p.name;
  }

  std::string text;
  text += "// " + spec.name + "\n";
  text += "static ffi::Error " + impl + "(" + parts.parameters + ") {\n";
  text += "  try {\n";
  text += TensorArray(spec, ParamKind::kArg, "args", "TensorFromBuffer", "arg");
  text += TensorArray(spec, ParamKind::kRet, "rets", "TensorFromResult", "ret");
  // CUDA: the device of XLA's stream is current during the call, and an error the function left
  // (a failed launch nobody checked) is raised with its name instead of being swallowed.
  if (bind_stream) {
    text += "    ::jaxcc::detail::CudaCallScope cuda_call(stream, " + CStringLiteral(spec.name) +
            ");\n";
  }
  text += "    ::jaxcc_generated::jaxcc_bridge_" + spec.name + "(" + bridge_args + ");\n";
  if (bind_stream) text += "    cuda_call.Check();\n";
  text += "    return ffi::Error::Success();\n";
  text += "  } catch (...) {\n";
  text +=
      "    return ::jaxcc::detail::ErrorFromCurrentException(" + CStringLiteral(spec.name) + ");\n";
  text += "  }\n";
  text += "}\n\n";
  text += "extern \"C\" __attribute__((visibility(\"default\"))) XLA_FFI_Error* " + symbol +
          "(XLA_FFI_CallFrame* call_frame);\n";
  // The binding is parenthesised: template commas inside it would split the macro's arguments.
  text += "XLA_FFI_DEFINE_HANDLER_SYMBOL(" + symbol + ", " + impl + ",\n    (ffi::Ffi::Bind()" +
          parts.binding + ")";
  if (cuda && options.allow_cuda_graph) text += ",\n    {ffi::Traits::kCmdBufferCompatible}";
  text += ");\n\n";
  return text;
}

}  // namespace

std::string HandlerSymbol(const std::string& function_name) { return "jaxcc_ffi_" + function_name; }

std::string GenerateFfiWrapper(const std::vector<FunctionSpec>& specs,
                               const WrapperOptions& options) {
  const bool cuda = options.platform == "cuda";
  std::string text = "// Generated by jaxcc: XLA FFI handlers of module " + options.module_name +
                     " (" + options.platform + ").\n";
  text +=
      "#include <cstdint>\n\n"
      "#include \"xla/ffi/api/ffi.h\"\n"
      "#include \"jaxcc/tensor.h\"\n"
      "#include \"jaxcc/detail/ffi_bridge.h\"\n";
  if (cuda) text += "#include \"jaxcc/detail/cuda_call.h\"\n";
  text +=
      "\n"
      "namespace ffi = ::xla::ffi;\n\n"
      "namespace jaxcc_generated {\n";
  for (const FunctionSpec& spec : specs) text += BridgeDeclaration(spec) + ";\n";
  text += "}  // namespace jaxcc_generated\n\n";
  for (const FunctionSpec& spec : specs) text += GenerateHandler(spec, options);
  return text;
}

}  // namespace jaxcc::codegen
