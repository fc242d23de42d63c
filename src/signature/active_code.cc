// `#if 0` is the usual way to park old code; an annotation or a prototype there must not count.
#include "signature/active_code.h"

#include <algorithm>
#include <string>
#include <string_view>

namespace jaxcc::signature {
namespace {

enum class Condition { kFalse, kTrue, kUnknown };

// One open #if group: whether the current branch is live, and whether a known-true branch was
// already taken (which kills every later #elif/#else).
struct Group {
  bool live = true;
  bool taken = false;
};

std::string_view Trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\r\n\v\f");
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(" \t\r\n\v\f");
  return text.substr(begin, end - begin + 1);
}

// Splits "#  if 0 // why" into the directive name ("if") and its argument ("0"), comments cut.
void SplitDirective(std::string_view text, std::string_view* name, std::string_view* argument) {
  text = Trim(text.substr(1));
  size_t comment = std::min(text.find("//"), text.find("/*"));
  if (comment != std::string_view::npos) text = Trim(text.substr(0, comment));
  size_t end = 0;
  while (end < text.size() && ((text[end] >= 'a' && text[end] <= 'z'))) ++end;
  *name = text.substr(0, end);
  *argument = Trim(text.substr(end));
}

Condition Evaluate(std::string_view argument) {
  if (argument == "0" || argument == "(0)" || argument == "false") return Condition::kFalse;
  if (argument == "1" || argument == "(1)" || argument == "true") return Condition::kTrue;
  return Condition::kUnknown;
}

bool AllLive(const std::vector<Group>& groups) {
  for (const Group& g : groups) {
    if (!g.live) return false;
  }
  return true;
}

// Updates the open groups for one directive.
void Apply(std::string_view name, std::string_view argument, std::vector<Group>* groups) {
  if (name == "if" || name == "ifdef" || name == "ifndef") {
    Condition c = name == "if" ? Evaluate(argument) : Condition::kUnknown;
    groups->push_back({c != Condition::kFalse, c == Condition::kTrue});
  } else if (name == "elif" || name == "elifdef" || name == "elifndef") {
    if (groups->empty()) return;
    Group& g = groups->back();
    Condition c = name == "elif" ? Evaluate(argument) : Condition::kUnknown;
    g.live = !g.taken && c != Condition::kFalse;
    g.taken = g.taken || c == Condition::kTrue;
  } else if (name == "else") {
    if (groups->empty()) return;
    Group& g = groups->back();
    g.live = !g.taken;
    g.taken = true;
  } else if (name == "endif") {
    if (!groups->empty()) groups->pop_back();
  }
}

}  // namespace

std::vector<Token> DropDisabledBranches(std::vector<Token> tokens) {
  std::vector<Token> kept;
  kept.reserve(tokens.size());
  std::vector<Group> groups;
  for (Token& token : tokens) {
    if (token.kind == TokenKind::kPreprocessor) {
      std::string_view name, argument;
      SplitDirective(token.text, &name, &argument);
      bool was_live = AllLive(groups);
      Apply(name, argument, &groups);
      // The directives of the group itself stay, so a reader can still see the structure.
      if (was_live || AllLive(groups)) kept.push_back(std::move(token));
      continue;
    }
    if (AllLive(groups)) kept.push_back(std::move(token));
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
