// Directive lines are single tokens of the lexer; they are lexed again here, only when needed.
#include "signature/macro_definition.h"

#include <algorithm>

namespace jaxcc::signature {
namespace {

std::string_view Trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\r\n\v\f");
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(" \t\r\n\v\f");
  return text.substr(begin, end - begin + 1);
}

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || static_cast<unsigned char>(c) >= 0x80;
}

bool IsComment(const Token& t) {
  return t.kind == TokenKind::kLineComment || t.kind == TokenKind::kBlockComment;
}

}  // namespace

int MacroDefinition::ParamIndex(std::string_view word) const {
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == word) return static_cast<int>(i);
  }
  return -1;
}

DirectiveParts SplitDirective(std::string_view text) {
  text = Trim(text.substr(1));
  size_t comment = std::min(text.find("//"), text.find("/*"));
  if (comment != std::string_view::npos) text = Trim(text.substr(0, comment));
  size_t end = 0;
  while (end < text.size() && text[end] >= 'a' && text[end] <= 'z') ++end;
  return {text.substr(0, end), Trim(text.substr(end))};
}

std::vector<Token> DirectiveTokens(const Token& directive) {
  std::string_view text = directive.text;
  if (text.empty()) return {};
  std::vector<Token> tokens = Lex(text.substr(1));
  std::vector<Token> kept;
  kept.reserve(tokens.size());
  for (Token& t : tokens) {
    if (IsComment(t)) continue;
    // Positions inside the directive's text, mapped back to the source (the text starts one
    // byte after the `#`, which sits at the directive's own line and column).
    t.column = t.line == 1 ? directive.column + t.column : t.column;
    t.line = directive.line + t.line - 1;
    t.offset = directive.offset + 1 + t.offset;
    kept.push_back(std::move(t));
  }
  return kept;
}

std::string DirectiveMacroName(const Token& directive, std::string_view argument) {
  size_t end = 0;
  while (end < argument.size() && IsIdentifierChar(argument[end])) ++end;
  bool clean = end > 0 && (end == argument.size() || argument[end] == '(' || argument[end] == ' ' ||
                           argument[end] == '\t');
  if (clean && !(argument[0] >= '0' && argument[0] <= '9')) {
    return std::string(argument.substr(0, end));
  }
  // A continuation or a comment before the name: read the line properly.
  std::vector<Token> tokens = DirectiveTokens(directive);
  if (tokens.size() < 2 || tokens[1].kind != TokenKind::kIdentifier) return "";
  return tokens[1].text;
}

std::optional<MacroDefinition> ParseDefine(const Token& directive) {
  std::vector<Token> tokens = DirectiveTokens(directive);
  if (tokens.size() < 2 || !tokens[0].IsIdentifier("define") ||
      tokens[1].kind != TokenKind::kIdentifier) {
    return std::nullopt;
  }
  MacroDefinition macro;
  macro.name = tokens[1].text;
  macro.name_token = tokens[1];
  macro.end_offset = directive.end_offset();
  size_t i = 2;
  if (i < tokens.size() && tokens[i].IsPunct("(") && tokens[i].offset == tokens[1].end_offset()) {
    macro.function_like = true;
    ++i;
    bool expect_name = true;
    while (true) {
      if (i >= tokens.size()) return std::nullopt;
      const Token& t = tokens[i++];
      if (t.IsPunct(")") && (expect_name ? macro.params.empty() : true)) break;
      if (!expect_name) {
        if (!t.IsPunct(",") || macro.variadic) return std::nullopt;
        expect_name = true;
        continue;
      }
      if (t.IsPunct("...")) {
        macro.params.push_back("__VA_ARGS__");
        macro.variadic = true;
      } else if (t.kind == TokenKind::kIdentifier && macro.ParamIndex(t.text) < 0) {
        macro.params.push_back(t.text);
        if (i < tokens.size() && tokens[i].IsPunct("...")) {  // GNU named variadic: `args...`
          macro.variadic = true;
          ++i;
        }
      } else {
        return std::nullopt;
      }
      expect_name = false;
    }
  }
  macro.body.assign(tokens.begin() + static_cast<std::ptrdiff_t>(i), tokens.end());
  return macro;
}

}  // namespace jaxcc::signature
