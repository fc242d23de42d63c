#include "codegen/kernel_unit.h"

#include <cstdint>
#include <cstdio>

#include "codegen/signature_proof.h"
#include "codegen/source_use.h"

namespace jaxcc::codegen {
namespace {

using argspec::FunctionSpec;
using argspec::Param;
using argspec::ParamKind;

std::string QualifiedName(const FunctionSpec& spec) {
  std::string name;
  for (const std::string& ns : spec.namespaces) {
    if (!ns.empty()) name += "::" + ns;
  }
  return name + "::" + spec.name;
}

std::string BridgeCall(const FunctionSpec& spec) {
  std::string call = ProvenCallee(spec) + "(";  // the user's function, proven (decision 147)
  int arg = 0, ret = 0, attr = 0;
  for (size_t i = 0; i < spec.params.size(); ++i) {
    const Param& p = spec.params[i];
    if (i > 0) call += ", ";
    switch (p.kind) {
      case ParamKind::kArg:
        call += "args[" + std::to_string(arg++) + "]";
        break;
      case ParamKind::kRet:
        call += "rets[" + std::to_string(ret++) + "]";
        break;
      case ParamKind::kStream:
        call += "::jaxcc::detail::StreamHandle{stream}";
        break;
      case ParamKind::kAttr:
        call += "attr" + std::to_string(attr++) + "_" + p.name;
        break;
      case ParamKind::kPool:
        call += "*context.pool";
        break;
      case ParamKind::kState:
        call += "::jaxcc::detail::StateSlot{context.state}";
        break;
      case ParamKind::kAsync:
        call += "::jaxcc::Async{}";
        break;
      case ParamKind::kScratchAlloc:
        call += "*context.allocator";
        break;
      case ParamKind::kScratch:  // the hidden last result buffer
        call += "::jaxcc::Scratch{rets[" + std::to_string(spec.num_rets()) + "].data_ptr(), rets[" +
                std::to_string(spec.num_rets()) + "].nbytes()}";
        break;
    }
  }
  return call + ")";
}

// ", float attr0_scale, int64_t attr1_n": the attributes as the bridge and factories take them.
std::string AttrParams(const FunctionSpec& spec) {
  std::string params;
  int attr = 0;
  for (const Param& p : spec.params) {
    if (p.kind != ParamKind::kAttr) continue;
    params += ", " + std::string(argspec::AttrTypeCppName(*p.attr_type)) + " attr" +
              std::to_string(attr++) + "_" + p.name;
  }
  return params;
}

// "attr0_scale, attr1_n"
std::string AttrNames(const FunctionSpec& spec) {
  std::string names;
  int attr = 0;
  for (const Param& p : spec.params) {
    if (p.kind != ParamKind::kAttr) continue;
    names += (attr ? ", attr" : "attr") + std::to_string(attr) + "_" + p.name;
    ++attr;
  }
  return names;
}

// The factory XLA's instantiate stage calls and the deleter it runs with the executable; T is
// read from the function's own `jaxcc::State<T>&` parameter type.
std::string StateFactories(const FunctionSpec& spec) {
  if (!spec.has_state()) return "";
  std::string type = "::jaxcc::detail::FunctionState<decltype(&" + QualifiedName(spec) + ")>::type";
  std::string params = AttrParams(spec);
  if (!params.empty()) params = params.substr(2);
  // Checked here first, naming the function, before State<T>'s own generic checks.
  std::string value = "::jaxcc::detail::StateValue<" + type + ">::type";
  std::string attr_types;
  for (const Param& p : spec.params) {
    if (p.kind == ParamKind::kAttr) {
      attr_types += ", " + std::string(argspec::AttrTypeCppName(*p.attr_type));
    }
  }
  std::string text = "static_assert(std::is_destructible_v<" + value + ">, " +
                     CStringLiteral("jaxcc: `" + spec.name +
                                    "`: the T of its jaxcc::State<T>& parameter needs an "
                                    "accessible destructor (XLA destroys the state with the "
                                    "executable)") +
                     ");\n";
  text += "static_assert(::jaxcc::detail::kStateConstructible<" + value + attr_types + ">, " +
          CStringLiteral("jaxcc: `" + spec.name +
                         "`: the T of its jaxcc::State<T>& parameter must be constructible from "
                         "the function's attributes, in parameter order, or by default") +
          ");\n";
  text += "void* jaxcc_state_new_" + spec.name + "(" + params + ") {\n";
  text += "  return ::jaxcc::detail::NewState<" + type + ">(" + AttrNames(spec) + ");\n}\n";
  text += "void jaxcc_state_delete_" + spec.name + "(void* state) noexcept {\n";
  text += "  ::jaxcc::detail::DeleteState<" + type + ">(state);\n}\n";
  return text;
}

}  // namespace

std::string StateFactoryDeclarations(const FunctionSpec& spec) {
  if (!spec.has_state()) return "";
  std::string params = AttrParams(spec);
  if (!params.empty()) params = params.substr(2);
  return "void* jaxcc_state_new_" + spec.name + "(" + params + ");\nvoid jaxcc_state_delete_" +
         spec.name + "(void* state) noexcept;\n";
}

std::string CStringLiteral(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string BridgeDeclaration(const FunctionSpec& spec) {
  std::string decl = "void jaxcc_bridge_" + spec.name +
                     "(::jaxcc::Tensor* args, ::jaxcc::Tensor* rets, std::int64_t stream";
  if (spec.has_context()) decl += ", const ::jaxcc::detail::CallContext& context";
  return decl + AttrParams(spec) + ")";
}

std::string GenerateKernelUnit(const std::string& label, const std::string& user_source,
                               const std::vector<FunctionSpec>& specs) {
  std::string text =
      "// Generated by jaxcc: the user's source, then the bridges the FFI wrapper calls.\n";
  // <complex> and the iostreams only for sources that may use them (decisions 108, 129): nvcc
  // parses every header once per architecture and once for the host.
  if (!MayUseStdComplex(user_source)) {
    text += "#define JAXCC_DETAIL_NO_STD_COMPLEX 1  // the source names no complex type\n";
  }
  if (!MayUseStreams(user_source)) {
    text += "#define JAXCC_DETAIL_NO_OSTREAM 1  // the source names no stream\n";
  }
  text +=
      "#include \"jaxcc/jaxcc.h\"\n"
      "#include \"brainevent/tensor.h\"  // BE:: works without an include, as in brainevent\n";
  // jaxcc::ThreadPool / parallel_for and jaxcc::State (<mutex>, <condition_variable>, ...) only
  // for units that use them: every other kernel unit compiles as fast as before.
  bool context = false;
  for (const FunctionSpec& spec : specs) context = context || spec.has_context();
  if (context) text += "#include \"jaxcc/detail/call_context.h\"  // a pool or state parameter\n";
  text += "#line 1 " + CStringLiteral(label) + "\n";
  text += user_source;
  if (!user_source.empty() && user_source.back() != '\n') text += '\n';
  text += "#line 1 " + CStringLiteral(label + " (jaxcc bridge)") + "\n";
  text += "namespace jaxcc_generated {\n";
  for (const FunctionSpec& spec : specs) {
    text += SignatureProof(spec, QualifiedName(spec), label);
    text += BridgeDeclaration(spec) + " {\n";
    text += "  (void)args; (void)rets; (void)stream;\n";
    // jaxcc::parallel_for(begin, end, grain, fn) without a pool argument finds the call's pool.
    if (spec.has_pool()) text += "  ::jaxcc::detail::CurrentPoolScope pool_scope(context.pool);\n";
    text += "  " + BridgeCall(spec) + ";\n";
    text += "}\n";
    text += StateFactories(spec);
  }
  text += "}  // namespace jaxcc_generated\n";
  return text;
}

}  // namespace jaxcc::codegen
