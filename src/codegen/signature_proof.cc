// A function type shows parameter types, references and their const, and picks one overload;
// template argument deduction against it (`R (*)(P...)`, R deduced so any return type passes)
// is what turns a disagreement into an error that names both types. A SFINAE probe ahead of it
// gives the error a fixed, recognisable first line (build/compile_diagnostics.h reads it).
#include "codegen/signature_proof.h"

#include "codegen/kernel_unit.h"

namespace jaxcc::codegen {
namespace {

using argspec::FunctionSpec;
using argspec::Param;

// "(const jaxcc::Tensor&, jaxcc::Tensor&, float, <deduced>)": the reading, for the message.
std::string Reading(const FunctionSpec& spec) {
  std::string text = "(";
  for (size_t i = 0; i < spec.params.size(); ++i) {
    const Param& p = spec.params[i];
    std::string type =
        p.cpp_type.empty() ? std::string("<") + argspec::ParamKindName(p.kind) + ">" : p.cpp_type;
    if (type.rfind("::", 0) == 0) type = type.substr(2);
    for (size_t at = type.find(" ::"); at != std::string::npos; at = type.find(" ::")) {
      type.erase(at + 1, 2);
    }
    text += (i ? ", " : "") + type;
  }
  return text + ")";
}

}  // namespace

std::string ProvenCallee(const FunctionSpec& spec) { return "jaxcc_fn_" + spec.name; }

std::string SignatureProof(const FunctionSpec& spec, const std::string& qualified_name,
                           const std::string& label) {
  std::string binder = "jaxcc_read_" + spec.name;
  std::string templates = "class R";
  std::string params;
  for (size_t i = 0; i < spec.params.size(); ++i) {
    const Param& p = spec.params[i];
    std::string type = p.cpp_type;
    if (type.empty()) {  // not jaxcc's to claim: the compiler deduces it
      type = "U" + std::to_string(i);
      templates += ", class " + type;
    }
    params += (i ? ", " : "") + type;
  }
  std::string message =
      "jaxcc signature proof: jaxcc reads `" + spec.name + "` as `" + Reading(spec) +
      "`, but the compiler's `" + spec.name +
      "` has other parameter types (or is overloaded with none of these). A macro or a "
      "-D/-U flag jaxcc did not see the same way is the usual cause: pass the flag in "
      "extra_cflags (extra_cuda_cflags for nvcc sources), or state the signature in the "
      "annotation's tokens, e.g. `// @jaxcc " +
      spec.name + " arg ret attr.x:float64`";
  std::string text = "struct " + binder + " {\n  template <" + templates +
                     "> static constexpr auto Bind(R (*fn)(" + params + ")) { return fn; }\n};\n";
  text += "template <class Read, class = decltype(Read::Bind(&" + qualified_name +
          "))> constexpr bool jaxcc_proves_" + spec.name + "(int) { return true; }\n";
  text += "template <class Read> constexpr bool jaxcc_proves_" + spec.name +
          "(...) { return false; }\n";
  // Both lines that can fail report at the user's line. The assertion's operand is a constant
  // spelled like the function, in a namespace of its own, and placed at the column of the
  // name as the user wrote it: the compiler's caret then underlines that name (before, it sat
  // at the column of the generated expression, past the end of a short annotation). nvcc
  // reports the `static_assert` keyword's line, g++ the operand's place: both sit at the line.
  std::string at = spec.line > 0
                       ? "#line " + std::to_string(spec.line) + " " + CStringLiteral(label) + "\n"
                       : "";
  std::string proof = "jaxcc_proof_" + spec.name;
  text += "namespace " + proof + " {\nconstexpr bool " + spec.name + " = jaxcc_proves_" +
          spec.name + "<" + binder + ">(0);\n" + at + "static_assert(\n" + at +
          std::string(spec.line > 0 && spec.column > 1 ? spec.column - 1 : 0, ' ') + spec.name +
          ", " + CStringLiteral(message) + ");\n}  // namespace " + proof + "\n";
  text += at + "constexpr auto " + ProvenCallee(spec) + " = " + binder + "::Bind(&" +
          qualified_name + ");\n";
  text += "#line 1 " + CStringLiteral(label + " (jaxcc bridge)") + "\n";
  return text;
}

}  // namespace jaxcc::codegen
