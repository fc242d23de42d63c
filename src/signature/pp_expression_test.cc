// Conditions in three values: what the sources define decides; what they never mention is unknown.
#include "signature/pp_expression.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace jaxcc::signature {
namespace {

// Macros by name: a definition line, or "" for a certainly undefined name.
class FakeState : public MacroState {
 public:
  explicit FakeState(std::map<std::string, std::string> lines) {
    for (auto& [name, line] : lines) {
      if (line.empty()) {
        undefined_.insert(name);
        continue;
      }
      std::vector<Token> tokens = Lex(line);
      defs_.emplace(name, *ParseDefine(tokens.at(0)));
    }
  }
  Condition Defined(const std::string& name) override {
    if (defs_.count(name)) return Condition::kTrue;
    return undefined_.count(name) ? Condition::kFalse : Condition::kUnknown;
  }
  const MacroDefinition* Find(const std::string& name) override {
    auto it = defs_.find(name);
    return it == defs_.end() ? nullptr : &it->second;
  }
  bool used_uncertain() const override { return false; }

 private:
  std::map<std::string, MacroDefinition> defs_;
  std::set<std::string> undefined_;
};

Condition Eval(const std::string& expr, std::map<std::string, std::string> macros = {}) {
  FakeState state(std::move(macros));
  return EvaluateCondition(Lex(expr), &state);
}

constexpr Condition T = Condition::kTrue, F = Condition::kFalse, U = Condition::kUnknown;

TEST(EvaluateConditionTest, Arithmetic) {
  EXPECT_EQ(Eval("1 + 2 * 3 == 7"), T);
  EXPECT_EQ(Eval("(1 << 4) > 0x0F && 010 == 8 && 0b11 == 3 && 10u == 10UL"), T);
  EXPECT_EQ(Eval("-1 < 0 ? 5 % 3 == 2 : 0"), T);
  EXPECT_EQ(Eval("!0 && ~0 == -1 && 'a' == 97"), T);
  EXPECT_EQ(Eval("1'000 == 1000"), T);
  EXPECT_EQ(Eval("true && !false"), T);
  EXPECT_EQ(Eval("7 / 2 == 3 && 0"), F);
}

TEST(EvaluateConditionTest, UnknownSpreadsExceptWhereAKnownOperandDecides) {
  EXPECT_EQ(Eval("__CUDA_ARCH__ >= 800"), U);
  EXPECT_EQ(Eval("0 && __CUDA_ARCH__"), F);
  EXPECT_EQ(Eval("__CUDA_ARCH__ || 1"), T);
  EXPECT_EQ(Eval("defined(__CUDACC__)"), U);
  EXPECT_EQ(Eval("__has_include(<cuda.h>)"), U);
  EXPECT_EQ(Eval("1 / 0"), U);
  EXPECT_EQ(Eval("99999999999999999999"), U);
  EXPECT_EQ(Eval("1 << 64"), U);
  EXPECT_EQ(Eval("(1"), U);
  EXPECT_EQ(Eval("1 +"), U);
  EXPECT_EQ(Eval(""), U);
  EXPECT_EQ(Eval("1.5"), U);
}

TEST(EvaluateConditionTest, MacrosOfTheSources) {
  std::map<std::string, std::string> m = {
      {"BLOCK", "#define BLOCK 256"}, {"TWICE", "#define TWICE(x) ((x) * 2)"}, {"GONE", ""}};
  EXPECT_EQ(Eval("defined(BLOCK) && defined TWICE && !defined(GONE)", m), T);
  EXPECT_EQ(Eval("TWICE(BLOCK) == 512", m), T);
  EXPECT_EQ(Eval("GONE == 0", m), T);  // certainly undefined: 0, as in C
  EXPECT_EQ(Eval("BLOCK > OTHER", m), U);
  EXPECT_EQ(Eval("defined(", m), U);
}

TEST(EvaluateConditionTest, DeepNestingIsUnknownNotACrash) {
  std::string deep(100000, '(');
  EXPECT_EQ(Eval(deep + "1"), U);
  std::string minus(100000, '-');
  EXPECT_EQ(Eval(minus + "1"), U);
}

// Issue 37, point 4: `-1 < 0u` was evaluated signed. In `#if` every integer is intmax_t or
// uintmax_t, and one unsigned operand makes the comparison unsigned (g++ agrees: false).
TEST(EvaluateConditionTest, RegressionMinusOneLessThanZeroUnsignedIsFalse) {
  EXPECT_EQ(Eval("-1 < 0u"), F);
  EXPECT_EQ(Eval("-1 < 0"), T);
  EXPECT_EQ(Eval("-1 > 0U"), T);
  EXPECT_EQ(Eval("(0u - 1) > 0"), T);
  EXPECT_EQ(Eval("-1 / 2u > 0"), T);                 // division in unsigned
  EXPECT_EQ(Eval("(1 ? -1 : 0u) > 0"), T);           // ?: takes the common type of both arms
  EXPECT_EQ(Eval("-1 >> 63 == -1"), T);              // a signed shift stays arithmetic
  EXPECT_EQ(Eval("-1u >> 63 == 1"), T);              // an unsigned one is logical
  EXPECT_EQ(Eval("18446744073709551615 == -1"), T);  // too large for intmax_t: unsigned
  EXPECT_EQ(Eval("N < 0", {{"N", "#define N -1u"}}), F);
}

// Issue 37, point 4: a `defined` that a macro's expansion produces was not evaluated. g++ and
// clang evaluate it, and its operand is not expanded.
TEST(EvaluateConditionTest, RegressionDefinedProducedByAMacroIsEvaluated) {
  std::map<std::string, std::string> macros = {
      {"HAS_FOO", "#define HAS_FOO defined(FOO)"}, {"FOO", "#define FOO 0"}, {"BAR", ""}};
  EXPECT_EQ(Eval("HAS_FOO", macros), T);  // FOO is defined (as 0: its value does not matter)
  macros["HAS_BAR"] = "#define HAS_BAR defined BAR";
  EXPECT_EQ(Eval("HAS_BAR", macros), F);
  macros["HAS"] = "#define HAS(x) defined(x)";
  EXPECT_EQ(Eval("HAS(BAR)", macros), F);
  EXPECT_EQ(Eval("HAS(FOO)", macros), U);  // the argument expands to 0 first: g++ rejects it
  EXPECT_EQ(Eval("HAS_BAZ", {{"HAS_BAZ", "#define HAS_BAZ defined(BAZ)"}}), U);  // BAZ unseen
}

}  // namespace
}  // namespace jaxcc::signature
