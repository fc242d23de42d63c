// Parsing and validating the compact arg_spec token list ("arg", "ret", "stream",
// "attr.x:float32").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "argspec/function_spec.h"
#include "util/result.h"

namespace jaxcc::argspec {

/// Longest function or attribute name accepted. Names become FFI target names, symbols and
/// attribute keys; a longer one is almost surely a mistake and would make every message huge.
inline constexpr size_t kMaxNameLength = 255;

/// True for a plain C identifier ([A-Za-z_][A-Za-z0-9_]*) that is not a C++ keyword.
bool IsCIdentifier(std::string_view text);

/// Maps the aliases (`args`, `rets`, `ctx.stream`, `attrs.<name>`, `args:<dtype>`,
/// `rets:<dtype>`) onto canonical tokens.
std::string NormalizeToken(std::string_view token);

/// Parses the tokens of `function_name`. A bare `attr.<name>` leaves `attr_type` empty so the
/// signature reader can fill it in; `arg:<dtype>`/`ret:<dtype>` set Param::dtype (a bare
/// `arg`/`ret` leaves it empty: any dtype). Errors (ErrorKind::kSpec) name the function and the
/// token: unknown token, type or dtype (with a "did you mean"), a name that is not a C identifier,
/// no `ret`, two `stream`s, a repeated attribute name.
Result<FunctionSpec> ParseArgSpec(const std::string& function_name,
                                  const std::vector<std::string>& tokens);

/// Same as above; on error also stores in `*offending_token` the index of the token at fault, or
/// -1 when the error concerns the name or the list as a whole (no `ret`, empty list), so callers
/// that know where each token came from can point at it.
Result<FunctionSpec> ParseArgSpec(const std::string& function_name,
                                  const std::vector<std::string>& tokens, int* offending_token);

/// Checks a function name on its own (C identifier, not a keyword); kSpec error otherwise.
Status ValidateFunctionName(const std::string& function_name);

/// The rules on `pool`, `state` and `async` that hold however the spec was written (tokens or
/// inferred from the C++): a function takes the pool or runs asynchronously, not both.
Status CheckContextParams(const FunctionSpec& spec);

/// "[arg, ret, attr.s:float32]": a token list as error messages quote it.
std::string FormatTokenList(const std::vector<std::string>& tokens);

/// Canonical token spelling of a parsed spec, e.g. {"arg:float32", "ret", "attr.scale:float32"}.
std::vector<std::string> ToTokens(const FunctionSpec& spec);

}  // namespace jaxcc::argspec
