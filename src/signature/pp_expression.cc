// A recursive-descent evaluator over optional values: nullopt is "unknown" and spreads through
// every operator except the short-circuiting ones, as far as the C rules let a known operand
// decide. Arithmetic is done in uint64_t, so no input can overflow a signed integer.
#include "signature/pp_expression.h"

#include <cstdint>

namespace jaxcc::signature {
namespace {

using Value = std::optional<int64_t>;

// Longest operator chain tried; a deeper one is unknown rather than a deep recursion.
constexpr int kMaxNesting = 1024;

std::optional<int64_t> ParseInteger(const std::string& text) {
  std::string digits;
  for (char c : text) {
    if (c != '\'') digits += c;
  }
  while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'U' || digits.back() == 'l' ||
                             digits.back() == 'L')) {
    digits.pop_back();
  }
  int base = 10;
  size_t i = 0;
  if (digits.size() > 1 && digits[0] == '0') {
    if (digits[1] == 'x' || digits[1] == 'X') {
      base = 16;
      i = 2;
    } else if (digits[1] == 'b' || digits[1] == 'B') {
      base = 2;
      i = 2;
    } else {
      base = 8;
      i = 1;
    }
  }
  if (i >= digits.size() && base != 8) return std::nullopt;
  uint64_t value = 0;
  for (; i < digits.size(); ++i) {
    char c = digits[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : 99;
    if (d >= base) return std::nullopt;
    if (value > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
      return std::nullopt;
    }
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  if (value > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(value);
}

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : t_(tokens) {}

  Condition Run() {
    Value v = Conditional(0);
    if (failed_ || pos_ != t_.size() || !v) return Condition::kUnknown;
    return *v != 0 ? Condition::kTrue : Condition::kFalse;
  }

 private:
  bool Peek(const char* punct) const { return pos_ < t_.size() && t_[pos_].IsPunct(punct); }
  bool Take(const char* punct) {
    if (!Peek(punct)) return false;
    ++pos_;
    return true;
  }

  bool Deep(int depth) {
    if (depth <= kMaxNesting) return false;
    failed_ = true;
    return true;
  }

  Value Conditional(int depth) {
    if (Deep(depth)) return std::nullopt;
    Value c = Binary(0, depth + 1);
    if (!Take("?")) return c;
    Value a = Conditional(depth + 1);
    if (!Take(":")) failed_ = true;
    Value b = Conditional(depth + 1);
    if (!c) return a && b && *a == *b ? a : std::nullopt;
    return *c != 0 ? a : b;
  }

  // Binary operators by precedence level, lowest first.
  static int Level(const Token& t) {
    static const char* const kLevels[][4] = {{"||"},
                                             {"&&"},
                                             {"|"},
                                             {"^"},
                                             {"&"},
                                             {"==", "!="},
                                             {"<", ">", "<=", ">="},
                                             {"<<", ">>"},
                                             {"+", "-"},
                                             {"*", "/", "%"}};
    if (t.kind != TokenKind::kPunct) return -1;
    for (int level = 0; level < 10; ++level) {
      for (const char* op : kLevels[level]) {
        if (op != nullptr && t.text == op) return level;
      }
    }
    return -1;
  }

  Value Binary(int level, int depth) {
    if (Deep(depth)) return std::nullopt;
    if (level == 10) return Unary(depth + 1);
    Value left = Binary(level + 1, depth + 1);
    while (pos_ < t_.size() && Level(t_[pos_]) == level) {
      std::string op = t_[pos_++].text;
      Value right = Binary(level + 1, depth + 1);
      left = Apply(op, left, right);
    }
    return left;
  }

  static Value Apply(const std::string& op, Value a, Value b) {
    if (op == "||") {
      if ((a && *a) || (b && *b)) return 1;
      return a && b ? Value(0) : std::nullopt;
    }
    if (op == "&&") {
      if ((a && !*a) || (b && !*b)) return 0;
      return a && b ? Value(1) : std::nullopt;
    }
    if (!a || !b) return std::nullopt;
    uint64_t x = static_cast<uint64_t>(*a), y = static_cast<uint64_t>(*b);
    if (op == "|") return static_cast<int64_t>(x | y);
    if (op == "^") return static_cast<int64_t>(x ^ y);
    if (op == "&") return static_cast<int64_t>(x & y);
    if (op == "==") return *a == *b;
    if (op == "!=") return *a != *b;
    if (op == "<") return *a < *b;
    if (op == ">") return *a > *b;
    if (op == "<=") return *a <= *b;
    if (op == ">=") return *a >= *b;
    if (op == "+") return static_cast<int64_t>(x + y);
    if (op == "-") return static_cast<int64_t>(x - y);
    if (op == "*") return static_cast<int64_t>(x * y);
    if (op == "<<" || op == ">>") {
      if (*b < 0 || *b >= 64) return std::nullopt;
      return op == "<<" ? static_cast<int64_t>(x << y) : (*a >> *b);
    }
    if (*b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
    return op == "/" ? *a / *b : *a % *b;
  }

  Value Unary(int depth) {
    if (Deep(depth)) return std::nullopt;
    if (pos_ >= t_.size()) {
      failed_ = true;
      return std::nullopt;
    }
    for (const char* op : {"+", "-", "!", "~"}) {
      if (!Take(op)) continue;
      Value v = Unary(depth + 1);
      if (!v) return std::nullopt;
      uint64_t x = static_cast<uint64_t>(*v);
      if (op[0] == '-') return static_cast<int64_t>(0 - x);
      if (op[0] == '!') return *v == 0;
      if (op[0] == '~') return static_cast<int64_t>(~x);
      return v;
    }
    if (Take("(")) {
      Value v = Conditional(depth + 1);
      if (!Take(")")) failed_ = true;
      return v;
    }
    const Token& t = t_[pos_++];
    if (t.kind == TokenKind::kNumber) return ParseInteger(t.text);
    if (t.kind == TokenKind::kChar && t.text.size() == 3 && t.text[0] == '\'') {
      return static_cast<int64_t>(static_cast<signed char>(t.text[1]));
    }
    if (t.IsIdentifier("true")) return 1;
    if (t.IsIdentifier("false")) return 0;
    if (t.kind == TokenKind::kIdentifier) {
      // A name followed by `(` is a function-like macro nobody defined (`__has_include(x)`):
      // skip its arguments, the value stays unknown.
      if (Peek("(")) {
        for (int parens = 0; pos_ < t_.size(); ++pos_) {
          if (t_[pos_].IsPunct("(")) ++parens;
          if (t_[pos_].IsPunct(")") && --parens == 0) {
            ++pos_;
            break;
          }
        }
      }
      return std::nullopt;
    }
    failed_ = true;
    return std::nullopt;
  }

  const std::vector<Token>& t_;
  size_t pos_ = 0;
  bool failed_ = false;
};

Token Number(const Token& at, Condition c) {
  Token t = at;
  t.kind = c == Condition::kUnknown ? TokenKind::kIdentifier : TokenKind::kNumber;
  t.text = c == Condition::kTrue ? "1" : c == Condition::kFalse ? "0" : "__jaxcc_unknown__";
  return t;
}

}  // namespace

Condition EvaluateCondition(const std::vector<Token>& tokens, MacroState* macros) {
  // `defined` is read before expansion (C's rule), so `defined X` asks about X itself.
  std::vector<Token> replaced;
  replaced.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].IsIdentifier("defined")) {
      replaced.push_back(tokens[i]);
      continue;
    }
    size_t name = i + 1;
    bool parens = name < tokens.size() && tokens[name].IsPunct("(");
    if (parens) ++name;
    if (name >= tokens.size() || tokens[name].kind != TokenKind::kIdentifier) {
      return Condition::kUnknown;
    }
    if (parens && (name + 1 >= tokens.size() || !tokens[name + 1].IsPunct(")"))) {
      return Condition::kUnknown;
    }
    replaced.push_back(Number(tokens[i], macros->Defined(tokens[name].text)));
    i = parens ? name + 1 : name;
  }
  MacroExpander expander(macros);
  std::vector<Token> expanded;
  if (!expander.Expand(replaced, &expanded) || macros->used_uncertain()) {
    return Condition::kUnknown;
  }
  for (Token& t : expanded) {
    // After expansion a name the sources certainly #undef-ined is 0, as in C; one they never
    // mention stays unknown (it may well be defined by the compiler or a header).
    if (t.kind == TokenKind::kIdentifier && !t.IsIdentifier("true") && !t.IsIdentifier("false") &&
        macros->Defined(t.text) == Condition::kFalse) {
      t = Number(t, Condition::kFalse);
    }
  }
  return Parser(expanded).Run();
}

}  // namespace jaxcc::signature
