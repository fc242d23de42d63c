// Locating and wording errors about one declaration's parameters.
#pragma once

#include <string>

#include "signature/declarations.h"
#include "signature/diagnostic.h"
#include "signature/resolve.h"
#include "util/result.h"

namespace jaxcc::signature {

/// A kSignature error with the diagnostic block of FormatDiagnostic.
Error SignatureError(const SourceFile& source, const Span& span, const std::string& message);

/// The declaration's name token.
Span NameSpan(const Declaration& decl);

/// Parameter `index` of `decl` as written (default argument excluded); the closing parenthesis
/// for an empty parameter.
Span ParamSpan(const Declaration& decl, size_t index);

/// "parameter `x`" when the parameter has a name, else "parameter #3" (1-based).
std::string ParamLabel(const ParsedParam& param, size_t index);

}  // namespace jaxcc::signature
