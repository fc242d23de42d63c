// Entry points read off macro expansions. The declaration finder and inference run unchanged on
// the expanded tokens; what is added here is knowing which invocation and which `#define` a
// token came from, so every error can show the user all three places.
#include "signature/stamped_functions.h"

#include <map>

#include "signature/diagnostic.h"
#include "signature/signature_errors.h"

namespace jaxcc::signature {
namespace {

std::string Quoted(const std::string& s) { return "`" + s + "`"; }

std::string Note(const SourceFile& source, const Span& span, const std::string& message) {
  return "\n" + FormatDiagnostic(source.label, source.text, span, "note", message);
}

// The `#define` whose body spelled the token at `offset`, else the invoked macro's own.
const MacroDefinition* SpellingDefinition(const ExpandedSource& x, size_t offset,
                                          const Invocation& invocation) {
  const MacroDefinition* d = x.DefinitionAt(offset);
  return d != nullptr ? d : invocation.macro;
}

std::string InvocationNotes(const ExpandedSource& x, const SourceFile& source, int invocation,
                            size_t spelled_at) {
  if (invocation < 0 || invocation >= static_cast<int>(x.invocations.size())) return "";
  const Invocation& inv = x.invocations[invocation];
  std::string notes = Note(source, SpanOf(inv.name),
                           "in the expansion of macro " + Quoted(inv.name.text) + " invoked here");
  const MacroDefinition* d = SpellingDefinition(x, spelled_at, inv);
  if (d != nullptr && !d->flag.empty()) {
    notes +=
        "\nnote: macro " + Quoted(d->name) + " is defined by the compile flag " + Quoted(d->flag);
  } else if (d != nullptr) {
    notes += Note(source, SpanOf(d->name_token), "macro " + Quoted(d->name) + " is defined here");
  }
  return notes;
}

std::string AnnotationNote(const Annotation* a, const std::vector<SourceFile>& sources) {
  if (a == nullptr) return "";
  return Note(sources[a->source_index], a->function_span,
              Quoted(a->function) + " is annotated here");
}

Error AtAnnotationOr(const Annotation* a, const std::vector<SourceFile>& sources,
                     const SourceFile& fallback, const Span& fallback_span,
                     const std::string& message) {
  if (a != nullptr) return SignatureError(sources[a->source_index], a->function_span, message);
  return SignatureError(fallback, fallback_span, message);
}

bool SameToken(const Token& a, const Token& b) { return a.offset == b.offset && a.text == b.text; }

// A macro name left unexpanded (it refers to itself) inside the declaration's name or
// parameters, or nullptr.
const Token* SelfReferenceIn(const Declaration& d, const Invocation& inv) {
  for (const Token& ref : inv.self_references) {
    if (SameToken(ref, d.name_token)) return &ref;
    for (const ParsedParam& p : d.params) {
      for (const Token& t : p.tokens) {
        if (SameToken(ref, t)) return &ref;
      }
    }
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<ExpandedModule> ExpandModule(
    const std::vector<std::vector<Token>>& active,
    const std::vector<std::vector<CommandLineMacro>>& flags) {
  auto out = std::make_unique<ExpandedModule>();
  const std::vector<CommandLineMacro> none;
  for (size_t i = 0; i < active.size(); ++i) {
    out->sources.push_back(ExpandSource(active[i], i < flags.size() ? flags[i] : none));
    SourceScan scan = ScanDeclarations(out->sources.back().code, static_cast<int>(i));
    for (Declaration& d : scan.declarations) {
      // Only what a macro produced: a name spelled plainly in the source was already looked
      // up as written.
      if (d.name_token.expansion >= 0) out->declarations.push_back(std::move(d));
    }
  }
  out->index = IndexByName(out->declarations);
  return out;
}

std::string StampedNotes(const Declaration& decl, const ExpandedModule& expanded,
                         const std::vector<SourceFile>& sources, const Annotation* annotation) {
  const ExpandedSource& x = expanded.sources[decl.source_index];
  return InvocationNotes(x, sources[decl.source_index], decl.name_token.expansion,
                         decl.name_token.offset) +
         AnnotationNote(annotation, sources);
}

Result<const Declaration*> FindStamped(const std::string& name, const ExpandedModule& expanded,
                                       const std::vector<SourceFile>& sources,
                                       const Annotation* annotation) {
  auto it = expanded.index.find(name);
  if (it == expanded.index.end()) return static_cast<const Declaration*>(nullptr);
  // One invocation defining the function twice is a macro bug the user must see as such.
  std::map<std::pair<int, int>, std::vector<const Declaration*>> by_invocation;
  for (const Declaration* d : it->second) {
    if (d->is_definition) by_invocation[{d->source_index, d->name_token.expansion}].push_back(d);
  }
  for (const auto& [where, defs] : by_invocation) {
    if (defs.size() < 2) continue;
    const SourceFile& source = sources[where.first];
    const Invocation& inv = expanded.sources[where.first].invocations[where.second];
    Error e = AtAnnotationOr(
        annotation, sources, source, SpanOf(inv.name),
        "macro " + Quoted(inv.name.text) + " expands to " + std::to_string(defs.size()) +
            " definitions of " + Quoted(name) +
            ": jaxcc exports one C++ function per name; make the macro define it once");
    for (const Declaration* d : defs) {
      e.message += Note(source, SpanOf(d->name_token),
                        "a definition of " + Quoted(d->QualifiedSignature()) + " is spelled here");
    }
    e.message += InvocationNotes(expanded.sources[where.first], source, where.second,
                                 defs.front()->name_token.offset);
    return e;
  }
  auto found = FindFunction(name, expanded.index, sources);
  if (!found.ok()) {
    Error e = found.error();
    e.message += StampedNotes(*it->second.front(), expanded, sources, annotation);
    return e;
  }
  const Declaration* decl = *found;
  const ExpandedSource& x = expanded.sources[decl->source_index];
  const Invocation& inv = x.invocations[decl->name_token.expansion];
  if (const Token* ref = SelfReferenceIn(*decl, inv)) {
    const SourceFile& source = sources[decl->source_index];
    Error e =
        AtAnnotationOr(annotation, sources, source, SpanOf(inv.name),
                       "the declaration of " + Quoted(name) + " that macro " +
                           Quoted(inv.name.text) + " expands to still holds " + Quoted(ref->text) +
                           ", a macro that refers to itself: C never expands a macro "
                           "inside its own expansion, so this cannot compile; break the "
                           "recursion");
    e.message += Note(source, SpanOf(*ref), Quoted(ref->text) + " is left unexpanded here");
    e.message += StampedNotes(*decl, expanded, sources, nullptr);
    return e;
  }
  return decl;
}

std::optional<Error> WhyNotStamped(const std::string& name, const ExpandedModule& expanded,
                                   const std::vector<SourceFile>& sources,
                                   const Annotation* annotation, const Token* next_code) {
  // A bound that stopped an expansion explains everything after it.
  for (size_t i = 0; i < expanded.sources.size(); ++i) {
    const ExpandedSource& x = expanded.sources[i];
    if (x.limit_problem.empty()) continue;
    Error e =
        SignatureError(sources[i], SpanOf(x.limit_at),
                       x.limit_problem + "; " + Quoted(name) + " may be defined after this point");
    e.message += AnnotationNote(annotation, sources);
    return e;
  }
  // The invocation right after the annotation, the usual place of a stamped entry point.
  if (annotation != nullptr && next_code != nullptr) {
    int source_index = annotation->source_index;
    const ExpandedSource& x = expanded.sources[source_index];
    const SourceFile& source = sources[source_index];
    int at = x.InvocationAt(next_code->offset);
    if (at >= 0) {
      const Invocation& inv = x.invocations[at];
      std::string macro = Quoted(inv.name.text);
      std::string head = Quoted(name) + " is annotated here, but macro " + macro +
                         ", invoked after the annotation, ";
      if (!inv.problem.empty()) {
        Error e = SignatureError(source, annotation->function_span,
                                 head + "cannot be expanded: " + inv.problem);
        e.message += Note(source, SpanOf(inv.problem_at), "the invocation that fails");
        e.message += InvocationNotes(x, source, at, inv.problem_at.offset);
        return e;
      }
      std::vector<std::string> produced;
      for (const Declaration& d : expanded.declarations) {
        if (d.source_index == source_index && d.name_token.expansion == at) {
          produced.push_back(Quoted(d.name));
        }
      }
      std::string what;
      if (!inv.self_references.empty()) {
        what = "refers to itself through " + Quoted(inv.self_references.front().text) +
               " (C never expands a macro inside its own expansion), and its expansion declares ";
      } else {
        what = "expands to ";
      }
      if (produced.empty()) {
        what += "no function at all (after expansion it is not a function declaration)";
      } else {
        what += "the function" + std::string(produced.size() == 1 ? " " : "s ");
        for (size_t i = 0; i < produced.size() && i < 8; ++i) what += (i ? ", " : "") + produced[i];
        what += produced.size() > 8 ? ", ..." : "";
        what += " but not " + Quoted(name) + "; annotate the name the expansion defines";
      }
      Error e = SignatureError(source, annotation->function_span, head + what);
      if (!inv.self_references.empty()) {
        e.message += Note(source, SpanOf(inv.self_references.front()),
                          Quoted(inv.self_references.front().text) + " is left unexpanded here");
      }
      e.message += InvocationNotes(x, source, at, inv.name.offset);
      return e;
    }
  }
  return std::nullopt;
}

}  // namespace jaxcc::signature
