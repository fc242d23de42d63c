// Expansion works on a stack holding the rest of the input reversed: a macro's replacement is
// pushed back onto it, so rescanning sees the replacement followed by the rest of the input (a
// function-like macro at the end of a replacement may take its arguments from there), and no
// rescan recurses. Only the full expansion of arguments before substitution recurses, bounded
// by kMaxExpansionDepth.
#include "signature/macro_expander.h"

#include <algorithm>

namespace jaxcc::signature {
namespace {

// A name's recursion notes are capped: one is enough to explain the error.
constexpr size_t kMaxSelfReferences = 8;

std::string Plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

int MacroExpander::NameId(const std::string& name) {
  auto [it, inserted] = name_ids_.emplace(name, static_cast<int>(name_ids_.size()));
  return it->second;
}

int MacroExpander::Intern(std::vector<int> set) {
  auto [it, inserted] = hide_set_ids_.emplace(set, static_cast<int>(hide_sets_.size()));
  if (inserted) hide_sets_.push_back(std::move(set));
  return it->second;
}

bool MacroExpander::Hidden(int hide_set, int name_id) const {
  const std::vector<int>& set = hide_sets_[hide_set];
  return std::binary_search(set.begin(), set.end(), name_id);
}

int MacroExpander::Union(int a, int b) {
  if (a == b || b == 0) return a;
  if (a == 0) return b;
  auto key = std::make_pair(std::min(a, b), std::max(a, b));
  auto it = unions_.find(key);
  if (it != unions_.end()) return it->second;
  std::vector<int> merged;
  std::set_union(hide_sets_[a].begin(), hide_sets_[a].end(), hide_sets_[b].begin(),
                 hide_sets_[b].end(), std::back_inserter(merged));
  int id = Intern(std::move(merged));
  unions_.emplace(key, id);
  return id;
}

int MacroExpander::Intersect(int a, int b) {
  if (a == b) return a;
  if (a == 0 || b == 0) return 0;
  std::vector<int> common;
  std::set_intersection(hide_sets_[a].begin(), hide_sets_[a].end(), hide_sets_[b].begin(),
                        hide_sets_[b].end(), std::back_inserter(common));
  return Intern(std::move(common));
}

bool MacroExpander::Charge(size_t count, const Token& at) {
  created_ += count;
  if (created_ <= kMaxExpansionTokens) return true;
  limit_problem_ = "macro expansion stopped here: this source's macros expand to more than " +
                   std::to_string(kMaxExpansionTokens) +
                   " tokens (jaxcc's bound, which keeps a runaway macro from hanging the load)";
  limit_at_ = at;
  return false;
}

int MacroExpander::InvocationOf(const Token& name, const MacroDefinition* macro) {
  if (name.expansion >= 0) return name.expansion;
  Invocation record;
  record.name = name;
  record.macro = macro;
  invocations_.push_back(std::move(record));
  return static_cast<int>(invocations_.size()) - 1;
}

void MacroExpander::NoteProblem(int invocation, const Token& at, std::string message) {
  Invocation& record = invocations_[invocation];
  if (!record.problem.empty()) return;  // the first one explains the rest
  record.problem = std::move(message);
  record.problem_at = at;
}

bool MacroExpander::Expand(const std::vector<Token>& tokens, std::vector<Token>* out) {
  Sequence stack;
  stack.reserve(tokens.size());
  for (auto t = tokens.rbegin(); t != tokens.rend(); ++t) stack.push_back({*t, 0, false});
  Sequence result;
  bool ok = ExpandSequence(std::move(stack), 0, &result);
  for (PPToken& t : result) {  // no exact reserve: `out` grows run by run, geometrically
    if (!t.placemarker) out->push_back(std::move(t.token));
  }
  return ok;
}

// Whether the next token of `out` is the operand of a `defined` operator.
bool MacroExpander::OperandOfDefined(const Sequence& out) {
  size_t n = out.size();
  if (n >= 1 && out[n - 1].token.IsIdentifier("defined")) return true;
  return n >= 2 && out[n - 1].token.IsPunct("(") && out[n - 2].token.IsIdentifier("defined");
}

bool MacroExpander::ExpandSequence(Sequence stack, int depth, Sequence* out) {
  while (!stack.empty()) {
    PPToken t = std::move(stack.back());
    stack.pop_back();
    const MacroDefinition* macro = t.token.kind == TokenKind::kIdentifier && !t.placemarker &&
                                           !(defined_operator_ && OperandOfDefined(*out))
                                       ? macros_->Find(t.token.text)
                                       : nullptr;
    if (macro == nullptr) {
      out->push_back(std::move(t));
      continue;
    }
    if (Hidden(t.hide_set, NameId(macro->name))) {
      if (t.token.expansion >= 0) {
        std::vector<Token>& refs = invocations_[t.token.expansion].self_references;
        if (refs.size() < kMaxSelfReferences) refs.push_back(t.token);
      }
      out->push_back(std::move(t));
      continue;
    }
    if (macro->function_like && (stack.empty() || !stack.back().token.IsPunct("("))) {
      out->push_back(std::move(t));  // a function-like macro's name without `(` is no call
      continue;
    }
    Sequence result;
    bool expanded = false;
    if (!ExpandMacro(*macro, t, &stack, depth, &result, &expanded)) return false;
    if (!expanded) {
      out->push_back(std::move(t));
      continue;
    }
    stack.insert(stack.end(), std::make_move_iterator(result.rbegin()),
                 std::make_move_iterator(result.rend()));
  }
  return true;
}

bool MacroExpander::ExpandMacro(const MacroDefinition& macro, const PPToken& name, Sequence* stack,
                                int depth, Sequence* result, bool* expanded) {
  int invocation = InvocationOf(name.token, &macro);
  int hide_set = name.hide_set;
  Arguments args;
  if (macro.function_like) {
    Sequence consumed;  // to put back, untouched, when the invocation is malformed
    consumed.push_back(std::move(stack->back()));
    stack->pop_back();
    int parens = 1;
    const PPToken* close = nullptr;
    args.raw.emplace_back();
    while (!stack->empty()) {
      consumed.push_back(std::move(stack->back()));
      stack->pop_back();
      const PPToken& a = consumed.back();
      if (a.token.IsPunct("(")) ++parens;
      if (a.token.IsPunct(")") && --parens == 0) {
        close = &a;
        break;
      }
      bool variadic_tail = macro.variadic && args.raw.size() == macro.params.size();
      if (a.token.IsPunct(",") && parens == 1 && !variadic_tail) {
        args.raw.emplace_back();
        continue;
      }
      args.raw.back().push_back(a);
    }
    size_t wanted = macro.params.size();
    size_t given = args.raw.size();
    if (wanted == 0 && given == 1 && args.raw[0].empty()) given = 0;
    if (macro.variadic && given + 1 == wanted) given = wanted;  // `F(a)` for `F(x, ...)`
    std::string problem;
    if (close == nullptr) {
      problem = "the arguments of macro `" + macro.name +
                "` are never closed: a `)` is missing before the end of the code (or the next "
                "directive); balance the parentheses";
    } else if (macro.variadic ? given < wanted : given != wanted) {
      problem =
          "macro `" + macro.name + "` takes " + (macro.variadic ? "at least " : "") +
          Plural(macro.variadic ? wanted - 1 : wanted, "argument") + ", but " +
          Plural(args.raw.size() == 1 && args.raw[0].empty() ? 0 : args.raw.size(), "argument") +
          (args.raw.size() == 1 ? " was" : " were") +
          " given (a comma outside parentheses splits arguments; wrap it in parentheses)";
    }
    if (!problem.empty()) {
      NoteProblem(invocation, name.token, std::move(problem));
      stack->insert(stack->end(), std::make_move_iterator(consumed.rbegin()),
                    std::make_move_iterator(consumed.rend()));
      return true;
    }
    if (wanted == 0) args.raw.clear();
    args.raw.resize(wanted);
    args.expanded.resize(wanted);
    args.done.assign(wanted, false);
    hide_set = Intersect(name.hide_set, close->hide_set);
  }
  hide_set = Union(hide_set, Intern({NameId(macro.name)}));
  if (!Substitute(macro, &args, macro.body, 0, macro.body.size(), depth, result)) return false;
  if (!Charge(result->size(), invocations_[invocation].name)) return false;
  size_t kept = 0;  // placemarkers dropped in place
  for (PPToken& t : *result) {
    if (t.placemarker) continue;
    t.hide_set = Union(t.hide_set, hide_set);
    t.token.expansion = invocation;
    if (&(*result)[kept] != &t) (*result)[kept] = std::move(t);
    ++kept;
  }
  result->resize(kept, PPToken{});
  *expanded = true;
  return true;
}

bool MacroExpander::ExpandedArgument(Arguments* args, size_t index, int depth,
                                     const Sequence** out) {
  if (!args->done[index]) {
    if (depth + 1 > kMaxExpansionDepth) {
      limit_problem_ = "macro expansion stopped here: macro arguments nest deeper than " +
                       std::to_string(kMaxExpansionDepth) + " levels (jaxcc's bound)";
      const Token& at = args->raw[index].empty() ? Token{} : args->raw[index].front().token;
      limit_at_ = at.expansion >= 0 ? invocations_[at.expansion].name : at;
      return false;
    }
    const Sequence& raw = args->raw[index];
    if (!ExpandSequence(Sequence(raw.rbegin(), raw.rend()), depth + 1, &args->expanded[index])) {
      return false;
    }
    args->done[index] = true;
  }
  *out = &args->expanded[index];
  return true;
}

bool MacroExpander::Substitute(const MacroDefinition& macro, Arguments* args,
                               const std::vector<Token>& body, size_t begin, size_t end, int depth,
                               Sequence* out) {
  auto param = [&](size_t i) {
    return i < end && macro.function_like && body[i].kind == TokenKind::kIdentifier
               ? macro.ParamIndex(body[i].text)
               : -1;
  };
  for (size_t i = begin; i < end; ++i) {
    const Token& t = body[i];
    bool pasted_next = i + 1 < end && body[i + 1].IsPunct("##");
    bool pasted_prev = i > begin && body[i - 1].IsPunct("##");
    if (macro.function_like && t.IsPunct("#") && param(i + 1) >= 0) {
      out->push_back(Stringize(args->raw[param(i + 1)], t));
      ++i;
      continue;
    }
    if (t.IsPunct("##") && i + 1 < end && !out->empty()) {
      ++i;
      int q = param(i);
      if (q < 0) {
        Glue(out, {body[i], 0, false});
        continue;
      }
      const Sequence& arg = args->raw[q];
      if (arg.empty()) {
        // GNU's `, ## __VA_ARGS__`: no variadic arguments, no comma.
        bool last_variadic = macro.variadic && q + 1 == static_cast<int>(macro.params.size());
        if (last_variadic && out->back().token.IsPunct(",")) out->pop_back();
        continue;
      }
      Glue(out, arg.front());
      out->insert(out->end(), arg.begin() + 1, arg.end());
      continue;
    }
    if (macro.variadic && t.IsIdentifier("__VA_OPT__") && i + 1 < end && body[i + 1].IsPunct("(")) {
      size_t close = i + 1;
      for (int parens = 0; close < end; ++close) {
        if (body[close].IsPunct("(")) ++parens;
        if (body[close].IsPunct(")") && --parens == 0) break;
      }
      const Sequence* variadic = nullptr;
      if (!ExpandedArgument(args, macro.params.size() - 1, depth, &variadic)) return false;
      bool has_tokens = std::any_of(variadic->begin(), variadic->end(),
                                    [](const PPToken& p) { return !p.placemarker; });
      if (has_tokens) {
        if (!Substitute(macro, args, body, i + 2, std::min(close, end), depth, out)) return false;
      } else if (pasted_prev || (close + 1 < end && body[close + 1].IsPunct("##"))) {
        out->push_back({Token{}, 0, true});
      }
      i = close;
      continue;
    }
    int p = param(i);
    if (p < 0) {
      out->push_back({t, 0, false});
      continue;
    }
    if (pasted_next || pasted_prev) {  // an operand of `##` is pasted unexpanded
      const Sequence& arg = args->raw[p];
      if (arg.empty()) {
        out->push_back({Token{}, 0, true});
      } else {
        out->insert(out->end(), arg.begin(), arg.end());
      }
      continue;
    }
    const Sequence* expanded = nullptr;
    if (!ExpandedArgument(args, p, depth, &expanded)) return false;
    out->insert(out->end(), expanded->begin(), expanded->end());
  }
  return true;
}

MacroExpander::PPToken MacroExpander::Stringize(const Sequence& arg, const Token& at) const {
  std::string text = "\"";
  const Token* previous = nullptr;
  for (const PPToken& p : arg) {
    if (p.placemarker) continue;
    const Token& t = p.token;
    if (previous && (previous->end_offset() != t.offset || previous->expansion != t.expansion)) {
      text += ' ';
    }
    bool literal = t.kind == TokenKind::kString || t.kind == TokenKind::kChar;
    for (char c : t.text) {
      if (literal && (c == '"' || c == '\\')) text += '\\';
      text += c;
    }
    previous = &t;
  }
  text += '"';
  Token token = at;
  token.kind = TokenKind::kString;
  token.text = std::move(text);
  return {std::move(token), 0, false};
}

void MacroExpander::Glue(Sequence* out, const PPToken& right) {
  PPToken& left = out->back();
  if (right.placemarker) return;
  if (left.placemarker) {
    left = right;
    return;
  }
  std::string text = left.token.text + right.token.text;
  std::vector<Token> pasted = Lex(text);
  bool one_token = pasted.size() == 1 && pasted[0].text.size() == text.size() &&
                   pasted[0].kind != TokenKind::kLineComment &&
                   pasted[0].kind != TokenKind::kBlockComment &&
                   pasted[0].kind != TokenKind::kPreprocessor;
  if (!one_token) {  // not a valid token: the compiler reports it; both stay as they are
    out->push_back(right);
    return;
  }
  left.token.kind = pasted[0].kind;
  left.token.text = std::move(text);
  left.hide_set = Intersect(left.hide_set, right.hide_set);
}

}  // namespace jaxcc::signature
