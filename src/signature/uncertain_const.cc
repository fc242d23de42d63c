// Which macros a parameter's spelling can reach is over-approximated: the raw tokens of the
// `#define` body between the parameter's neighbours (so a macro that expands to nothing still
// counts), the invocation's arguments when the body names a macro parameter there, and every
// macro those name, transitively. Refusing a little too often is safe; guessing is not.
#include "signature/uncertain_const.h"

#include <map>
#include <set>

#include "signature/cpp_types.h"
#include "signature/macro_definition.h"

namespace jaxcc::signature {
namespace {

// Names `#define`d or `#undef`ined inside a region of unknown liveness, before `limit`, with
// the directive that made each so.
std::map<std::string, Token> UncertainMacros(const std::vector<Token>& active,
                                             const std::vector<UncertainRegion>& uncertain,
                                             size_t limit) {
  std::map<std::string, Token> names;
  for (const Token& t : active) {
    if (t.offset >= limit) break;
    if (t.kind != TokenKind::kPreprocessor) continue;
    DirectiveParts parts = SplitDirective(t.text);
    if (parts.name != "define" && parts.name != "undef") continue;
    for (const UncertainRegion& r : uncertain) {
      if (r.begin <= t.offset && t.offset < r.end) {
        std::string name = DirectiveMacroName(t, parts.argument);
        if (!name.empty()) names.emplace(name, r.directive);
        break;
      }
    }
  }
  return names;
}

// The definitions by name, the last one before `limit` winning (what the invocation saw).
std::map<std::string, const MacroDefinition*> DefinitionsBefore(const ExpandedSource& x,
                                                                size_t limit) {
  std::map<std::string, const MacroDefinition*> by_name;
  for (const MacroDefinition& d : x.definitions) {
    if (d.flag.empty() && d.name_token.offset >= limit) continue;
    by_name[d.name] = &d;
  }
  return by_name;
}

// The tokens from the invocation's name through its closing parenthesis in the unexpanded
// source (just the name for an object-like macro).
std::vector<Token> InvocationTokens(const std::vector<Token>& active, const Token& name) {
  std::vector<Token> out;
  int depth = 0;
  for (const Token& t : active) {
    if (t.offset < name.offset || t.kind == TokenKind::kPreprocessor ||
        t.kind == TokenKind::kLineComment || t.kind == TokenKind::kBlockComment) {
      continue;
    }
    out.push_back(t);
    if (t.IsPunct("(")) ++depth;
    if (t.IsPunct(")") && --depth == 0) break;
    if (depth == 0 && out.size() > 1) break;  // object-like: the name alone
  }
  return out;
}

// Offsets just past the `(`/`,` before the token at `offset` in `body` and of the `,`/`)`
// after it, both outside nested brackets; both 0 when either is missing.
void ParamSlice(const std::vector<Token>& body, size_t offset, size_t* after, size_t* before) {
  size_t k = 0;
  while (k < body.size() && body[k].offset != offset) ++k;
  if (k == body.size()) return;
  auto opens = [](const Token& t) { return t.IsPunct("(") || t.IsPunct("[") || t.IsPunct("{"); };
  auto closes = [](const Token& t) { return t.IsPunct(")") || t.IsPunct("]") || t.IsPunct("}"); };
  size_t start = 0, end = 0;
  int depth = 0;
  for (size_t j = k; j-- > 0;) {
    if (depth == 0 && (body[j].IsPunct("(") || body[j].IsPunct(","))) {
      start = body[j].end_offset();
      break;
    }
    depth += closes(body[j]) ? 1 : opens(body[j]) ? -1 : 0;
  }
  depth = 0;
  for (size_t j = k; j < body.size(); ++j) {
    if (depth == 0 && (body[j].IsPunct(")") || body[j].IsPunct(","))) {
      end = body[j].offset;
      break;
    }
    depth += opens(body[j]) ? 1 : closes(body[j]) ? -1 : 0;
  }
  if (start == 0 || end == 0) return;
  *after = start;
  *before = end;
}

}  // namespace

std::optional<UncertainConst> FindAlternativeConst(const Declaration& decl,
                                                   const std::vector<const Declaration*>& others,
                                                   const std::vector<UncertainRegion>& uncertain) {
  auto region = [&](const Declaration& d) -> const UncertainRegion* {
    for (const UncertainRegion& r : uncertain) {
      if (r.begin <= d.name_token.offset && d.name_token.offset < r.end) return &r;
    }
    return nullptr;
  };
  auto by_value_tensor = [](const ParsedParam& p) {
    return IsJaxccTensor(p.core_type) && p.ref == RefKind::kNone && p.pointer_depth == 0;
  };
  for (const Declaration* other : others) {
    if (other == &decl || other->source_index != decl.source_index || !other->is_definition ||
        other->params.size() != decl.params.size()) {
      continue;
    }
    const UncertainRegion* r = region(*other);
    if (r == nullptr) r = region(decl);
    if (r == nullptr) continue;
    for (size_t i = 0; i < decl.params.size(); ++i) {
      const ParsedParam& a = decl.params[i];
      const ParsedParam& b = other->params[i];
      if (by_value_tensor(a) && by_value_tensor(b) && a.is_const != b.is_const) {
        return UncertainConst{i, "", r->directive};
      }
    }
  }
  return std::nullopt;
}

std::optional<UncertainConst> FindUncertainConst(const Declaration& decl,
                                                 const ExpandedSource& expanded,
                                                 const std::vector<Token>& active,
                                                 const std::vector<UncertainRegion>& uncertain) {
  int invocation = decl.name_token.expansion;
  if (invocation < 0 || invocation >= static_cast<int>(expanded.invocations.size())) {
    return std::nullopt;
  }
  const Token& call = expanded.invocations[invocation].name;
  std::map<std::string, Token> doubtful = UncertainMacros(active, uncertain, call.offset);
  if (doubtful.empty()) return std::nullopt;
  std::map<std::string, const MacroDefinition*> macros = DefinitionsBefore(expanded, call.offset);
  for (size_t i = 0; i < decl.params.size(); ++i) {
    const ParsedParam& p = decl.params[i];
    if (!IsJaxccTensor(p.core_type) || p.ref != RefKind::kNone || p.pointer_depth > 0 ||
        p.tokens.empty()) {
      continue;
    }
    // The parameter as the body that spells it writes it: from the delimiter before its first
    // expanded token (`(` or `,` outside parentheses) to the one after, so a macro expanding to
    // nothing there (`INQ BE::Tensor x`) is seen too.
    const MacroDefinition* body = expanded.DefinitionAt(p.tokens.front().offset);
    size_t after = 0, before = 0;
    if (body != nullptr) ParamSlice(body->body, p.tokens.front().offset, &after, &before);
    std::set<std::string> names;
    bool sliced = body != nullptr && after < before && body->DefinesOffset(after) &&
                  body->DefinesOffset(before);
    bool names_parameter = !sliced;
    for (const Token& t : sliced ? body->body : std::vector<Token>{}) {
      if (t.offset < after || t.offset >= before || t.kind != TokenKind::kIdentifier) continue;
      if (body->ParamIndex(t.text) >= 0) names_parameter = true;
      names.insert(t.text);
    }
    if (names_parameter) {  // the arguments may spell it, or the slice was not found: all of them
      for (const Token& t : InvocationTokens(active, call)) {
        if (t.kind == TokenKind::kIdentifier) names.insert(t.text);
      }
      if (!sliced && body != nullptr) {
        for (const Token& t : body->body) {
          if (t.kind == TokenKind::kIdentifier) names.insert(t.text);
        }
      }
    }
    // Every macro those names reach.
    std::set<std::string> seen;
    std::vector<std::string> pending(names.begin(), names.end());
    while (!pending.empty()) {
      std::string name = pending.back();
      pending.pop_back();
      if (!seen.insert(name).second) continue;
      auto d = doubtful.find(name);
      if (d != doubtful.end()) return UncertainConst{i, name, d->second};
      auto m = macros.find(name);
      if (m == macros.end()) continue;
      for (const Token& t : m->second->body) {
        if (t.kind == TokenKind::kIdentifier) pending.push_back(t.text);
      }
    }
  }
  return std::nullopt;
}

}  // namespace jaxcc::signature
