// The arg_spec grammar: one token per C++ parameter, in the C++ order.
#include "argspec/arg_spec.h"

#include <algorithm>

#include "argspec/keywords.h"
#include "argspec/suggest.h"
#include "util/text.h"

namespace jaxcc::argspec {
namespace {

// A parameter of `kind`, every other field at its default (the aggregate form leaves out fields
// Clang's -Wextra names).
Param ParamOf(ParamKind kind) {
  Param param;
  param.kind = kind;
  return param;
}

constexpr std::string_view kValidTokens =
    "valid tokens are `arg`, `ret`, `arg:<dtype>`, `ret:<dtype>`, `stream`, `attr.<name>`, "
    "`attr.<name>:<type>`, `pool`, `state`, `async`, `scratch` and `scratch_alloc` (aliases: "
    "`args`, `rets`, `ctx.stream`, `attrs.<name>`)";

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Tokens and names come from users (or fuzzers): control bytes are shown escaped and very long
// text is cut, so every message stays readable.
std::string Quote(std::string_view text) { return "`" + EscapeForMessage(text) + "`"; }

bool IsIdentifierStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool IsIdentifierChar(char c) { return IsIdentifierStart(c) || (c >= '0' && c <= '9'); }

// The guess behind "did you mean" for a token that is none of the valid forms.
std::string GuessToken(std::string_view token) {
  for (std::string_view prefix : {"attr:", "attr_", "attr-", "attrs:", "attrs_", "attribute."}) {
    if (StartsWith(token, prefix) && token.size() > prefix.size()) {
      return "attr." + std::string(token.substr(prefix.size()));
    }
  }
  for (std::string_view input : {"in", "input", "inputs", "const"}) {
    if (token == input) return "arg";
  }
  for (std::string_view output : {"out", "output", "outputs", "result", "res"}) {
    if (token == output) return "ret";
  }
  // A typed tensor written with the wrong role word or separator (`in:float32`, `arg.float32`),
  // or a bare dtype (`float32`): the role's guess with the dtype kept.
  size_t split = token.find_first_of(":.");
  if (split != std::string_view::npos && split > 0 && split + 1 < token.size()) {
    std::string head = GuessToken(token.substr(0, split));
    if (head.empty() && (token.substr(0, split) == "arg" || token.substr(0, split) == "ret")) {
      head = std::string(token.substr(0, split));
    }
    std::string_view dtype = token.substr(split + 1);
    if ((head == "arg" || head == "ret") && ElementTypeFromName(dtype)) {
      return head + ":" + std::string(dtype);
    }
  }
  if (ElementTypeFromName(token)) return "arg:" + std::string(token);
  std::vector<std::string> near = NearMisses(token, {"arg", "ret", "stream", "attr.<name>"}, 1);
  return near.empty() ? "" : near[0];
}

Error SpecError(const std::string& function_name, const std::string& detail) {
  return MakeError(ErrorKind::kSpec, "function " + Quote(function_name) + ": " + detail);
}

Error UnknownTokenError(const std::string& function_name, const std::string& token) {
  std::string detail = "unknown arg_spec token " + Quote(token) + "; ";
  std::string guess = GuessToken(token);
  if (!guess.empty()) detail += "did you mean " + Quote(guess) + "? ";
  return SpecError(function_name, detail + std::string(kValidTokens));
}

// Parses `attr.<name>[:<type>]` (canonical form, original spelling kept for messages).
Result<Param> ParseAttr(const std::string& function_name, std::string_view canonical,
                        const std::string& original) {
  std::string_view body = canonical.substr(5);
  size_t colon = body.find(':');
  std::string name(body.substr(0, colon));
  if (name.empty()) {
    return SpecError(function_name, Quote(original) +
                                        " has no attribute name; write `attr.<name>` (type from "
                                        "the C++ signature) or `attr.<name>:<type>`");
  }
  if (IsCppKeyword(name)) {
    return SpecError(function_name, "attribute name " + Quote(name) + " in " + Quote(original) +
                                        " is a C++ keyword; rename the parameter and the "
                                        "attribute (e.g. " +
                                        Quote(name + "_") + ")");
  }
  if (!IsCIdentifier(name)) {
    return SpecError(function_name, "attribute name " + Quote(name) + " in " + Quote(original) +
                                        " is not a C identifier; use letters, digits and `_`, "
                                        "not starting with a digit");
  }
  if (name.size() > kMaxNameLength) {
    return SpecError(function_name, "attribute name " + Quote(name) + " is " +
                                        std::to_string(name.size()) + " characters long; use a " +
                                        "name of at most " + std::to_string(kMaxNameLength));
  }
  Param param = ParamOf(ParamKind::kAttr);
  param.name = name;
  if (colon == std::string_view::npos) return param;
  std::string type_name(body.substr(colon + 1));
  if (type_name.empty()) {
    return SpecError(function_name, Quote(original) + " has no type after `:`; valid types: " +
                                        AttrTypeNameList());
  }
  param.attr_type = AttrTypeFromName(type_name);
  if (param.attr_type) return param;
  if (StartsWith(type_name, "complex")) {
    return SpecError(function_name, Quote(original) +
                                        ": XLA FFI cannot pass complex attributes; pass the real "
                                        "and imaginary parts as two float attributes");
  }
  std::string detail =
      "unknown attribute type " + Quote(type_name) + " in " + Quote(original) + "; ";
  if (auto guess = SuggestAttrTypeName(type_name)) detail += "did you mean " + Quote(*guess) + "? ";
  return SpecError(function_name, detail + "valid types: " + AttrTypeNameList());
}

// Parses `arg:<dtype>` / `ret:<dtype>` (canonical form, original spelling kept for messages).
Result<Param> ParseTypedTensor(const std::string& function_name, ParamKind kind,
                               std::string_view canonical, const std::string& original) {
  std::string type_name(canonical.substr(4));  // after "arg:" or "ret:"
  if (type_name.empty()) {
    return SpecError(function_name, Quote(original) + " has no dtype after `:`; write `" +
                                        ParamKindName(kind) + "` (any dtype) or `" +
                                        ParamKindName(kind) +
                                        ":<dtype>`; valid dtypes: " + ElementTypeNameList());
  }
  Param param = ParamOf(kind);
  param.dtype = ElementTypeFromName(type_name);
  if (param.dtype) return param;
  std::string detail = "unknown dtype " + Quote(type_name) + " in " + Quote(original) + "; ";
  if (auto guess = SuggestElementTypeName(type_name)) {
    detail += "did you mean " + Quote(std::string(ParamKindName(kind)) + ":" + *guess) + "? ";
  }
  return SpecError(function_name,
                   detail + "valid dtypes (numpy's names): " + ElementTypeNameList() +
                       "; or write a bare `" + ParamKindName(kind) + "` for any dtype");
}

Result<Param> ParseToken(const std::string& function_name, const std::string& token) {
  if (token.empty()) {
    return SpecError(function_name, "a token is empty; " + std::string(kValidTokens));
  }
  std::string canonical = NormalizeToken(token);
  if (canonical == "arg") return ParamOf(ParamKind::kArg);
  if (canonical == "ret") return ParamOf(ParamKind::kRet);
  if (canonical == "stream") return ParamOf(ParamKind::kStream);
  if (canonical == "pool") return ParamOf(ParamKind::kPool);
  if (canonical == "state") return ParamOf(ParamKind::kState);
  if (canonical == "async") return ParamOf(ParamKind::kAsync);
  if (canonical == "scratch") return ParamOf(ParamKind::kScratch);
  if (canonical == "scratch_alloc") return ParamOf(ParamKind::kScratchAlloc);
  if (canonical == "attr" || canonical == "attrs") {
    return SpecError(function_name, Quote(token) +
                                        " needs a name: write `attr.<name>` (type from the C++ "
                                        "signature) or `attr.<name>:<type>`");
  }
  if (StartsWith(canonical, "attr.")) return ParseAttr(function_name, canonical, token);
  if (StartsWith(canonical, "arg:")) {
    return ParseTypedTensor(function_name, ParamKind::kArg, canonical, token);
  }
  if (StartsWith(canonical, "ret:")) {
    return ParseTypedTensor(function_name, ParamKind::kRet, canonical, token);
  }
  return UnknownTokenError(function_name, token);
}

// 1-based positions read better in messages about a list the user typed.
std::string Positions(size_t first, size_t second) {
  return "(positions " + std::to_string(first + 1) + " and " + std::to_string(second + 1) + ")";
}

}  // namespace

bool IsCIdentifier(std::string_view text) {
  if (text.empty() || !IsIdentifierStart(text[0])) return false;
  if (!std::all_of(text.begin(), text.end(), IsIdentifierChar)) return false;
  return !IsCppKeyword(text);
}

std::string NormalizeToken(std::string_view token) {
  if (token == "args") return "arg";
  if (token == "rets") return "ret";
  if (token == "ctx.stream") return "stream";
  if (StartsWith(token, "attrs.")) return "attr." + std::string(token.substr(6));
  if (StartsWith(token, "args:")) return "arg:" + std::string(token.substr(5));
  if (StartsWith(token, "rets:")) return "ret:" + std::string(token.substr(5));
  return std::string(token);
}

Status ValidateFunctionName(const std::string& function_name) {
  if (function_name.empty()) {
    return MakeError(ErrorKind::kSpec,
                     "the function name is empty; give the unqualified name of the C++ function "
                     "to export");
  }
  if (IsCppKeyword(function_name)) {
    return MakeError(ErrorKind::kSpec, Quote(function_name) +
                                           " is a C++ keyword, not a function name; export a "
                                           "function with another name");
  }
  if (!IsCIdentifier(function_name)) {
    return MakeError(ErrorKind::kSpec,
                     Quote(function_name) +
                         " is not a valid function name: give the unqualified name of the C++ "
                         "function, a C identifier (letters, digits and `_`, not starting with "
                         "a digit; namespaces are found in the source, not written here)");
  }
  if (function_name.size() > kMaxNameLength) {
    return MakeError(ErrorKind::kSpec,
                     "the function name " + Quote(function_name) + " is " +
                         std::to_string(function_name.size()) +
                         " characters long; it names an FFI target and a symbol, so export a "
                         "function whose name has at most " +
                         std::to_string(kMaxNameLength) + " characters (e.g. a short wrapper)");
  }
  return OkStatus();
}

Result<FunctionSpec> ParseArgSpec(const std::string& function_name,
                                  const std::vector<std::string>& tokens) {
  return ParseArgSpec(function_name, tokens, nullptr);
}

Result<FunctionSpec> ParseArgSpec(const std::string& function_name,
                                  const std::vector<std::string>& tokens, int* offending_token) {
  int ignored = -1;
  int& offending = offending_token ? *offending_token : ignored;
  offending = -1;
  JAXCC_RETURN_IF_ERROR(ValidateFunctionName(function_name));
  if (tokens.empty()) {
    return SpecError(function_name,
                     "the arg_spec is empty; list one token per C++ parameter, in order, e.g. "
                     "[arg, ret] (at least one `ret` is required)");
  }
  FunctionSpec spec;
  spec.name = function_name;
  size_t stream_at = tokens.size();
  for (size_t i = 0; i < tokens.size(); ++i) {
    auto param = ParseToken(function_name, tokens[i]);
    if (!param.ok()) {
      offending = static_cast<int>(i);
      return param.error();
    }
    if (param->kind == ParamKind::kStream) {
      if (stream_at < tokens.size()) {
        offending = static_cast<int>(i);
        return SpecError(function_name, "`stream` appears twice " + Positions(stream_at, i) +
                                            "; a function receives at most one stream");
      }
      stream_at = i;
    }
    if (param->kind == ParamKind::kPool || param->kind == ParamKind::kState ||
        param->kind == ParamKind::kAsync || param->kind == ParamKind::kScratch ||
        param->kind == ParamKind::kScratchAlloc) {
      for (size_t j = 0; j < spec.params.size(); ++j) {
        if (spec.params[j].kind != param->kind) continue;
        offending = static_cast<int>(i);
        return SpecError(function_name, Quote(ParamKindName(param->kind)) + " appears twice " +
                                            Positions(j, i) + "; a function takes at most one");
      }
    }
    if (param->kind == ParamKind::kAttr) {
      for (size_t j = 0; j < spec.params.size(); ++j) {
        if (spec.params[j].kind != ParamKind::kAttr || spec.params[j].name != param->name) continue;
        offending = static_cast<int>(i);
        return SpecError(function_name, "attribute " + Quote(param->name) + " appears twice " +
                                            Positions(j, i) + "; attribute names must be unique");
      }
    }
    spec.params.push_back(std::move(param).value());
  }
  JAXCC_RETURN_IF_ERROR(CheckContextParams(spec));
  if (spec.num_rets() == 0) {
    return SpecError(function_name,
                     "the arg_spec " + FormatTokenList(tokens) +
                         " has no `ret`; an exported function must write at least one output "
                         "tensor: add `ret` at the position of its non-const Tensor parameter");
  }
  return spec;
}

Status CheckContextParams(const FunctionSpec& spec) {
  if (spec.has_pool() && spec.is_async()) {
    return SpecError(spec.name,
                     "takes both `pool` (jaxcc::ThreadPool&) and `async` (jaxcc::Async): an "
                     "asynchronous function already runs as a task of XLA's thread pool, after "
                     "the call that could lend the pool has returned; drop one of the two (split "
                     "the work into several asynchronous functions to use more cores)");
  }
  if (spec.has_scratch_alloc() && spec.is_async()) {
    return SpecError(spec.name,
                     "takes both `scratch_alloc` (jaxcc::ScratchAllocator&) and `async` "
                     "(jaxcc::Async): the allocator lives as long as the handler's call, which "
                     "an asynchronous function outlives; drop one of the two (a `scratch` "
                     "workspace sized at trace time works in asynchronous functions)");
  }
  return OkStatus();
}

std::vector<std::string> ToTokens(const FunctionSpec& spec) {
  std::vector<std::string> tokens;
  for (const Param& p : spec.params) {
    switch (p.kind) {
      case ParamKind::kArg:
      case ParamKind::kRet:
        // The dtype is part of the token, so the cache key (module_key.cc) changes with it.
        tokens.push_back(std::string(ParamKindName(p.kind)) +
                         (p.dtype ? std::string(":") + ElementTypeName(*p.dtype) : ""));
        break;
      case ParamKind::kStream:
      case ParamKind::kPool:
      case ParamKind::kState:
      case ParamKind::kAsync:
      case ParamKind::kScratch:
      case ParamKind::kScratchAlloc:
        tokens.push_back(ParamKindName(p.kind));
        break;
      case ParamKind::kAttr:
        tokens.push_back("attr." + p.name +
                         (p.attr_type ? std::string(":") + AttrTypeName(*p.attr_type) : ""));
        break;
    }
  }
  return tokens;
}

std::string FormatTokenList(const std::vector<std::string>& tokens) {
  std::string text = "[";
  constexpr size_t kMaxShown = 32;  // a list of thousands of tokens is quoted by its start
  for (size_t i = 0; i < tokens.size() && i < kMaxShown; ++i) {
    text += (i ? ", " : "") + EscapeForMessage(tokens[i]);
  }
  if (tokens.size() > kMaxShown) {
    text += ", ... (" + std::to_string(tokens.size()) + " tokens)";
  }
  return text + "]";
}

}  // namespace jaxcc::argspec
