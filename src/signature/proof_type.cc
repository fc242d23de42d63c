// Only what a function type can show is spelled: a by-value parameter's top-level `const` is no
// part of it (`void f(const T)` and `void f(T)` are one function), so it is written for the
// reader but proves nothing; that one the expander must get right on its own (decision 147).
#include "signature/proof_type.h"

#include "signature/cpp_types.h"

namespace jaxcc::signature {

using argspec::ParamKind;

std::string ProofType(const argspec::Param& param, const ParsedParam* declared) {
  bool by_reference = declared != nullptr && declared->ref == RefKind::kLValue;
  switch (param.kind) {
    case ParamKind::kArg:
      if (declared == nullptr) return "";
      return by_reference ? "const ::jaxcc::Tensor&" : "const ::jaxcc::Tensor";
    case ParamKind::kRet:
      if (declared == nullptr) return "";
      return by_reference ? "::jaxcc::Tensor&" : "::jaxcc::Tensor";
    case ParamKind::kAttr: {
      if (!param.attr_type) return "";
      // The declaration's own spelling when it names the same scalar (`long long` and `long`
      // are both int64 to jaxcc, but two types to the compiler).
      std::string type = argspec::AttrTypeCppName(*param.attr_type);
      if (declared != nullptr && ScalarAttrType(declared->core_type) == param.attr_type) {
        type = declared->core_type;
      }
      return by_reference ? "const " + type + "&" : type;
    }
    default:
      return "";
  }
}

}  // namespace jaxcc::signature
