// `#if 0` is the usual way to park old code; an annotation or a prototype there must not count.
// Sources that pick a configuration with their own macros (`#ifndef BLOCK` / `#define BLOCK
// 256`, `#if USE_F64`) are followed exactly; the compiler's own macros are not guessed.
#include "signature/active_code.h"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "signature/macro_definition.h"
#include "signature/pp_expression.h"

namespace jaxcc::signature {
namespace {

// One open #if group: the liveness of its current branch, whether a branch was certainly taken
// (which kills every later #elif/#else), and whether an earlier branch was of unknown liveness
// (which makes even a true branch after it only possibly live).
struct Group {
  Condition branch = Condition::kTrue;
  bool taken = false;
  bool unknown_before = false;
  Token unknown_at;  // the directive of the first branch of unknown liveness
};

// Macros seen so far by the pass, by name. Definitions are parsed only when a condition
// expands them, so a source without `#if` on its own macros costs one name scan per #define.
class Macros : public MacroState {
 public:
  explicit Macros(const std::vector<Token>* kept) : kept_(kept) {}

  void Define(const std::string& name, size_t directive, bool certain) {
    Entry& e = table_[name];
    e = Entry{true, certain, directive, std::nullopt};
  }
  // A `-D`/`-U` of the compile command: certain, and before any line of the source.
  void FromFlag(const CommandLineMacro& flag) {
    Entry& e = table_[flag.name];
    e = Entry{flag.definition.has_value(), true, 0, flag.definition};
  }
  void Undefine(const std::string& name, bool certain) {
    Entry& e = table_[name];
    e = Entry{false, certain, 0, std::nullopt};
  }
  void Reset() { used_uncertain_ = false; }

  Condition Defined(const std::string& name) override {
    auto it = table_.find(name);
    if (it == table_.end() || !it->second.certain) return Condition::kUnknown;
    return it->second.defined ? Condition::kTrue : Condition::kFalse;
  }
  const MacroDefinition* Find(const std::string& name) override {
    auto it = table_.find(name);
    if (it == table_.end() || !it->second.defined) return nullptr;
    Entry& e = it->second;
    if (!e.certain) used_uncertain_ = true;
    if (!e.parsed) {
      e.parsed = ParseDefine((*kept_)[e.directive]);
      if (!e.parsed) e.defined = false;  // malformed: the compiler reports it
    }
    return e.parsed ? &*e.parsed : nullptr;
  }
  bool used_uncertain() const override { return used_uncertain_; }

 private:
  struct Entry {
    bool defined = false;
    bool certain = true;
    size_t directive = 0;  // index in *kept_
    std::optional<MacroDefinition> parsed;
  };
  const std::vector<Token>* kept_;
  std::unordered_map<std::string, Entry> table_;
  bool used_uncertain_ = false;
};

Condition Not(Condition c) {
  if (c == Condition::kUnknown) return c;
  return c == Condition::kTrue ? Condition::kFalse : Condition::kTrue;
}

// Liveness of the code at the current point: kFalse if any group is dead, kUnknown if any is
// only possibly live, else kTrue.
Condition Liveness(const std::vector<Group>& groups) {
  Condition all = Condition::kTrue;
  for (const Group& g : groups) {
    if (g.branch == Condition::kFalse) return Condition::kFalse;
    if (g.branch == Condition::kUnknown) all = Condition::kUnknown;
  }
  return all;
}

Condition Evaluate(std::string_view name, const Token& directive, std::string_view argument,
                   Macros* macros) {
  if (name == "ifdef" || name == "ifndef" || name == "elifdef" || name == "elifndef") {
    std::string macro = DirectiveMacroName(directive, argument);
    if (macro.empty()) return Condition::kUnknown;
    Condition defined = macros->Defined(macro);
    return name == "ifdef" || name == "elifdef" ? defined : Not(defined);
  }
  // The common literal cases need no lexing.
  if (argument == "0" || argument == "(0)" || argument == "false") return Condition::kFalse;
  if (argument == "1" || argument == "(1)" || argument == "true") return Condition::kTrue;
  std::vector<Token> tokens = DirectiveTokens(directive);
  if (!tokens.empty()) tokens.erase(tokens.begin());  // `if` / `elif`
  macros->Reset();
  return EvaluateCondition(tokens, macros);
}

// Opens a branch of condition `c` in group `g` at `directive`.
void Enter(Group* g, Condition c, const Token& directive) {
  if (c == Condition::kUnknown && !g->taken && !g->unknown_before) g->unknown_at = directive;
  if (g->taken) {
    g->branch = Condition::kFalse;
  } else if (c == Condition::kFalse) {
    g->branch = Condition::kFalse;
  } else if (c == Condition::kTrue) {
    g->branch = g->unknown_before ? Condition::kUnknown : Condition::kTrue;
    g->taken = true;
  } else {
    g->branch = Condition::kUnknown;
    g->unknown_before = true;
  }
}

// The directive that made the innermost branch of unknown liveness so.
const Token* UnknownCause(const std::vector<Group>& groups) {
  for (auto g = groups.rbegin(); g != groups.rend(); ++g) {
    if (g->branch == Condition::kUnknown) return &g->unknown_at;
  }
  return nullptr;
}

void NoteUncertain(const std::vector<Group>& groups, const Token& token,
                   std::vector<UncertainRegion>* uncertain) {
  if (uncertain == nullptr) return;
  const Token* cause = UnknownCause(groups);
  if (cause == nullptr) return;
  if (!uncertain->empty() && uncertain->back().directive.offset == cause->offset) {
    uncertain->back().end = token.end_offset();
    return;
  }
  uncertain->push_back({token.offset, token.end_offset(), *cause});
}

}  // namespace

std::vector<Token> DropDisabledBranches(std::vector<Token> tokens,
                                        const std::vector<CommandLineMacro>& flags,
                                        std::vector<UncertainRegion>* uncertain) {
  std::vector<Token> kept;
  kept.reserve(tokens.size());
  std::vector<Group> groups;
  Macros macros(&kept);
  for (const CommandLineMacro& flag : flags) macros.FromFlag(flag);
  for (Token& token : tokens) {
    Condition live = Liveness(groups);
    if (live == Condition::kUnknown && token.kind != TokenKind::kLineComment &&
        token.kind != TokenKind::kBlockComment) {
      NoteUncertain(groups, token, uncertain);
    }
    if (token.kind != TokenKind::kPreprocessor) {
      if (live != Condition::kFalse) kept.push_back(std::move(token));
      continue;
    }
    DirectiveParts parts = SplitDirective(token.text);
    std::string_view name = parts.name;
    if (name == "if" || name == "ifdef" || name == "ifndef") {
      Group g;
      // A dead group's conditions are never evaluated (they may name anything).
      Enter(&g,
            live == Condition::kFalse ? Condition::kFalse
                                      : Evaluate(name, token, parts.argument, &macros),
            token);
      groups.push_back(g);
    } else if (name == "elif" || name == "elifdef" || name == "elifndef" || name == "else") {
      if (groups.empty()) continue;
      Group g = std::move(groups.back());  // a copy: pop_back ends the element's life
      groups.pop_back();
      bool outer_dead = Liveness(groups) == Condition::kFalse;
      Condition c = name == "else" || outer_dead || g.taken
                        ? Condition::kTrue
                        : Evaluate(name, token, parts.argument, &macros);
      Enter(&g, c, token);
      groups.push_back(g);
    } else if (name == "endif") {
      if (!groups.empty()) groups.pop_back();
    } else if (live != Condition::kFalse && (name == "define" || name == "undef")) {
      std::string macro = DirectiveMacroName(token, parts.argument);
      if (!macro.empty()) {
        if (name == "define") {
          macros.Define(macro, kept.size(), live == Condition::kTrue);
        } else {
          macros.Undefine(macro, live == Condition::kTrue);
        }
      }
    }
    // The directives of the group itself stay, so a reader can still see the structure.
    if (live != Condition::kFalse || Liveness(groups) != Condition::kFalse) {
      kept.push_back(std::move(token));
    }
  }
  return kept;
}

std::vector<Token> CodeTokens(const std::vector<Token>& tokens) {
  std::vector<Token> code;
  code.reserve(tokens.size());
  for (const Token& token : tokens) {
    if (token.kind == TokenKind::kLineComment || token.kind == TokenKind::kBlockComment ||
        token.kind == TokenKind::kPreprocessor) {
      continue;
    }
    code.push_back(token);
  }
  return code;
}

}  // namespace jaxcc::signature
