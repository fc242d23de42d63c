// ResolveSpecs: lex every source once, collect annotations and declarations, then resolve each
// requested function against them.
#include "signature/resolve.h"

#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "argspec/arg_spec.h"
#include "argspec/sharding_rule.h"
#include "argspec/suggest.h"
#include "signature/active_code.h"
#include "signature/annotations.h"
#include "signature/cross_check.h"
#include "signature/declarations.h"
#include "signature/inference.h"
#include "signature/lookup.h"
#include "signature/proof_type.h"
#include "signature/signature_errors.h"
#include "signature/stamped_functions.h"
#include "signature/uncertain_const.h"

namespace jaxcc::signature {
namespace {

using argspec::FunctionSpec;
using argspec::ParamKind;

// Everything read from the sources, once.
struct Module {
  Module(const std::vector<SourceFile>& files,
         const std::vector<std::vector<std::string>>& source_flags)
      : sources(files) {
    for (size_t i = 0; i < files.size(); ++i) {
      flags.push_back(i < source_flags.size() ? MacrosFromFlags(source_flags[i])
                                              : std::vector<CommandLineMacro>{});
      uncertain.emplace_back();
      active.push_back(DropDisabledBranches(Lex(files[i].text), flags.back(), &uncertain.back()));
      code.push_back(CodeTokens(active.back()));
      SourceScan scan = ScanDeclarations(code.back(), static_cast<int>(i));
      declarations.insert(declarations.end(), scan.declarations.begin(), scan.declarations.end());
      ranges.push_back(std::move(scan.ranges));
    }
    annotations = FindAnnotations(files, active);
    index = IndexByName(declarations);  // after the last insertion: it points into the vector
  }
  Module(const Module&) = delete;  // `index` and the jobs point into this object
  Module& operator=(const Module&) = delete;

  const Annotation* AnnotationOf(const std::string& name) const {
    for (const Annotation& a : annotations.annotations) {
      if (a.function == name) return &a;
    }
    return nullptr;
  }

  // First use of `name` as an identifier in code, e.g. as a macro argument.
  const Token* FirstUse(const std::string& name, int* source_index) const {
    for (size_t i = 0; i < code.size(); ++i) {
      for (const Token& t : code[i]) {
        if (!t.IsIdentifier(name)) continue;
        *source_index = static_cast<int>(i);
        return &t;
      }
    }
    return nullptr;
  }

  // The sources with their macros expanded: made on first need, which a module whose entry
  // points are all declared as written never has.
  const ExpandedModule& Expanded() const {
    if (!expanded) expanded = ExpandModule(active, flags);
    return *expanded;
  }

  // The first code token after `a` in its source (what the annotation annotates).
  const Token* NextCode(const Annotation& a) const {
    for (const Token& t : code[a.source_index]) {
      if (t.offset > a.offset) return &t;
    }
    return nullptr;
  }

  const std::vector<SourceFile>& sources;
  std::vector<std::vector<CommandLineMacro>> flags;     // per source, from its compile flags
  std::vector<std::vector<UncertainRegion>> uncertain;  // per source
  std::vector<std::vector<Token>> active;
  std::vector<std::vector<Token>> code;
  std::vector<Declaration> declarations;
  DeclarationIndex index;
  std::vector<std::vector<NamespaceRange>> ranges;
  AnnotationScan annotations;
  mutable std::unique_ptr<ExpandedModule> expanded;
};

// One function to resolve.
struct Job {
  std::string name;
  std::optional<std::vector<std::string>> tokens;
  const Annotation* annotation = nullptr;  // its annotation, when there is one
  bool tokens_from_annotation = false;
};

Error AtAnnotation(const Module& m, const Annotation& a, const Span& span, ErrorKind kind,
                   const std::string& message) {
  const SourceFile& source = m.sources[a.source_index];
  return MakeError(kind, FormatDiagnostic(source.label, source.text, span, "error", message));
}

Result<FunctionSpec> ParseTokens(const Module& m, const Job& job) {
  int offending = -1;
  auto spec = argspec::ParseArgSpec(job.name, *job.tokens, &offending);
  if (spec.ok() || !job.tokens_from_annotation) return spec;
  const Annotation& a = *job.annotation;
  Span span = offending >= 0 && offending < static_cast<int>(a.token_spans.size())
                  ? a.token_spans[offending]
                  : a.function_span;
  return AtAnnotation(m, a, span, ErrorKind::kSpec, spec.error().message);
}

Error NotFound(const Module& m, const Job& job) {
  const Token* next = job.annotation ? m.NextCode(*job.annotation) : nullptr;
  if (auto why = WhyNotStamped(job.name, m.Expanded(), m.sources, job.annotation, next)) {
    return *why;
  }
  std::vector<std::string> names;
  for (const Declaration& d : m.declarations) names.push_back(d.name);
  for (const Annotation& a : m.annotations.annotations) names.push_back(a.function);
  std::string message = "function `" + job.name + "` not found in the sources";
  int use_source = 0;
  if (const Token* use = m.FirstUse(job.name, &use_source)) {
    message += ": it appears at " + m.sources[use_source].label + ":" + std::to_string(use->line) +
               ":" + std::to_string(use->column) +
               ", but not as a function declared at namespace scope (class members, lambdas and "
               "templates' specializations cannot be exported)";
  } else {
    message += ": no source declares it at namespace scope";
  }
  std::vector<std::string> near = argspec::NearMisses(job.name, names);
  for (size_t i = 0; i < near.size(); ++i) {
    message += (i == 0 ? (near.size() == 1 ? "; did you mean " : "; did you mean one of ") : ", ");
    message += "`" + near[i] + "`";
  }
  if (!near.empty()) message += "?";
  if (job.annotation && !job.tokens) {
    const Annotation& a = *job.annotation;
    message +=
        "; if a macro from a header jaxcc does not read stamps it out, write its tokens in the "
        "annotation, e.g. `// @jaxcc " +
        job.name + " arg ret`";
    return AtAnnotation(m, a, a.function_span, ErrorKind::kSignature, message);
  }
  return MakeError(ErrorKind::kSignature, message);
}

// No declaration, but explicit tokens: a macro may stamp the function out. Accepted when every
// attribute type is explicit; the bridge goes to the source of the annotation (or of the first
// use of the name).
Result<FunctionSpec> WithoutDeclaration(const Module& m, const Job& job, FunctionSpec spec) {
  int source_index = 0;
  size_t offset = 0;
  if (job.annotation) {
    source_index = job.annotation->source_index;
    offset = job.annotation->offset;
  } else if (const Token* use = m.FirstUse(job.name, &source_index)) {
    offset = use->offset;
  } else {
    return NotFound(m, job);
  }
  for (size_t i = 0; i < spec.params.size(); ++i) {
    const argspec::Param& p = spec.params[i];
    if (p.kind != ParamKind::kAttr || p.attr_type) continue;
    std::string message = "`" + (*job.tokens)[i] +
                          "` takes its type from the C++ declaration of `" + job.name +
                          "`, but none was found (a macro may define it): write the "
                          "type, e.g. `attr." +
                          p.name + ":float32`";
    if (job.tokens_from_annotation) {
      return AtAnnotation(m, *job.annotation, job.annotation->token_spans[i], ErrorKind::kSignature,
                          message);
    }
    return MakeError(ErrorKind::kSignature, message);
  }
  spec.source_index = source_index;
  spec.namespaces = NamespacesAt(m.ranges[source_index], offset);
  for (argspec::Param& p : spec.params) p.cpp_type = ProofType(p, nullptr);
  return spec;
}

// A stamped declaration whose by-value tensor's `const` hangs on a branch jaxcc cannot evaluate:
// refused when the roles are to be inferred (decision 147).
std::optional<Error> RefuseUncertainConst(const Module& m, const Job& job,
                                          const Declaration& decl) {
  int s = decl.source_index;
  std::optional<UncertainConst> u =
      FindUncertainConst(decl, m.Expanded().sources[s], m.active[s], m.uncertain[s]);
  if (!u) return std::nullopt;
  const ParsedParam& p = decl.params[u->param];
  const SourceFile& source = m.sources[s];
  std::string message =
      ParamLabel(p, u->param) + " of `" + decl.name +
      "` is a tensor taken by value, and whether it is `const` (an input) or not (an output) "
      "depends on macro `" +
      u->macro + "`, which is defined or undefined under a condition jaxcc cannot evaluate (a " +
      "header's or the compiler's macros may decide it). A by-value parameter's `const` is no "
      "part of the function's type, so the compiler cannot check jaxcc's reading, and jaxcc "
      "does not guess: pass the macro in the load's flags (e.g. extra_cflags=['-D" +
      u->macro +
      "=...'], extra_cuda_cflags for nvcc sources), take the tensor by reference "
      "(`const BE::Tensor&` for an input, `BE::Tensor&` for an output), or state the roles "
      "in the annotation's tokens, e.g. `// @BE " +
      decl.name + " arg ret`";
  Span at = job.annotation && job.annotation->source_index == s
                ? job.annotation->function_span
                : SpanOf(m.Expanded().sources[s].invocations[decl.name_token.expansion].name);
  Error e = SignatureError(source, at, message);
  e.message += "\n" + FormatDiagnostic(source.label, source.text, SpanOf(u->directive), "note",
                                       "the condition jaxcc cannot evaluate");
  e.message += StampedNotes(decl, m.Expanded(), m.sources, nullptr);
  return e;
}

// Two definitions of a function in branches jaxcc cannot decide, one taking a tensor by value
// as `const` and one not: refused when the roles are to be inferred (decision 147).
std::optional<Error> RefuseAlternativeConst(const Module& m, const Declaration& decl) {
  auto it = m.index.find(decl.name);
  if (it == m.index.end() || it->second.size() < 2) return std::nullopt;
  int s = decl.source_index;
  std::optional<UncertainConst> u = FindAlternativeConst(decl, it->second, m.uncertain[s]);
  if (!u) return std::nullopt;
  const SourceFile& source = m.sources[s];
  Error e = SignatureError(
      source, ParamSpan(decl, u->param),
      ParamLabel(decl.params[u->param], u->param) + " of `" + decl.name +
          "` is a tensor taken by value, `const` (an input) in one definition and not (an "
          "output) in another, and which one the compiler compiles depends on a condition jaxcc "
          "cannot evaluate. A by-value parameter's `const` is no part of the function's type, so "
          "the compiler cannot check jaxcc's choice, and jaxcc does not guess: pass the "
          "condition's macros in the load's flags (extra_cflags=['-D...'], extra_cuda_cflags for "
          "nvcc sources), take the tensor by reference, or state the roles, e.g. `// @BE " +
          decl.name + " arg ret`");
  e.message += "\n" + FormatDiagnostic(source.label, source.text, SpanOf(u->directive), "note",
                                       "the condition jaxcc cannot evaluate");
  return e;
}

// Where the user states `spec`'s signature (line and column of the function's name): its
// annotation in the declaring source, else the declaration's name (the invocation's, for a
// stamped one); {0, 0} when unknown.
std::pair<int, int> StatedAt(const Module& m, const Job& job, const FunctionSpec& spec,
                             const Declaration* decl) {
  if (job.annotation && job.annotation->source_index == spec.source_index) {
    return {job.annotation->function_span.line, job.annotation->function_span.column};
  }
  if (decl == nullptr) return {0, 0};
  int invocation = decl->name_token.expansion;
  if (invocation < 0) return {decl->name_token.line, decl->name_token.column};
  const ExpandedSource& x = m.Expanded().sources[decl->source_index];
  if (invocation >= static_cast<int>(x.invocations.size())) return {0, 0};
  const Token& name = x.invocations[invocation].name;
  return {name.line, name.column};
}

Result<FunctionSpec> Located(Result<FunctionSpec> spec, const Module& m, const Job& job,
                             const Declaration* decl) {
  if (spec.ok()) std::tie(spec->line, spec->column) = StatedAt(m, job, *spec, decl);
  return spec;
}

Result<FunctionSpec> ResolveOne(const Module& m, const Job& job) {
  std::optional<FunctionSpec> parsed;
  if (job.tokens) {
    auto spec = ParseTokens(m, job);
    if (!spec.ok()) return spec.error();
    parsed = std::move(spec).value();
  } else {
    JAXCC_RETURN_IF_ERROR(argspec::ValidateFunctionName(job.name));
  }
  auto found = FindFunction(job.name, m.index, m.sources);
  if (!found.ok()) return found.error();
  if (const Declaration* decl = *found) {
    const SourceFile& source = m.sources[decl->source_index];
    if (!parsed) {
      if (std::optional<Error> refused = RefuseAlternativeConst(m, *decl)) return *refused;
    }
    if (parsed)
      return Located(CheckSpec(std::move(*parsed), *job.tokens, *decl, source), m, job, decl);
    return Located(InferSpec(*decl, source), m, job, decl);
  }
  // Not declared as written: a macro the sources define may stamp it out.
  auto stamped = FindStamped(job.name, m.Expanded(), m.sources, job.annotation);
  if (!stamped.ok()) return stamped.error();
  if (const Declaration* decl = *stamped) {
    const SourceFile& source = m.sources[decl->source_index];
    if (!parsed) {
      if (std::optional<Error> refused = RefuseUncertainConst(m, job, *decl)) return *refused;
    }
    auto spec = parsed ? CheckSpec(std::move(*parsed), *job.tokens, *decl, source)
                       : InferSpec(*decl, source);
    if (spec.ok()) return Located(std::move(spec), m, job, decl);
    Error e = spec.error();
    e.message += StampedNotes(*decl, m.Expanded(), m.sources, job.annotation);
    return e;
  }
  if (!parsed) return NotFound(m, job);
  return Located(WithoutDeclaration(m, job, std::move(*parsed)), m, job, nullptr);
}

// A `sharding="RULE"` on the function's annotation: parsed and checked against the resolved
// spec, errors pointing into the rule.
Status AttachAnnotationRule(const Module& m, const Job& job, FunctionSpec* spec) {
  if (!job.annotation || !job.annotation->sharding) return OkStatus();
  const Annotation& a = *job.annotation;
  size_t offset = 0;
  auto rule = argspec::ParseRuleFor(*spec, *a.sharding, &offset);
  if (!rule.ok()) {
    Span span = a.sharding_span;
    if (rule.error().message.find("sharding rule \"") != std::string::npos) {
      span.column += static_cast<int>(offset);
      span.length = 1;
    }
    return AtAnnotation(m, a, span, ErrorKind::kSpec, rule.error().message);
  }
  spec->sharding_rule = rule->text;
  return OkStatus();
}

Result<std::vector<Job>> JobsFromAnnotations(const Module& m) {
  if (!m.annotations.errors.empty()) return m.annotations.errors.front();
  if (m.annotations.annotations.empty()) {
    return MakeError(ErrorKind::kSpec,
                     "no functions to export: annotate each entry point with `// @jaxcc "
                     "<function> [tokens...]` (or `// @BE ...`) in a line comment, or pass "
                     "`functions`");
  }
  std::vector<Job> jobs;
  for (const Annotation& a : m.annotations.annotations) {
    jobs.push_back({a.function, a.tokens, &a, a.tokens.has_value()});
  }
  return jobs;
}

Result<std::vector<Job>> JobsFromRequests(const Module& m,
                                          const std::vector<FunctionRequest>& requests) {
  if (requests.empty()) {
    return MakeError(ErrorKind::kSpec,
                     "`functions` is empty: name at least one function to export");
  }
  std::vector<Job> jobs;
  std::set<std::string> seen;
  for (const FunctionRequest& r : requests) {
    JAXCC_RETURN_IF_ERROR(argspec::ValidateFunctionName(r.name));
    if (!seen.insert(r.name).second) {
      return MakeError(ErrorKind::kSpec, "function `" + r.name +
                                             "` is requested twice in `functions`; list each "
                                             "function once");
    }
    Job job{r.name, r.tokens, m.AnnotationOf(r.name), false};
    // A bare name whose annotation carries tokens uses them (macro-stamped functions need it).
    if (!job.tokens && job.annotation && job.annotation->tokens) {
      job.tokens = job.annotation->tokens;
      job.tokens_from_annotation = true;
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace

Result<std::vector<FunctionSpec>> ResolveSpecs(
    const std::vector<SourceFile>& sources,
    const std::optional<std::vector<FunctionRequest>>& requests,
    const std::vector<std::vector<std::string>>& source_flags, std::vector<TuneDeclaration>* tune) {
  Module module(sources, source_flags);
  auto jobs = requests ? JobsFromRequests(module, *requests) : JobsFromAnnotations(module);
  if (!jobs.ok()) return jobs.error();
  std::vector<FunctionSpec> specs;
  for (const Job& job : *jobs) {
    auto spec = ResolveOne(module, job);
    if (!spec.ok()) return spec.error();
    JAXCC_RETURN_IF_ERROR(AttachAnnotationRule(module, job, &*spec));
    if (job.annotation) {
      const Annotation& a = *job.annotation;
      JAXCC_RETURN_IF_ERROR(ReadAnnotationTune(a, sources[a.source_index],
                                               module.flags[a.source_index], spec->name, tune));
    }
    specs.push_back(std::move(spec).value());
  }
  return specs;
}

}  // namespace jaxcc::signature
