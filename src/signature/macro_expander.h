// A token-level C preprocessor macro expander: object-like and function-like macros, `#`, `##`,
// variadic macros with `__VA_ARGS__`, `__VA_OPT__` and GNU's `, ## __VA_ARGS__`, and rescanning
// under the C rule that a macro is not expanded again inside its own expansion (Prosser's hide
// sets). It expands what it is given; which definitions hold where is the caller's business.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "signature/lexer.h"
#include "signature/macro_definition.h"

namespace jaxcc::signature {

/// Bounds that keep any input finite (decision 88). A source whose expansion would create more
/// tokens than this stops expanding with a kSignature error at the invocation that crossed it;
/// brainevent 0.3.0's largest source (`_fcn/binary_fcnmm.cu`) creates 64 212.
inline constexpr size_t kMaxExpansionTokens = size_t{1} << 20;
/// Macro arguments nested deeper than this (`F(F(F(...)))`) stop the expansion the same way.
inline constexpr int kMaxExpansionDepth = 64;

/// Where the expander finds the macro a name means now, or nullptr when it is no macro (an
/// identifier no source defines stays as it is: system and CUDA macros are never expanded).
class MacroLookup {
 public:
  virtual ~MacroLookup() = default;
  virtual const MacroDefinition* Find(const std::string& name) = 0;
};

/// One top-level invocation: a macro name read from the source and everything its expansion
/// produced (tokens whose `expansion` field is this record's index).
struct Invocation {
  Token name;                              ///< the macro's name where the source invokes it
  const MacroDefinition* macro = nullptr;  ///< its definition at that point (owned by the caller)
  /// Macro names met inside their own expansion and left unexpanded, as C requires (`#define A
  /// B`, `#define B A`): the sign of a recursive macro.
  std::vector<Token> self_references;
  /// Why an invocation inside this one was not expanded (arguments never closed, a wrong
  /// argument count), with the macro name it concerns; empty when all went well.
  std::string problem;
  Token problem_at;
};

/// Expands token runs with one shared budget; records invocations as it goes.
class MacroExpander {
 public:
  explicit MacroExpander(MacroLookup* macros) : macros_(macros) {}

  /// Appends the expansion of `tokens` (code tokens, no directives or comments) to `out`.
  /// Returns false when a limit stopped it: `limit_problem()` says which, at which invocation;
  /// `out` then holds what was expanded before.
  bool Expand(const std::vector<Token>& tokens, std::vector<Token>* out);

  /// For `#if` lines: a name right after `defined` or `defined (` is never expanded, so a
  /// `defined` produced by an expansion still asks about the name itself (g++'s rule).
  void set_defined_operator(bool on) { defined_operator_ = on; }

  std::vector<Invocation>& invocations() { return invocations_; }
  const std::string& limit_problem() const { return limit_problem_; }
  const Token& limit_at() const { return limit_at_; }
  size_t tokens_created() const { return created_; }

 private:
  struct PPToken {
    Token token;
    int hide_set = 0;  // index into hide_sets_; 0 is the empty set
    bool placemarker = false;
  };
  using Sequence = std::vector<PPToken>;

  // The arguments of one function-like invocation, raw and (on first use) fully expanded.
  struct Arguments {
    std::vector<Sequence> raw;
    std::vector<Sequence> expanded;
    std::vector<bool> done;
  };

  static bool OperandOfDefined(const Sequence& out);
  // Expands `stack`: the input in reverse order, so its next token is at the back.
  bool ExpandSequence(Sequence stack, int depth, Sequence* out);
  // Expands the invocation of `macro` named by `name`, taking its arguments from the top of
  // `stack` (the rest of the input, reversed). `*expanded` is false when the invocation is
  // malformed (recorded as the invocation's problem; nothing consumed).
  bool ExpandMacro(const MacroDefinition& macro, const PPToken& name, Sequence* stack, int depth,
                   Sequence* result, bool* expanded);
  bool Substitute(const MacroDefinition& macro, Arguments* args, const std::vector<Token>& body,
                  size_t begin, size_t end, int depth, Sequence* out);
  bool ExpandedArgument(Arguments* args, size_t index, int depth, const Sequence** out);
  PPToken Stringize(const Sequence& arg, const Token& at) const;
  void Glue(Sequence* out, const PPToken& right);
  bool Charge(size_t count, const Token& at);
  int InvocationOf(const Token& name, const MacroDefinition* macro);
  void NoteProblem(int invocation, const Token& at, std::string message);

  int NameId(const std::string& name);
  int Intersect(int a, int b);
  int Union(int a, int b);
  int Intern(std::vector<int> set);
  bool Hidden(int hide_set, int name_id) const;

  MacroLookup* macros_;
  std::vector<Invocation> invocations_;
  std::vector<std::vector<int>> hide_sets_{{}};
  std::map<std::vector<int>, int> hide_set_ids_{{{}, 0}};
  std::map<std::pair<int, int>, int> unions_;
  std::unordered_map<std::string, int> name_ids_;
  std::string limit_problem_;
  Token limit_at_;
  size_t created_ = 0;
  bool defined_operator_ = false;
};

}  // namespace jaxcc::signature
