// Namespace-scope walk: the source is cut into declarations at `;` and at function bodies, and
// every brace group that is not a namespace or an `extern "C"` block is skipped unread.
#include "signature/declarations.h"

#include <algorithm>
#include <limits>

#include "argspec/keywords.h"

namespace jaxcc::signature {
namespace {

// Identifiers that take a parenthesised argument and qualify a declaration rather than name it.
bool IsSpecifierMacro(const std::string& word) {
  for (const char* name :
       {"__attribute__", "__declspec", "__launch_bounds__", "__align__", "__cluster_dims__",
        "__maxnreg__", "alignas", "decltype", "noexcept", "throw"}) {
    if (word == name) return true;
  }
  return false;
}

bool IsClassKey(const Token& t) {
  return t.IsIdentifier("class") || t.IsIdentifier("struct") || t.IsIdentifier("union") ||
         t.IsIdentifier("enum");
}

struct Scope {
  std::vector<std::string> names;  // segments this block adds to the path
  bool anonymous = false;
  bool is_namespace = true;  // false for `extern "C" {`
  size_t begin = 0;
};

struct Candidate {
  size_t name = 0, open = 0, close = 0;
  std::vector<std::string> qualifier;
  bool absolute = false;
  bool is_template = false;
  bool is_kernel = false;
  bool class_key_before = false;
  bool specialisation = false;  // `f<double>(...)`: a declarator, but no new name
};

class Scanner {
 public:
  Scanner(const std::vector<Token>& code, int source_index)
      : code_(code), source_index_(source_index) {}

  SourceScan Run() {
    size_t begin = 0;  // first token of the pending declaration
    size_t i = 0;
    while (i < code_.size()) {
      const Token& t = code_[i];
      if (i == begin) {
        if (OpenScope(&i) || t.IsPunct(";")) {
          if (t.IsPunct(";")) ++i;
          begin = i;
          continue;
        }
        if (t.IsPunct("}")) {
          CloseScope(t.offset);
          begin = ++i;
          continue;
        }
      } else if (StartsDeclaration(i)) {
        // A macro invocation without `;` must not swallow the namespace or template after it.
        Record(begin, i, false);
        begin = i;
        continue;
      }
      if (t.IsPunct("(") || t.IsPunct("[")) {
        i = SkipGroup(i);
      } else if (t.IsPunct(";")) {
        Record(begin, i, false);
        begin = ++i;
      } else if (t.IsPunct("}")) {
        Record(begin, i, false);  // the scope closes with a declaration pending
        begin = i;
      } else if (t.IsPunct("{")) {
        bool body = IsFunctionBody(begin, i);
        size_t after = SkipBraces(i);
        if (body) {
          Record(begin, i, true);
          begin = after;
        }
        i = after;
      } else {
        ++i;
      }
    }
    if (begin < code_.size()) Record(begin, code_.size(), false);
    while (!scopes_.empty()) CloseScope(std::numeric_limits<size_t>::max());
    return std::move(out_);
  }

 private:
  bool Is(size_t i, const char* punct) const { return i < code_.size() && code_[i].IsPunct(punct); }
  bool IsWord(size_t i, const char* word) const {
    return i < code_.size() && code_[i].IsIdentifier(word);
  }

  // `namespace`, `template`, `using`, `typedef` and `extern` can only begin a declaration.
  bool StartsDeclaration(size_t i) const {
    const Token& t = code_[i];
    const Token& prev = code_[i - 1];
    if (t.IsIdentifier("namespace"))
      return !prev.IsIdentifier("using") && !prev.IsIdentifier("inline");
    if (t.IsIdentifier("template")) {
      return !prev.IsPunct("::") && !prev.IsPunct(".") && !prev.IsPunct("->") &&
             !prev.IsIdentifier("extern") && !prev.IsIdentifier("typename");
    }
    if (t.IsIdentifier("inline")) return IsWord(i + 1, "namespace");
    return t.IsIdentifier("using") || t.IsIdentifier("typedef") || t.IsIdentifier("extern");
  }

  // Index after the bracket group opened at `open`, counting ( and [ only.
  size_t SkipGroup(size_t open) const {
    int depth = 0;
    for (size_t i = open; i < code_.size(); ++i) {
      if (Is(i, "(") || Is(i, "[")) ++depth;
      if ((Is(i, ")") || Is(i, "]")) && --depth == 0) return i + 1;
      if (Is(i, ";") && depth > 0) return i;  // unbalanced: stop at the statement end
    }
    return code_.size();
  }

  // Whether the bracket group opened at `open` ends exactly at `close` (SkipGroup also stops at a
  // `;` or the end of input when the group is unbalanced).
  bool GroupClosesAt(size_t open, size_t close) const {
    if (close >= code_.size() || close <= open) return false;
    int depth = 0;
    for (size_t i = open; i <= close; ++i) {
      if (Is(i, "(") || Is(i, "[")) ++depth;
      if ((Is(i, ")") || Is(i, "]")) && --depth == 0) return i == close;
    }
    return false;
  }

  size_t SkipBraces(size_t open) const {
    int depth = 0;
    for (size_t i = open; i < code_.size(); ++i) {
      if (Is(i, "{")) ++depth;
      if (Is(i, "}") && --depth == 0) return i + 1;
    }
    return code_.size();
  }

  // `<...>` after `template`, nested angles and parentheses respected.
  size_t SkipAngles(size_t open) const {
    int angles = 0;
    for (size_t i = open; i < code_.size();) {
      if (Is(i, "(") || Is(i, "[")) {
        i = SkipGroup(i);
        continue;
      }
      if (Is(i, "<")) ++angles;
      if (Is(i, ">")) --angles;
      if (Is(i, ">>")) angles -= 2;
      if (Is(i, "{") || Is(i, ";")) return i;
      ++i;
      if (angles <= 0) return i;
    }
    return code_.size();
  }

  size_t SkipAttributes(size_t i) const {
    while (true) {
      if (Is(i, "[") && Is(i + 1, "[")) {
        i = SkipGroup(i);
      } else if (i < code_.size() && code_[i].kind == TokenKind::kIdentifier &&
                 IsSpecifierMacro(code_[i].text) && Is(i + 1, "(")) {
        i = SkipGroup(i + 1);
      } else {
        return i;
      }
    }
  }

  // `namespace a::b {`, `inline namespace v1 {`, `namespace {`, `extern "C" {` at `*i`.
  bool OpenScope(size_t* i) {
    size_t j = *i;
    if (IsWord(j, "extern") && j + 2 < code_.size() && code_[j + 1].kind == TokenKind::kString &&
        Is(j + 2, "{")) {
      scopes_.push_back({{}, false, false, code_[j + 2].offset});
      *i = j + 3;
      return true;
    }
    if (IsWord(j, "inline")) ++j;
    if (!IsWord(j, "namespace")) return false;
    std::vector<std::string> names;
    j = SkipAttributes(j + 1);
    while (j < code_.size() && code_[j].kind == TokenKind::kIdentifier) {
      if (!code_[j].IsIdentifier("inline")) names.push_back(code_[j].text);
      j = SkipAttributes(j + 1);
      if (!Is(j, "::")) break;
      ++j;
    }
    if (!Is(j, "{")) return false;  // an alias (`namespace x = y;`) is read as a declaration
    scopes_.push_back({names, names.empty(), true, code_[j].offset});
    *i = j + 1;
    return true;
  }

  void CloseScope(size_t end_offset) {
    if (scopes_.empty()) return;  // a stray `}` (unbalanced macros): nothing to close
    Scope scope = scopes_.back();
    if (scope.is_namespace) out_.ranges.push_back({scope.begin, end_offset, CurrentPath()});
    scopes_.pop_back();
  }

  std::vector<std::string> CurrentPath() const {
    std::vector<std::string> path;
    for (const Scope& s : scopes_) path.insert(path.end(), s.names.begin(), s.names.end());
    return path;
  }

  bool InAnonymous() const {
    for (const Scope& s : scopes_) {
      if (s.anonymous) return true;
    }
    return false;
  }

  // Whether the token before a declarator name (at `prev`) can end a declaration's type part.
  bool PrecedesDeclarator(size_t prev, size_t begin, size_t specifier_group_end) const {
    if (prev < begin || prev >= code_.size()) return false;
    const Token& t = code_[prev];
    if (t.kind == TokenKind::kIdentifier) return true;
    if (t.IsPunct(")")) return prev + 1 == specifier_group_end;  // `decltype(x) f(`
    return t.IsPunct("*") || t.IsPunct("&") || t.IsPunct("&&") || t.IsPunct(">") ||
           t.IsPunct(">>") || t.IsPunct("]") || t.IsPunct(",");
  }

  // Declarators in [begin, end): names followed by `(` outside brackets, before any `=`.
  std::vector<Candidate> FindDeclarators(size_t begin, size_t end, bool* saw_equal) const {
    std::vector<Candidate> found;
    bool is_template = false, is_kernel = false, class_key = false, is_typedef = false;
    size_t specifier_group_end = 0;
    *saw_equal = false;
    for (size_t k = begin; k < end;) {
      const Token& t = code_[k];
      if (t.IsPunct("=")) {
        *saw_equal = true;
        break;
      }
      if (t.IsPunct("{")) {
        k = SkipBraces(k);
        continue;
      }
      if (t.IsPunct("(") || t.IsPunct("[")) {
        bool specifier = k > begin && code_[k - 1].kind == TokenKind::kIdentifier &&
                         IsSpecifierMacro(code_[k - 1].text);
        k = SkipGroup(k);
        if (specifier) specifier_group_end = k;
        continue;
      }
      if (t.kind != TokenKind::kIdentifier) {
        ++k;
        continue;
      }
      if (t.text == "template") {
        is_template = true;
        k = Is(k + 1, "<") ? SkipAngles(k + 1) : k + 1;
        continue;
      }
      if (t.text == "__global__") is_kernel = true;
      if (IsClassKey(t)) class_key = true;
      if (t.text == "typedef" || t.text == "using" || t.text == "friend") is_typedef = true;
      size_t open = SkipAttributes(k + 1);
      // An operator function, `Out& operator<<(Out&, const P&)`, `operator()`, `operator T`: a
      // declarator too, or its body is not seen as one and the declaration after it inherits
      // its `template`. Its parameters open at the first `(` past the operator.
      const bool is_operator = t.text == "operator";
      if (is_operator) {
        open = Is(k + 1, "(") && Is(k + 2, ")") ? k + 3 : k + 1;
        while (open < end && !Is(open, "(") && !Is(open, ";") && !Is(open, "{")) ++open;
      }
      if (!is_operator && Is(k + 1, "<") && !argspec::IsCppKeyword(t.text) &&
          !IsSpecifierMacro(t.text)) {
        // A template-id declarator, `T f<double>(...)` after `template <>`: a specialisation is
        // a declarator too, or its body is not seen as one and the declaration that follows
        // inherits its `template` (issue 50).
        const size_t after = SkipAttributes(SkipAngles(k + 1));
        if (Is(after, "(")) open = after;
      }
      const bool specialisation = !is_operator && open != SkipAttributes(k + 1);
      bool callable =
          (is_operator || (!argspec::IsCppKeyword(t.text) && !IsSpecifierMacro(t.text))) &&
          Is(open, "(");
      if (!callable || is_typedef) {
        ++k;
        continue;
      }
      Candidate c;
      c.name = k;
      c.open = open;
      c.close = SkipGroup(open) - 1;
      size_t q = k;
      while (q >= begin + 1 && code_[q - 1].IsPunct("::")) {
        if (q >= begin + 2 && code_[q - 2].kind == TokenKind::kIdentifier &&
            !argspec::IsCppKeyword(code_[q - 2].text)) {
          c.qualifier.insert(c.qualifier.begin(), code_[q - 2].text);
          q -= 2;
        } else {
          c.absolute = true;
          --q;
          break;
        }
      }
      if (q == 0 || !PrecedesDeclarator(q - 1, begin, specifier_group_end)) {
        ++k;
        continue;
      }
      c.is_template = is_template;
      c.specialisation = specialisation;
      c.is_kernel = is_kernel;
      c.class_key_before = class_key;
      found.push_back(c);
      k = c.close + 1;
    }
    return found;
  }

  bool IsFunctionBody(size_t begin, size_t brace) const {
    bool saw_equal = false;
    std::vector<Candidate> found = FindDeclarators(begin, brace, &saw_equal);
    return !found.empty() && !saw_equal && !found.back().class_key_before;
  }

  void Record(size_t begin, size_t end, bool body_follows) {
    bool saw_equal = false;
    std::vector<Candidate> found = FindDeclarators(begin, end, &saw_equal);
    for (size_t n = 0; n < found.size(); ++n) {
      const Candidate& c = found[n];
      if (c.specialisation) continue;  // the primary template already declared the name
      Declaration d;
      d.name = code_[c.name].text;
      d.namespaces = c.absolute ? std::vector<std::string>() : CurrentPath();
      d.namespaces.insert(d.namespaces.end(), c.qualifier.begin(), c.qualifier.end());
      d.in_anonymous_namespace = InAnonymous();
      d.is_template = c.is_template;
      d.is_definition = body_follows && n + 1 == found.size();
      d.is_cuda_kernel = c.is_kernel;
      d.source_index = source_index_;
      d.name_token = code_[c.name];
      d.close_paren = code_[std::min(c.close, code_.size() - 1)];
      d.params_closed = GroupClosesAt(c.open, c.close);
      size_t first = std::min(c.open + 1, code_.size());
      size_t last = std::max(first, std::min(c.close, code_.size()));
      std::vector<Token> inside(code_.begin() + static_cast<std::ptrdiff_t>(first),
                                code_.begin() + static_cast<std::ptrdiff_t>(last));
      d.params = ParseParameters(inside);
      out_.declarations.push_back(std::move(d));
    }
  }

  const std::vector<Token>& code_;
  int source_index_;
  std::vector<Scope> scopes_;
  SourceScan out_;
};

}  // namespace

std::string Declaration::QualifiedSignature() const {
  std::string text;
  for (const std::string& ns : namespaces) text += "::" + ns;
  text += "::" + name + "(";
  for (size_t i = 0; i < params.size(); ++i) {
    text += (i ? ", " : "") + params[i].type_text;
  }
  return text + ")";
}

SourceScan ScanDeclarations(const std::vector<Token>& code, int source_index) {
  return Scanner(code, source_index).Run();
}

std::vector<std::string> NamespacesAt(const std::vector<NamespaceRange>& ranges, size_t offset) {
  const NamespaceRange* best = nullptr;
  for (const NamespaceRange& r : ranges) {
    if (r.begin < offset && offset < r.end && (!best || r.begin > best->begin)) best = &r;
  }
  return best ? best->namespaces : std::vector<std::string>();
}

}  // namespace jaxcc::signature
