// Code runs between directives are expanded one by one, applying each `#define` / `#undef`
// where it stands: a macro means what it was defined as at the invocation.
#include "signature/expanded_source.h"

#include <unordered_map>

namespace jaxcc::signature {
namespace {

class Table : public MacroLookup {
 public:
  const MacroDefinition* Find(const std::string& name) override {
    auto it = current_.find(name);
    return it == current_.end() ? nullptr : it->second;
  }
  void Define(const MacroDefinition* macro) { current_[macro->name] = macro; }
  void Undefine(const std::string& name) { current_.erase(name); }

 private:
  std::unordered_map<std::string, const MacroDefinition*> current_;
};

}  // namespace

const MacroDefinition* ExpandedSource::DefinitionAt(size_t offset) const {
  for (const MacroDefinition& d : definitions) {
    if (d.name_token.offset <= offset && offset < d.end_offset) return &d;
  }
  return nullptr;
}

int ExpandedSource::InvocationAt(size_t offset) const {
  for (size_t i = 0; i < invocations.size(); ++i) {
    if (invocations[i].name.offset == offset) return static_cast<int>(i);
  }
  return -1;
}

ExpandedSource ExpandSource(const std::vector<Token>& active,
                            const std::vector<CommandLineMacro>& flags) {
  ExpandedSource out;
  Table table;
  for (const CommandLineMacro& flag : flags) {
    if (flag.definition) {
      out.definitions.push_back(*flag.definition);
      table.Define(&out.definitions.back());
    } else {
      table.Undefine(flag.name);
    }
  }
  MacroExpander expander(&table);
  std::vector<Token> run;
  bool stopped = false;
  auto flush = [&] {
    if (!stopped && !run.empty()) stopped = !expander.Expand(run, &out.code);
    run.clear();
  };
  for (const Token& t : active) {
    if (t.kind == TokenKind::kLineComment || t.kind == TokenKind::kBlockComment) continue;
    if (t.kind != TokenKind::kPreprocessor) {
      run.push_back(t);
      continue;
    }
    flush();
    DirectiveParts parts = SplitDirective(t.text);
    if (parts.name == "define") {
      if (std::optional<MacroDefinition> macro = ParseDefine(t)) {
        out.definitions.push_back(std::move(*macro));
        table.Define(&out.definitions.back());
      }
    } else if (parts.name == "undef") {
      table.Undefine(DirectiveMacroName(t, parts.argument));
    }
  }
  flush();
  out.invocations = std::move(expander.invocations());
  out.tokens_created = expander.tokens_created();
  if (stopped) {
    out.limit_problem = expander.limit_problem();
    out.limit_at = expander.limit_at();
  }
  return out;
}

}  // namespace jaxcc::signature
