// The expander against what the C preprocessor does (cases checked with `g++ -E`).
#include "signature/macro_expander.h"

#include <gtest/gtest.h>

#include <string>

#include "signature/active_code.h"
#include "signature/expanded_source.h"

namespace jaxcc::signature {
namespace {

std::string Joined(const std::vector<Token>& tokens) {
  std::string out;
  for (const Token& t : tokens) out += (out.empty() ? "" : " ") + t.text;
  return out;
}

ExpandedSource ExpandText(const std::string& text) {
  return ExpandSource(DropDisabledBranches(Lex(text)));
}

std::string Expanded(const std::string& text) { return Joined(ExpandText(text).code); }

TEST(MacroExpanderTest, ObjectLikeAndFunctionLike) {
  EXPECT_EQ(Expanded("#define N 4\nint a[N];"), "int a [ 4 ] ;");
  EXPECT_EQ(Expanded("#define ADD(a, b) ((a) + (b))\nint x = ADD(1, f(2, 3));"),
            "int x = ( ( 1 ) + ( f ( 2 , 3 ) ) ) ;");
  EXPECT_EQ(Expanded("#define F() 7\nint x = F();"), "int x = 7 ;");
  // A function-like macro's name without `(` is no invocation.
  EXPECT_EQ(Expanded("#define F(x) x\nint F;"), "int F ;");
  // `NAME (` with a blank is an object-like macro whose body starts with `(`.
  EXPECT_EQ(Expanded("#define G (x) x\nG"), "( x ) x");
  // Unknown names (a system or CUDA macro) stay as they are.
  EXPECT_EQ(Expanded("__global__ void k(CUDA_MACRO(x));"),
            "__global__ void k ( CUDA_MACRO ( x ) ) ;");
}

TEST(MacroExpanderTest, PastingAndStringizing) {
  EXPECT_EQ(Expanded("#define NAME(s) kernel##s\nvoid NAME(_f32)();"), "void kernel_f32 ( ) ;");
  EXPECT_EQ(Expanded("#define CAT(a, b) a ## b\nCAT(x, 1) CAT(, y) CAT(z, ) CAT(,)"), "x1 y z");
  EXPECT_EQ(Expanded("#define S(x) #x\nS(a  +  \"q\\n\")"), "\"a + \\\"q\\\\n\\\"\"");
  EXPECT_EQ(Expanded("#define S(x) #x\nS()"), "\"\"");
  // Arguments of `##` are pasted unexpanded; elsewhere they are expanded first.
  EXPECT_EQ(Expanded("#define A 1\n#define P(x) x##2 x\nP(A)"), "A2 1");
  // An invalid paste keeps both tokens (the compiler reports it).
  EXPECT_EQ(Expanded("#define P(a, b) a##b\nP(+, x)"), "+ x");
}

TEST(MacroExpanderTest, NestedRescanAndPaintedBlue) {
  EXPECT_EQ(Expanded("#define INNER(s, t) void f##s(t x)\n#define OUTER(s, t) INNER(s, t);\n"
                     "OUTER(_a, int)"),
            "void f_a ( int x ) ;");
  // The result of an expansion can take its arguments from the text after it.
  EXPECT_EQ(Expanded("#define F(x) [x]\n#define G F\nG(1)"), "[ 1 ]");
  // A macro is not expanded inside its own expansion, directly or through another.
  EXPECT_EQ(Expanded("#define foo foo + 1\nfoo"), "foo + 1");
  EXPECT_EQ(Expanded("#define A B\n#define B A\nA B"), "A B");
  ExpandedSource x = ExpandText("#define A B\n#define B A\nA");
  ASSERT_EQ(x.invocations.size(), 1u);
  ASSERT_EQ(x.invocations[0].self_references.size(), 1u);
  EXPECT_EQ(x.invocations[0].self_references[0].text, "A");
  // The classic from the C standard: f(f)(1) expands the outer f only once.
  EXPECT_EQ(Expanded("#define f(a) a*g\n#define g(a) f(a)\nf(2)(9)"), "2 * 9 * g");
}

TEST(MacroExpanderTest, Variadic) {
  EXPECT_EQ(Expanded("#define V(f, ...) f(__VA_ARGS__)\nV(g, 1, (2, 3), 4) V(h)"),
            "g ( 1 , ( 2 , 3 ) , 4 ) h ( )");
  EXPECT_EQ(Expanded("#define V(f, ...) f(0 __VA_OPT__(,) __VA_ARGS__)\nV(g, 1) V(h)"),
            "g ( 0 , 1 ) h ( 0 )");
  EXPECT_EQ(Expanded("#define V(f, ...) f(0, ## __VA_ARGS__)\nV(g, 1) V(h)"),
            "g ( 0 , 1 ) h ( 0 )");
  EXPECT_EQ(Expanded("#define V(args...) [args]\nV(1, 2)"), "[ 1 , 2 ]");
  EXPECT_EQ(Expanded("#define S(...) #__VA_ARGS__\nS(a, b)"), "\"a, b\"");
}

TEST(MacroExpanderTest, ContinuationsUndefAndRedefinitionOrder) {
  EXPECT_EQ(Expanded("#define LONG(s) void f##s( \\\n  int x)\nLONG(_1);"), "void f_1 ( int x ) ;");
  EXPECT_EQ(Expanded("#define T int\nT a;\n#undef T\nT b;\n#define T float\nT c;"),
            "int a ; T b ; float c ;");
}

TEST(MacroExpanderTest, SpelledPositionsAndInvocations) {
  ExpandedSource x = ExpandText("#define F(s) void g##s(int x)\n\nF(_1);\n");
  ASSERT_EQ(x.code.size(), 7u);
  // `g_1` is spelled in the #define (line 1), `int` too; the invocation is on line 3.
  EXPECT_EQ(x.code[1].text, "g_1");
  EXPECT_EQ(x.code[1].line, 1);
  EXPECT_EQ(x.code[1].column, 19);
  EXPECT_EQ(x.code[1].expansion, 0);
  EXPECT_EQ(x.code[6].text, ";");
  EXPECT_EQ(x.code[6].expansion, -1);
  ASSERT_EQ(x.invocations.size(), 1u);
  EXPECT_EQ(x.invocations[0].name.line, 3);
  EXPECT_EQ(x.DefinitionAt(x.code[1].offset)->name, "F");
}

TEST(MacroExpanderTest, MalformedInvocationsAreRecordedNotExpanded) {
  ExpandedSource x = ExpandText("#define F(a, b) a b\nF(1) F(1, 2, 3) F(1, (2)\n");
  EXPECT_EQ(Joined(x.code), "F ( 1 ) F ( 1 , 2 , 3 ) F ( 1 , ( 2 )");
  ASSERT_EQ(x.invocations.size(), 3u);
  EXPECT_EQ(x.invocations[0].problem,
            "macro `F` takes 2 arguments, but 1 argument was given (a comma outside parentheses "
            "splits arguments; wrap it in parentheses)");
  EXPECT_NE(x.invocations[1].problem.find("but 3 arguments were given"), std::string::npos);
  EXPECT_NE(x.invocations[2].problem.find("are never closed"), std::string::npos);
}

// The token bound costs seconds under ASan to reach, so one test reaches it:
// StampedFunctionsTest.RunawayExpansionIsBoundedAndReported (and fuzz_macro_expander checks the
// bound on every input).

TEST(MacroExpanderTest, DeepArgumentsHitTheDepthBound) {
  std::string text = "#define F(x) x\n";
  for (int i = 0; i < 100; ++i) text += "F(";
  text += "1";
  for (int i = 0; i < 100; ++i) text += ")";
  ExpandedSource x = ExpandText(text);
  EXPECT_NE(x.limit_problem.find("nest deeper than 64"), std::string::npos);
  EXPECT_EQ(Expanded("#define F(x) x\nF(F(F(F(1))))"), "1");
}

}  // namespace
}  // namespace jaxcc::signature
