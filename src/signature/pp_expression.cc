// A recursive-descent evaluator over optional values: nullopt is "unknown" and spreads through
// every operator except the short-circuiting ones, as far as the C rules let a known operand
// decide. Values carry C++'s `#if` types: every integer is intmax_t or uintmax_t ([cpp.cond]),
// so a `u` suffix, a literal too large for intmax_t, or one unsigned operand makes an operation
// unsigned (the usual arithmetic conversions: `-1 < 0u` is false, as in g++). Arithmetic is done
// in uint64_t, so no input can overflow a signed integer.
#include "signature/pp_expression.h"

#include <cstdint>

namespace jaxcc::signature {
namespace {

struct Number {
  uint64_t bits = 0;
  bool is_unsigned = false;

  int64_t as_signed() const { return static_cast<int64_t>(bits); }
  bool truth() const { return bits != 0; }
};

using Value = std::optional<Number>;

Value Signed(int64_t v) { return Number{static_cast<uint64_t>(v), false}; }
Value Bool(bool b) { return Signed(b ? 1 : 0); }

// Longest operator chain tried; a deeper one is unknown rather than a deep recursion.
constexpr int kMaxNesting = 1024;

Value ParseInteger(const std::string& text) {
  std::string digits;
  for (char c : text) {
    if (c != '\'') digits += c;
  }
  bool suffix_unsigned = false;
  while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'U' || digits.back() == 'l' ||
                             digits.back() == 'L')) {
    suffix_unsigned = suffix_unsigned || digits.back() == 'u' || digits.back() == 'U';
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
  // A literal intmax_t cannot hold is uintmax_t (g++ warns "so large that it is unsigned").
  return Number{value, suffix_unsigned || value > static_cast<uint64_t>(INT64_MAX)};
}

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : t_(tokens) {}

  Condition Run() {
    Value v = Conditional(0);
    if (failed_ || pos_ != t_.size() || !v) return Condition::kUnknown;
    return v->truth() ? Condition::kTrue : Condition::kFalse;
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
    // The result has the common type of both arms, whichever is chosen.
    bool is_unsigned = (a && a->is_unsigned) || (b && b->is_unsigned);
    if (a) a->is_unsigned = is_unsigned;
    if (b) b->is_unsigned = is_unsigned;
    if (!c) {
      return a && b && a->bits == b->bits && a->is_unsigned == b->is_unsigned ? a : std::nullopt;
    }
    return c->truth() ? a : b;
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
      if ((a && a->truth()) || (b && b->truth())) return Bool(true);
      return a && b ? Bool(false) : std::nullopt;
    }
    if (op == "&&") {
      if ((a && !a->truth()) || (b && !b->truth())) return Bool(false);
      return a && b ? Bool(true) : std::nullopt;
    }
    if (!a || !b) return std::nullopt;
    uint64_t x = a->bits, y = b->bits;
    if (op == "<<" || op == ">>") {
      // The result has the left operand's type; a negative or too wide count is undefined.
      if ((!b->is_unsigned && b->as_signed() < 0) || y >= 64) return std::nullopt;
      if (op == "<<") return Number{x << y, a->is_unsigned};
      if (a->is_unsigned) return Number{x >> y, true};
      return Signed(a->as_signed() >> y);
    }
    bool u = a->is_unsigned || b->is_unsigned;  // the usual arithmetic conversions
    if (op == "|") return Number{x | y, u};
    if (op == "^") return Number{x ^ y, u};
    if (op == "&") return Number{x & y, u};
    if (op == "==") return Bool(x == y);
    if (op == "!=") return Bool(x != y);
    if (op == "<") return Bool(u ? x < y : a->as_signed() < b->as_signed());
    if (op == ">") return Bool(u ? x > y : a->as_signed() > b->as_signed());
    if (op == "<=") return Bool(u ? x <= y : a->as_signed() <= b->as_signed());
    if (op == ">=") return Bool(u ? x >= y : a->as_signed() >= b->as_signed());
    if (op == "+") return Number{x + y, u};
    if (op == "-") return Number{x - y, u};
    if (op == "*") return Number{x * y, u};
    if (y == 0) return std::nullopt;
    if (u) return Number{op == "/" ? x / y : x % y, true};
    if (a->as_signed() == INT64_MIN && b->as_signed() == -1) return std::nullopt;
    return Signed(op == "/" ? a->as_signed() / b->as_signed() : a->as_signed() % b->as_signed());
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
      if (op[0] == '-') return Number{0 - v->bits, v->is_unsigned};
      if (op[0] == '!') return Bool(!v->truth());
      if (op[0] == '~') return Number{~v->bits, v->is_unsigned};
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
      return Signed(static_cast<signed char>(t.text[1]));
    }
    if (t.IsIdentifier("true")) return Bool(true);
    if (t.IsIdentifier("false")) return Bool(false);
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

Token Literal(const Token& at, Condition c) {
  Token t = at;
  t.kind = c == Condition::kUnknown ? TokenKind::kIdentifier : TokenKind::kNumber;
  t.text = c == Condition::kTrue ? "1" : c == Condition::kFalse ? "0" : "__jaxcc_unknown__";
  return t;
}

// `defined X` and `defined ( X )` replaced by 1 or 0 (or unknown); false when a `defined` has no
// identifier operand (the compiler rejects the line).
bool ReplaceDefined(const std::vector<Token>& tokens, MacroState* macros, std::vector<Token>* out) {
  out->reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].IsIdentifier("defined")) {
      out->push_back(tokens[i]);
      continue;
    }
    size_t name = i + 1;
    bool parens = name < tokens.size() && tokens[name].IsPunct("(");
    if (parens) ++name;
    if (name >= tokens.size() || tokens[name].kind != TokenKind::kIdentifier) return false;
    if (parens && (name + 1 >= tokens.size() || !tokens[name + 1].IsPunct(")"))) return false;
    out->push_back(Literal(tokens[i], macros->Defined(tokens[name].text)));
    i = parens ? name + 1 : name;
  }
  return true;
}

}  // namespace

Condition EvaluateCondition(const std::vector<Token>& tokens, MacroState* macros) {
  // `defined` is read before expansion (C's rule), so `defined X` asks about X itself.
  std::vector<Token> replaced;
  if (!ReplaceDefined(tokens, macros, &replaced)) return Condition::kUnknown;
  // A `defined` that a macro's expansion produces is evaluated too, its operand unexpanded, as
  // g++ and clang do (the standard leaves it undefined; -Wexpansion-to-defined warns).
  MacroExpander expander(macros);
  expander.set_defined_operator(true);
  std::vector<Token> produced;
  if (!expander.Expand(replaced, &produced) || macros->used_uncertain()) {
    return Condition::kUnknown;
  }
  std::vector<Token> expanded;
  if (!ReplaceDefined(produced, macros, &expanded)) return Condition::kUnknown;
  for (Token& t : expanded) {
    // After expansion a name the sources certainly #undef-ined is 0, as in C; one they never
    // mention stays unknown (it may well be defined by the compiler or a header).
    if (t.kind == TokenKind::kIdentifier && !t.IsIdentifier("true") && !t.IsIdentifier("false") &&
        macros->Defined(t.text) == Condition::kFalse) {
      t = Literal(t, Condition::kFalse);
    }
  }
  return Parser(expanded).Run();
}

}  // namespace jaxcc::signature
