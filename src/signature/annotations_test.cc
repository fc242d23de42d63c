// Annotation discovery: only real `//` comments of live code count (anchor §2.3 bugs).
#include "signature/annotations.h"

#include <gtest/gtest.h>

#include "signature/active_code.h"

namespace jaxcc::signature {
namespace {

using Strings = std::vector<std::string>;

AnnotationScan Scan(const std::vector<std::string>& texts) {
  std::vector<SourceFile> sources;
  std::vector<std::vector<Token>> tokens;
  for (size_t i = 0; i < texts.size(); ++i) {
    sources.push_back({"src" + std::to_string(i) + ".cc", texts[i]});
    tokens.push_back(DropDisabledBranches(Lex(texts[i])));
  }
  return FindAnnotations(sources, tokens);
}

AnnotationScan Scan(const std::string& text) { return Scan(std::vector<std::string>{text}); }

TEST(AnnotationsTest, BareAndWithTokens) {
  auto scan = Scan("// @BE add\nvoid add();\n// @BE scale arg ret attr.s:float32 stream\n");
  ASSERT_TRUE(scan.errors.empty());
  ASSERT_EQ(scan.annotations.size(), 2u);
  EXPECT_EQ(scan.annotations[0].function, "add");
  EXPECT_FALSE(scan.annotations[0].tokens.has_value());
  EXPECT_EQ(scan.annotations[1].function, "scale");
  EXPECT_EQ(*scan.annotations[1].tokens, (Strings{"arg", "ret", "attr.s:float32", "stream"}));
  EXPECT_EQ(scan.annotations[1].function_span.line, 3);
  EXPECT_EQ(scan.annotations[1].function_span.column, 8);
  EXPECT_EQ(scan.annotations[1].token_spans[2].column, 22);
  EXPECT_EQ(scan.annotations[1].token_spans[2].length, 14);
}

TEST(AnnotationsTest, JaxccMarkerIsASynonym) {
  auto scan = Scan("//@jaxcc f arg ret\n   ///  @jaxcc g\n");
  ASSERT_EQ(scan.annotations.size(), 2u);
  EXPECT_EQ(scan.annotations[0].function, "f");
  EXPECT_EQ(scan.annotations[1].function, "g");
}

TEST(AnnotationsTest, TrailingCommentEndsTheTokenList) {
  // Anchor bug: `// @BE f arg ret // note` produced the tokens `//` and `note`.
  auto scan = Scan("// @BE f arg ret // two tensors\n// @BE g arg ret// glued\n");
  ASSERT_EQ(scan.annotations.size(), 2u);
  EXPECT_EQ(*scan.annotations[0].tokens, (Strings{"arg", "ret"}));
  EXPECT_EQ(*scan.annotations[1].tokens, (Strings{"arg", "ret"}));
  auto bare = Scan("// @BE f // infer this one\n");
  EXPECT_FALSE(bare.annotations[0].tokens.has_value());
}

TEST(AnnotationsTest, NotInBlockCommentsStringsOrDirectives) {
  // Anchor bug: the regular expression honoured all of these.
  auto scan = Scan(
      "/* // @BE a arg ret */\n"
      "/*\n// @BE b arg ret\n*/\n"
      "const char* s = \"// @BE c arg ret\";\n"
      "const char* r = R\"(\n// @BE d arg ret\n)\";\n"
      "#define X 1 // @BE e arg ret\n"
      "#if 0\n// @BE f arg ret\n#endif\n"
      "// @BE real arg ret\n");
  ASSERT_TRUE(scan.errors.empty());
  ASSERT_EQ(scan.annotations.size(), 1u);
  EXPECT_EQ(scan.annotations[0].function, "real");
}

TEST(AnnotationsTest, MarkerMustComeFirstAndStandAlone) {
  auto scan = Scan("// see @BE f\n// @BEf x\n// @jaxccg\n// text @jaxcc g\n");
  EXPECT_TRUE(scan.annotations.empty());
  EXPECT_TRUE(scan.errors.empty());
}

TEST(AnnotationsTest, CollectedFromAllSources) {
  auto scan = Scan(std::vector<std::string>{"// @BE a\n", "int x;\n// @BE b arg ret\n"});
  ASSERT_EQ(scan.annotations.size(), 2u);
  EXPECT_EQ(scan.annotations[1].function, "b");
  EXPECT_EQ(scan.annotations[1].source_index, 1);
  EXPECT_EQ(scan.annotations[1].offset, 7u);
}

TEST(AnnotationsTest, DuplicateIsAnErrorAtTheSecond) {
  auto scan = Scan("// @BE f arg ret\nvoid f();\n  // @jaxcc f\n");
  ASSERT_EQ(scan.errors.size(), 1u);
  EXPECT_EQ(scan.errors[0].kind, ErrorKind::kSpec);
  EXPECT_EQ(scan.errors[0].message,
            "src0.cc:3:13: error: `f` is annotated twice (first at src0.cc:1:8); keep one "
            "annotation per function\n"
            "  // @jaxcc f\n"
            "            ^");
  ASSERT_EQ(scan.annotations.size(), 1u);
}

TEST(AnnotationsTest, DuplicateAcrossSources) {
  auto scan = Scan(std::vector<std::string>{"// @BE f\n", "// @BE f\n"});
  ASSERT_EQ(scan.errors.size(), 1u);
  EXPECT_NE(scan.errors[0].message.find("src1.cc:1:8: error: `f` is annotated twice (first at "
                                        "src0.cc:1:8)"),
            std::string::npos);
}

TEST(AnnotationsTest, MissingOrInvalidName) {
  auto scan = Scan("// @BE\n// @jaxcc 3d arg ret\n// @BE ns::f\n");
  ASSERT_EQ(scan.errors.size(), 3u);
  EXPECT_EQ(scan.errors[0].message,
            "src0.cc:1:4: error: `// @BE` names no function; write `// @BE <function> "
            "[tokens...]`, e.g. `// @BE vector_add arg arg ret`\n"
            "// @BE\n"
            "   ^~~");
  EXPECT_NE(scan.errors[1].message.find("src0.cc:2:11: error: `3d` is not a valid function name"),
            std::string::npos);
  EXPECT_NE(scan.errors[2].message.find("`ns::f` is not a valid function name"), std::string::npos);
  EXPECT_TRUE(scan.annotations.empty());
}

}  // namespace
}  // namespace jaxcc::signature
