// Shared by inference and the cross-check so both point at parameters the same way.
#include "signature/signature_errors.h"

namespace jaxcc::signature {

Error SignatureError(const SourceFile& source, const Span& span, const std::string& message) {
  return MakeError(ErrorKind::kSignature,
                   FormatDiagnostic(source.label, source.text, span, "error", message));
}

Span NameSpan(const Declaration& decl) { return SpanOf(decl.name_token); }

Span ParamSpan(const Declaration& decl, size_t index) {
  if (index >= decl.params.size() || decl.params[index].tokens.empty()) {
    return SpanOf(decl.close_paren);
  }
  const std::vector<Token>& tokens = decl.params[index].tokens;
  return SpanOf(tokens.front(), tokens.back());
}

std::string ParamLabel(const ParsedParam& param, size_t index) {
  if (!param.name.empty()) return "parameter `" + param.name + "`";
  return "parameter #" + std::to_string(index + 1);
}

}  // namespace jaxcc::signature
