// `tune="..."` on an annotation (decision 159a): read beside sharding=, checked with carets, and
// the parameters the compile flags leave open handed out.
#include "signature/tune_annotation.h"

#include <gtest/gtest.h>

#include "signature/resolve_test_util.h"

namespace jaxcc::signature {
namespace {

using namespace resolve_testing;  // NOLINT(google-build-using-namespace): test helpers only

constexpr const char* kMatmul = "void matmul(const Tensor& a, const Tensor& b, Tensor& c) {}\n";

std::vector<TuneDeclaration> Declared(const std::string& text, const Strings& flags = {}) {
  std::vector<TuneDeclaration> tune;
  auto specs = ResolveSpecs(One(text), std::nullopt, {flags}, &tune);
  EXPECT_TRUE(specs.ok()) << specs.error().message;
  return tune;
}

TEST(TuneAnnotationTest, JaxccAndBeFormsDeclareParametersInOrder) {
  auto tune =
      Declared(std::string("// @jaxcc matmul tune=\"BLOCK=16,32,64; UNROLL=1,2,4\"\n") + kMatmul);
  ASSERT_EQ(tune.size(), 1u);
  EXPECT_EQ(tune[0].function, "matmul");
  ASSERT_EQ(tune[0].parameters.size(), 2u);
  EXPECT_EQ(tune[0].parameters[0].name, "BLOCK");
  EXPECT_EQ(tune[0].parameters[0].values, (Strings{"16", "32", "64"}));
  EXPECT_EQ(tune[0].parameters[1].values, (Strings{"1", "2", "4"}));
  EXPECT_EQ(tune[0].where, "<module>:1:24");
  // After tokens, in either order with sharding=, and the spec keeps its tokens and rule.
  std::vector<TuneDeclaration> both;
  auto specs = ResolveSpecs(
      One(std::string("// @BE matmul arg arg ret tune=\" T = -1 , x_2 ;\" sharding=\"i k, k j "
                      "-> i j; need_replication: k\"\n") +
          kMatmul),
      std::nullopt, {}, &both);
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  EXPECT_EQ((*specs)[0].num_args(), 2);
  EXPECT_NE((*specs)[0].sharding_rule.find("i k, k j -> i j"), std::string::npos);
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(both[0].parameters[0].name, "T");
  EXPECT_EQ(both[0].parameters[0].values, (Strings{"-1", "x_2"}));
}

TEST(TuneAnnotationTest, FlagsFixParametersAndAnAllFixedDeclarationIsNone) {
  std::string text = std::string("// @BE matmul tune=\"BLOCK=16,32; UNROLL=1,2\"\n") + kMatmul;
  auto tune = Declared(text, {"-DBLOCK=32"});
  ASSERT_EQ(tune.size(), 1u);
  ASSERT_EQ(tune[0].parameters.size(), 1u);
  EXPECT_EQ(tune[0].parameters[0].name, "UNROLL");
  EXPECT_TRUE(Declared(text, {"-DBLOCK=32", "-DUNROLL=2"}).empty());
  // -U after -D: undefined again, so open again.
  EXPECT_EQ(Declared(text, {"-DBLOCK=32", "-DUNROLL=2", "-UBLOCK"}).size(), 1u);
  EXPECT_TRUE(Declared(std::string("// @BE matmul arg arg ret\n") + kMatmul).empty());
}

struct Malformed {
  const char* tune;
  const char* message;
  int column;  // of the caret
};

TEST(TuneAnnotationTest, MalformedTextIsASpecErrorWithACaretIntoIt) {
  // `// @BE matmul tune="` is 20 characters: the text starts at column 21.
  const Malformed cases[] = {
      {"", "each parameter is NAME=V1,V2", 21},
      {"BLOCK", "each parameter is NAME=V1,V2", 21},
      {"BLOCK=16;;UNROLL=1", "each parameter is NAME=V1,V2", 30},
      {"2X=1", "'2X' is not a macro name", 21},
      {"BLOCK=16,,32", "BLOCK has an empty candidate", 30},
      {"BLOCK=1.5", "candidate '1.5' of BLOCK is not an int, bool or identifier", 27},
      {"BLOCK=16,16", "BLOCK lists 16 twice", 30},
      {"B=1; B=2", "parameter B is given twice", 26},
  };
  for (const Malformed& c : cases) {
    std::string text = std::string("// @BE matmul tune=\"") + c.tune + "\"\n" + kMatmul;
    Error e = ErrorOf(One(text));
    EXPECT_EQ(e.kind, ErrorKind::kSpec) << c.tune;
    EXPECT_NE(e.message.find("function `matmul`: tune=: "), std::string::npos) << e.message;
    EXPECT_NE(e.message.find(c.message), std::string::npos) << c.tune << "\n" << e.message;
    EXPECT_NE(e.message.find("<module>:1:" + std::to_string(c.column) + ": error"),
              std::string::npos)
        << c.tune << "\n"
        << e.message;
    EXPECT_NE(e.message.find("\n" + std::string(c.column - 1, ' ') + "^"), std::string::npos)
        << c.tune << "\n"
        << e.message;
  }
}

TEST(TuneAnnotationTest, UnquotedRepeatedOrMisplacedItem) {
  Error e = ErrorOf(One(std::string("// @BE matmul tune=BLOCK=1\n") + kMatmul));
  EXPECT_NE(e.message.find("write the candidates in double quotes"), std::string::npos)
      << e.message;
  e = ErrorOf(One(std::string("// @BE matmul tune=\"A=1\" tune=\"B=1\"\n") + kMatmul));
  EXPECT_NE(e.message.find("`tune=` is given twice"), std::string::npos) << e.message;
  e = ErrorOf(One(std::string("// @BE matmul tune=\"A=1\" arg arg ret\n") + kMatmul));
  EXPECT_NE(e.message.find("must be the annotation's last item"), std::string::npos) << e.message;
}

}  // namespace
}  // namespace jaxcc::signature
