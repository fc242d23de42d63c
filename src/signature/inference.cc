// Inference refuses rather than guesses: every parameter gets a role or the call is an error.
#include "signature/inference.h"

#include "argspec/arg_spec.h"
#include "signature/cpp_types.h"
#include "signature/proof_type.h"
#include "signature/signature_errors.h"

namespace jaxcc::signature {
namespace {

using argspec::FunctionSpec;
using argspec::Param;
using argspec::ParamKind;

bool IsStreamCandidate(const ParsedParam& p, const CppParamClass& c) {
  if (c.role == CppRole::kStream) return true;
  return c.role == CppRole::kScalar && c.scalar == argspec::AttrType::kInt64 && p.name == "stream";
}

Error UnpassableParam(const Declaration& decl, const SourceFile& source, size_t i,
                      const CppParamClass& c) {
  const ParsedParam& p = decl.params[i];
  std::string subject = "`" + decl.name + "`";
  if (p.is_variadic) {
    return SignatureError(source, ParamSpan(decl, i), subject + " is variadic: " + c.problem);
  }
  std::string message = ParamLabel(p, i) + " of " + subject + " has type `" + p.type_text +
                        "`, which jaxcc cannot pass: " + c.problem;
  if (c.role == CppRole::kUnknown) {
    message += "; if `" + p.core_type +
               "` is an alias of one of them, spell the type out or give the tokens explicitly";
  }
  return SignatureError(source, ParamSpan(decl, i), message);
}

// A scalar parameter becomes an attribute named after it, so its name must be one the arg_spec
// accepts, and unique. The lexer reads `$` and non-ASCII bytes as identifier characters and a
// repeated parameter name is left to the compiler, so neither is ruled out before this point.
Status CheckAttrName(const Declaration& decl, const SourceFile& source, const FunctionSpec& spec,
                     size_t i, argspec::AttrType type) {
  const ParsedParam& p = decl.params[i];
  std::string subject = ParamLabel(p, i) + " of `" + decl.name + "`";
  if (!argspec::IsCIdentifier(p.name) || p.name.size() > argspec::kMaxNameLength) {
    return SignatureError(
        source, ParamSpan(decl, i),
        subject + " would become an attribute of that name, which is not a C identifier of at " +
            "most " + std::to_string(argspec::kMaxNameLength) +
            " characters (letters, digits and `_`): rename the parameter, or give the tokens " +
            "explicitly with another attribute name, e.g. `attr.value:" +
            argspec::AttrTypeName(type) + "`");
  }
  for (size_t j = 0; j < spec.params.size(); ++j) {
    const Param& earlier = spec.params[j];
    if (earlier.kind != ParamKind::kAttr || earlier.name != p.name) continue;
    return SignatureError(source, ParamSpan(decl, i),
                          subject + " has the name of parameter #" + std::to_string(j + 1) +
                              "; each scalar parameter becomes an attribute named after it, and "
                              "attribute names must be unique: rename one of them");
  }
  return OkStatus();
}

// The ParamKind of a pool, state or async parameter (decision 94).
std::optional<ParamKind> ContextKind(CppRole role) {
  switch (role) {
    case CppRole::kPool:
      return ParamKind::kPool;
    case CppRole::kState:
      return ParamKind::kState;
    case CppRole::kAsync:
      return ParamKind::kAsync;
    case CppRole::kScratch:
      return ParamKind::kScratch;
    case CppRole::kScratchAlloc:
      return ParamKind::kScratchAlloc;
    default:
      return std::nullopt;
  }
}

int FirstOfKind(const FunctionSpec& spec, ParamKind kind) {
  for (size_t j = 0; j < spec.params.size(); ++j) {
    if (spec.params[j].kind == kind) return static_cast<int>(j);
  }
  return -1;
}

}  // namespace

Result<FunctionSpec> InferSpec(const Declaration& decl, const SourceFile& source) {
  FunctionSpec spec;
  spec.name = decl.name;
  spec.namespaces = decl.namespaces;
  spec.source_index = decl.source_index;
  std::vector<CppParamClass> classes;
  int streams = 0;
  size_t first_stream = 0;
  for (size_t i = 0; i < decl.params.size(); ++i) {
    const ParsedParam& p = decl.params[i];
    classes.push_back(ClassifyParam(p));
    const CppParamClass& c = classes.back();
    if (c.role == CppRole::kUnknown || c.role == CppRole::kUnsupported) {
      return UnpassableParam(decl, source, i, c);
    }
    if (c.role == CppRole::kScalar && p.name.empty()) {
      return SignatureError(source, ParamSpan(decl, i),
                            ParamLabel(p, i) + " of `" + decl.name + "` (`" + p.type_text +
                                "`) has no name: a scalar parameter becomes an attribute named "
                                "after it; name it, e.g. `" +
                                p.type_text + " value`");
    }
    if (!IsStreamCandidate(p, c)) continue;
    if (++streams == 1) {
      first_stream = i;
      continue;
    }
    std::string message = ParamLabel(p, i) + " of `" + decl.name + "` is a second stream (" +
                          ParamLabel(decl.params[first_stream], first_stream) +
                          " is the first); a function receives one stream";
    if (p.name == "stream" || decl.params[first_stream].name == "stream") {
      message +=
          ": to pass `stream` as an int64 attribute, give the tokens explicitly with "
          "`attr.stream:int64`";
    }
    return SignatureError(source, ParamSpan(decl, i), message);
  }
  for (size_t i = 0; i < decl.params.size(); ++i) {
    const ParsedParam& p = decl.params[i];
    const CppParamClass& c = classes[i];
    Param param{ParamKind::kAttr, p.name, c.scalar};
    if (streams == 1 && i == first_stream) {
      param = Param{ParamKind::kStream, p.name, std::nullopt};
    } else if (c.role == CppRole::kInputTensor) {
      param.kind = ParamKind::kArg;
    } else if (c.role == CppRole::kOutputTensor) {
      param.kind = ParamKind::kRet;
    } else if (auto context = ContextKind(c.role)) {
      if (int earlier = FirstOfKind(spec, *context); earlier >= 0) {
        return SignatureError(source, ParamSpan(decl, i),
                              ParamLabel(p, i) + " of `" + decl.name + "` is a second `" +
                                  argspec::ParamKindName(*context) + "` parameter (" +
                                  ParamLabel(decl.params[earlier], earlier) +
                                  " is the first); a function takes at most one");
      }
      param = Param{*context, p.name, std::nullopt};
    } else {
      JAXCC_RETURN_IF_ERROR(CheckAttrName(decl, source, spec, i, *c.scalar));
    }
    param.cpp_type = ProofType(param, &p);
    spec.params.push_back(param);
  }
  if (Status rule = argspec::CheckContextParams(spec); !rule.ok()) {
    return SignatureError(source, NameSpan(decl), rule.error().message);
  }
  if (spec.num_rets() == 0) {
    return SignatureError(source, NameSpan(decl),
                          "`" + decl.name +
                              "` has no output tensor: an exported function writes at least one "
                              "result; take it as a non-const `jaxcc::Tensor&` (inputs are "
                              "`const jaxcc::Tensor&`)");
  }
  return spec;
}

}  // namespace jaxcc::signature
