// Splitting happens on tokens, so a comma or a `const` inside a comment cannot move a boundary:
// comments are gone before this code runs.
#include "signature/parameters.h"

#include "argspec/keywords.h"

namespace jaxcc::signature {
namespace {

bool IsOpen(const Token& t) { return t.IsPunct("(") || t.IsPunct("[") || t.IsPunct("{"); }
bool IsClose(const Token& t) { return t.IsPunct(")") || t.IsPunct("]") || t.IsPunct("}"); }

bool IsWordToken(const Token& t) {
  return t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kNumber;
}

bool IsCv(const Token& t) { return t.IsIdentifier("const") || t.IsIdentifier("volatile"); }

// Qualifiers and storage words that say nothing about which type is passed.
bool IsIgnorable(const Token& t) {
  return t.IsIdentifier("__restrict__") || t.IsIdentifier("__restrict") ||
         t.IsIdentifier("restrict") || t.IsIdentifier("register");
}

// Index after the group opened at `open` (any bracket kind), or tokens.size().
size_t SkipGroup(const std::vector<Token>& tokens, size_t open) {
  int depth = 0;
  for (size_t i = open; i < tokens.size(); ++i) {
    if (IsOpen(tokens[i])) ++depth;
    if (IsClose(tokens[i]) && --depth == 0) return i + 1;
  }
  return tokens.size();
}

// Drops `[[...]]`, `__attribute__((...))`, `__declspec(...)` and `alignas(...)`.
std::vector<Token> WithoutAttributes(const std::vector<Token>& tokens) {
  std::vector<Token> kept;
  for (size_t i = 0; i < tokens.size();) {
    const Token& t = tokens[i];
    bool next_is_paren = i + 1 < tokens.size() && tokens[i + 1].IsPunct("(");
    if (t.IsPunct("[") && i + 1 < tokens.size() && tokens[i + 1].IsPunct("[")) {
      i = SkipGroup(tokens, i);
    } else if ((t.IsIdentifier("__attribute__") || t.IsIdentifier("__declspec") ||
                t.IsIdentifier("alignas")) &&
               next_is_paren) {
      i = SkipGroup(tokens, i + 1);
    } else {
      kept.push_back(t);
      ++i;
    }
  }
  return kept;
}

// Splits on commas outside brackets; in a type (before a top-level `=`) template argument lists
// count as brackets too, while in a default argument `<` may well be "less than".
std::vector<std::vector<Token>> SplitOnCommas(const std::vector<Token>& tokens) {
  std::vector<std::vector<Token>> parts(1);
  int depth = 0, angles = 0;
  bool in_default = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (IsOpen(t)) ++depth;
    if (IsClose(t) && depth > 0) --depth;
    if (depth == 0 && !in_default) {
      bool after_name = i > 0 && tokens[i - 1].kind == TokenKind::kIdentifier;
      if (t.IsPunct("<") && after_name) ++angles;
      if (t.IsPunct(">") && angles > 0) --angles;
      if (t.IsPunct(">>")) angles = angles > 2 ? angles - 2 : 0;
      if (t.IsPunct("=") && angles == 0) in_default = true;
    }
    if (depth == 0 && angles == 0 && t.IsPunct(",")) {
      parts.emplace_back();
      in_default = false;
      continue;
    }
    parts.back().push_back(t);
  }
  return parts;
}

// The name is the last word when something before it names a type: in `const Tensor` the last
// word is the type itself, in `unsigned long` a built-in type word.
bool EndsWithName(const std::vector<Token>& decl) {
  if (decl.empty()) return false;
  const Token& last = decl.back();
  if (last.kind != TokenKind::kIdentifier || argspec::IsCppKeyword(last.text) ||
      IsBuiltinTypeWord(last.text) || IsIgnorable(last)) {
    return false;
  }
  if (decl.size() < 2 || decl[decl.size() - 2].IsPunct("::")) return false;
  for (size_t i = 0; i + 1 < decl.size(); ++i) {
    const Token& t = decl[i];
    bool elaborated = t.IsIdentifier("struct") || t.IsIdentifier("class") ||
                      t.IsIdentifier("enum") || t.IsIdentifier("union") ||
                      t.IsIdentifier("typename");
    if (!IsCv(t) && !IsIgnorable(t) && !elaborated) return true;
  }
  return false;
}

// For `void (*cb)(int)` and `float (&a)[3]`: index of the word inside the first parentheses,
// or decl.size() when it has none.
size_t NameInParentheses(const std::vector<Token>& decl) {
  for (size_t i = 0; i < decl.size(); ++i) {
    if (!decl[i].IsPunct("(")) continue;
    size_t end = SkipGroup(decl, i);
    for (size_t j = i + 1; j + 1 < end; ++j) {
      if (decl[j].kind == TokenKind::kIdentifier && !argspec::IsCppKeyword(decl[j].text) &&
          !decl[j + 1].IsPunct("::")) {
        return j;
      }
    }
    return decl.size();
  }
  return decl.size();
}

void ReadShape(const std::vector<Token>& type, ParsedParam* p) {
  std::vector<Token> core;
  int angles = 0;
  for (size_t i = 0; i < type.size(); ++i) {
    const Token& t = type[i];
    if (t.IsPunct("<")) ++angles;
    if (t.IsPunct(">") && angles > 0) --angles;
    if (t.IsPunct(">>")) angles = angles > 2 ? angles - 2 : 0;
    if (angles == 0 && !t.IsPunct(">") && !t.IsPunct(">>")) {
      if (t.IsIdentifier("const")) p->is_const = true;
      if (t.IsPunct("*")) ++p->pointer_depth;
      if (t.IsPunct("&")) p->ref = RefKind::kLValue;
      if (t.IsPunct("&&")) p->ref = RefKind::kRValue;
      if (IsCv(t) || IsIgnorable(t) || t.IsPunct("*") || t.IsPunct("&") || t.IsPunct("&&")) {
        continue;
      }
    }
    core.push_back(t);
  }
  p->core_type = JoinTokens(core);
}

ParsedParam ReadParam(const std::vector<Token>& raw) {
  ParsedParam p;
  std::vector<Token> tokens = WithoutAttributes(raw);
  int depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (IsOpen(tokens[i])) ++depth;
    if (IsClose(tokens[i]) && depth > 0) --depth;
    if (depth == 0 && tokens[i].IsPunct("=")) {
      p.has_default = true;
      tokens.resize(i);
      break;
    }
  }
  p.tokens = tokens;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.IsPunct("...")) p.is_variadic = true;
    if (t.IsPunct("[")) p.is_array = true;
    bool type_operator =
        i > 0 && (tokens[i - 1].IsIdentifier("decltype") ||
                  tokens[i - 1].IsIdentifier("__typeof__") || tokens[i - 1].IsIdentifier("typeof"));
    if (t.IsPunct("(") && type_operator) {
      i = SkipGroup(tokens, i) - 1;  // `decltype(x)` is a type, not a declarator
    } else if (t.IsPunct("(")) {
      p.is_function_pointer = true;
    }
  }
  std::vector<Token> type = tokens;
  if (p.is_function_pointer) {
    size_t at = NameInParentheses(tokens);
    if (at < tokens.size()) {
      p.name = tokens[at].text;
      type.erase(type.begin() + static_cast<std::ptrdiff_t>(at));
    }
  } else if (p.is_array) {
    for (size_t i = 1; i < tokens.size(); ++i) {
      if (tokens[i].IsPunct("[") && tokens[i - 1].kind == TokenKind::kIdentifier &&
          !argspec::IsCppKeyword(tokens[i - 1].text)) {
        p.name = tokens[i - 1].text;
        type.erase(type.begin() + static_cast<std::ptrdiff_t>(i - 1));
        break;
      }
    }
  } else if (EndsWithName(tokens)) {
    p.name = tokens.back().text;
    type.pop_back();
  }
  p.type_text = JoinTokens(type);
  ReadShape(type, &p);
  return p;
}

}  // namespace

std::string ParsedParam::Key() const {
  if (is_function_pointer || is_array || is_variadic) return type_text;
  bool const_matters = pointer_depth > 0 || ref != RefKind::kNone;
  std::string key = core_type;
  if (is_const && const_matters) key = "const " + key;
  key += std::string(static_cast<size_t>(pointer_depth), '*');
  if (ref == RefKind::kLValue) key += "&";
  if (ref == RefKind::kRValue) key += "&&";
  return key;
}

std::vector<ParsedParam> ParseParameters(const std::vector<Token>& tokens) {
  std::vector<ParsedParam> params;
  if (tokens.empty()) return params;
  if (tokens.size() == 1 && tokens[0].IsIdentifier("void")) return params;
  for (const std::vector<Token>& part : SplitOnCommas(tokens)) params.push_back(ReadParam(part));
  return params;
}

std::string JoinTokens(const std::vector<Token>& tokens) {
  std::string text;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (i > 0 && IsWordToken(t)) {
      const Token& prev = tokens[i - 1];
      bool glued = prev.IsPunct("::") || prev.IsPunct("<") || prev.IsPunct("(") ||
                   prev.IsPunct("[") || prev.IsPunct("~");
      if (!glued) text += ' ';
    }
    text += t.text;
  }
  return text;
}

bool IsBuiltinTypeWord(const std::string& word) {
  static const char* const kWords[] = {"void",     "bool",     "char",  "char8_t", "char16_t",
                                       "char32_t", "wchar_t",  "short", "int",     "long",
                                       "signed",   "unsigned", "float", "double",  "auto",
                                       "__int128", "_Float16", "__fp16"};
  for (const char* w : kWords) {
    if (word == w) return true;
  }
  return false;
}

}  // namespace jaxcc::signature
