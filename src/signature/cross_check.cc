// The anchor trusted the spec blindly; a mismatch then surfaced as a compile error inside
// generated code. Here it is reported at the parameter, in the user's terms.
#include "signature/cross_check.h"

#include <cstdint>

#include "argspec/arg_spec.h"
#include "signature/cpp_types.h"
#include "signature/inference.h"
#include "signature/proof_type.h"
#include "signature/signature_errors.h"

namespace jaxcc::signature {
namespace {

using argspec::AttrType;
using argspec::AttrTypeName;
using argspec::FunctionSpec;
using argspec::Param;
using argspec::ParamKind;

// What the C++ parameter is, in arg_spec words.
std::string Describe(const ParsedParam& p, const CppParamClass& c) {
  switch (c.role) {
    case CppRole::kInputTensor:
      return "an input tensor (`arg`)";
    case CppRole::kOutputTensor:
      return "an output tensor (`ret`)";
    case CppRole::kStream:
      return "the stream (`stream`)";
    case CppRole::kPool:
      return "the thread pool (`pool`)";
    case CppRole::kState:
      return "per-call-site state (`state`)";
    case CppRole::kAsync:
      return "the asynchronous tag (`async`)";
    case CppRole::kScratch:
      return "the call's workspace (`scratch`)";
    case CppRole::kScratchAlloc:
      return "the run-time scratch allocator (`scratch_alloc`)";
    case CppRole::kScalar:
      return std::string("a scalar (`attr.") + (p.name.empty() ? "<name>" : p.name) + ":" +
             AttrTypeName(*c.scalar) + "`)";
    case CppRole::kUnknown:
    case CppRole::kUnsupported:
      return "which jaxcc cannot pass: " + c.problem;
  }
  return "";
}

constexpr const char* kMatchAdvice =
    "; give the token in parentheses (the tokens follow the C++ parameters, in order), or "
    "change the C++ parameter";

// Describe() names the fitting token in parentheses for these.
bool Describable(const CppParamClass& c) {
  return c.role != CppRole::kUnknown && c.role != CppRole::kUnsupported;
}

bool IsHalfBits(AttrType t) { return t == AttrType::kFloat16 || t == AttrType::kBFloat16; }

class Checker {
 public:
  Checker(const std::vector<std::string>& tokens, const Declaration& decl, const SourceFile& source)
      : tokens_(tokens), decl_(decl), source_(source) {}

  Status CheckCount(const FunctionSpec& spec) const {
    if (spec.params.size() == decl_.params.size()) return OkStatus();
    std::string cpp_types;
    for (size_t i = 0; i < decl_.params.size(); ++i) {
      cpp_types += (i ? ", " : "") + decl_.params[i].type_text;
    }
    std::string message = "the spec of `" + decl_.name + "` has " +
                          Count(spec.params.size(), "entry", "entries") + " " +
                          argspec::FormatTokenList(tokens_) + " but the C++ declares " +
                          Count(decl_.params.size(), "parameter", "parameters") + " (" + cpp_types +
                          "); give one token per parameter, in order";
    return SignatureError(source_, NameSpan(decl_), message + InferredHint());
  }

  // Checks entry `i` and fills in the C++ name and a bare attribute's type.
  Status CheckParam(size_t i, Param* param) const {
    const ParsedParam& p = decl_.params[i];
    CppParamClass c = ClassifyParam(p);
    bool trusted = c.role == CppRole::kUnknown;
    switch (param->kind) {
      case ParamKind::kArg:
        if (c.role == CppRole::kInputTensor || c.role == CppRole::kOutputTensor || trusted) break;
        return Mismatch(i, p, c, "");
      case ParamKind::kRet:
        if (c.role == CppRole::kOutputTensor || trusted) break;
        return Mismatch(i, p, c,
                        c.role == CppRole::kInputTensor
                            ? "; a `const` tensor cannot be written: drop the `const` or make "
                              "the token `arg`"
                            : "");
      case ParamKind::kStream:
        if (c.role == CppRole::kStream || trusted ||
            (c.role == CppRole::kScalar && c.scalar == AttrType::kInt64)) {
          break;
        }
        return Mismatch(i, p, c, "; the stream is a `cudaStream_t` or an `int64_t`");
      case ParamKind::kAttr:
        return CheckAttr(i, p, c, param);
      case ParamKind::kPool:
        if (c.role == CppRole::kPool || trusted) break;
        return Mismatch(i, p, c, "; the pool is a `jaxcc::ThreadPool&`");
      case ParamKind::kState:
        if (c.role == CppRole::kState || trusted) break;
        return Mismatch(i, p, c, "; the state is a `jaxcc::State<T>&`");
      case ParamKind::kAsync:
        if (c.role == CppRole::kAsync || trusted) break;
        return Mismatch(i, p, c, "; the tag is a `jaxcc::Async` (by value)");
      case ParamKind::kScratch:
        if (c.role == CppRole::kScratch || trusted) break;
        return Mismatch(i, p, c, "; the workspace is a `jaxcc::Scratch`");
      case ParamKind::kScratchAlloc:
        if (c.role == CppRole::kScratchAlloc || trusted) break;
        return Mismatch(i, p, c, "; the allocator is a `jaxcc::ScratchAllocator&`");
    }
    param->name = p.name;
    return OkStatus();
  }

 private:
  static std::string Count(size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  }

  // "; from the C++, jaxcc would infer [arg, ret]" when the declaration reads cleanly.
  std::string InferredHint() const {
    auto inferred = InferSpec(decl_, source_);
    if (!inferred.ok()) return "";
    return " (from the C++ alone jaxcc reads " +
           argspec::FormatTokenList(argspec::ToTokens(*inferred)) + ")";
  }

  std::string Declared(const ParsedParam& p) const { return JoinTokens(p.tokens); }

  Error Mismatch(size_t i, const ParsedParam& p, const CppParamClass& c,
                 const std::string& advice) const {
    return SignatureError(source_, ParamSpan(decl_, i),
                          ParamLabel(p, i) + " of `" + decl_.name +
                              "` does not match the spec: the spec says `" + tokens_[i] +
                              "` but the C++ declares `" + Declared(p) + "`, " + Describe(p, c) +
                              (advice.empty() && Describable(c) ? kMatchAdvice : advice));
  }

  Status CheckAttr(size_t i, const ParsedParam& p, const CppParamClass& c, Param* param) const {
    const std::string& token = tokens_[i];
    if (!param->attr_type) {  // bare `attr.x`: the type comes from the C++
      if (c.role == CppRole::kUnknown) {
        return SignatureError(source_, ParamSpan(decl_, i),
                              "`" + token + "` takes its type from the C++, but " +
                                  ParamLabel(p, i) + " of `" + decl_.name + "` has type `" +
                                  p.type_text +
                                  "`, which jaxcc does not know: write the type "
                                  "in the token, e.g. `attr." +
                                  param->name + ":float32`");
      }
      if (c.role != CppRole::kScalar) return Mismatch(i, p, c, "");
      if (p.name != param->name) {
        return SignatureError(source_, ParamSpan(decl_, i),
                              "`" + token +
                                  "` takes its type from the C++ parameter of that name, but " +
                                  ParamLabel(p, i) + " of `" + decl_.name +
                                  "` stands at its position: use the "
                                  "same name, or write the type (`attr." +
                                  param->name + ":" + AttrTypeName(*c.scalar) + "`)");
      }
      param->attr_type = c.scalar;
      return OkStatus();
    }
    AttrType wanted = *param->attr_type;
    if (c.role == CppRole::kUnknown) return OkStatus();
    if (c.role != CppRole::kScalar) return Mismatch(i, p, c, "");
    if (*c.scalar == wanted || (IsHalfBits(wanted) && *c.scalar == AttrType::kUInt16)) {
      return OkStatus();
    }
    std::string advice =
        IsHalfBits(wanted)
            ? std::string("; ") + AttrTypeName(wanted) +
                  " attributes arrive as raw 16 bits: declare the parameter `uint16_t`"
            : "; make them agree: `attr." + param->name + ":" + AttrTypeName(*c.scalar) +
                  "`, or change the C++ type";
    return Mismatch(i, p, c, advice);
  }

  const std::vector<std::string>& tokens_;
  const Declaration& decl_;
  const SourceFile& source_;
};

}  // namespace

Result<FunctionSpec> CheckSpec(FunctionSpec spec, const std::vector<std::string>& tokens,
                               const Declaration& decl, const SourceFile& source) {
  Checker checker(tokens, decl, source);
  JAXCC_RETURN_IF_ERROR(checker.CheckCount(spec));
  for (size_t i = 0; i < spec.params.size(); ++i) {
    JAXCC_RETURN_IF_ERROR(checker.CheckParam(i, &spec.params[i]));
    spec.params[i].cpp_type = ProofType(spec.params[i], &decl.params[i]);
  }
  spec.namespaces = decl.namespaces;
  spec.source_index = decl.source_index;
  return spec;
}

}  // namespace jaxcc::signature
