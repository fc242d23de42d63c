// The arg_spec grammar: canonical tokens, aliases and every error the parser reports.
#include "argspec/arg_spec.h"

#include <gtest/gtest.h>

#include "argspec/keywords.h"

namespace jaxcc::argspec {
namespace {

using Tokens = std::vector<std::string>;

// The message of a parse that must fail with a spec error.
std::string SpecErrorOf(const std::string& name, const Tokens& tokens, int* offending = nullptr) {
  int ignored = 0;
  auto spec = ParseArgSpec(name, tokens, offending ? offending : &ignored);
  EXPECT_FALSE(spec.ok()) << name;
  if (spec.ok()) return "";
  EXPECT_EQ(spec.error().kind, ErrorKind::kSpec);
  return spec.error().message;
}

TEST(IsCIdentifierTest, AcceptsIdentifiers) {
  for (const char* name : {"x", "_", "_x1", "scale_factor", "X9", "final", "override", "main"}) {
    EXPECT_TRUE(IsCIdentifier(name)) << name;
  }
}

TEST(IsCIdentifierTest, RejectsNonIdentifiersAndKeywords) {
  for (const char* name : {"", "1x", "a-b", "a.b", "a b", "ns::f", "x$", "\xc3\xa9", "int", "class",
                           "float", "new", "and", "co_await", "requires"}) {
    EXPECT_FALSE(IsCIdentifier(name)) << name;
  }
}

TEST(IsCppKeywordTest, KnowsKeywordsOnly) {
  EXPECT_TRUE(IsCppKeyword("alignas"));
  EXPECT_TRUE(IsCppKeyword("xor_eq"));
  EXPECT_TRUE(IsCppKeyword("char8_t"));
  EXPECT_FALSE(IsCppKeyword("final"));
  EXPECT_FALSE(IsCppKeyword("int32_t"));
  EXPECT_FALSE(IsCppKeyword(""));
}

TEST(NormalizeTokenTest, MapsAliases) {
  EXPECT_EQ(NormalizeToken("args"), "arg");
  EXPECT_EQ(NormalizeToken("rets"), "ret");
  EXPECT_EQ(NormalizeToken("ctx.stream"), "stream");
  EXPECT_EQ(NormalizeToken("attrs.scale"), "attr.scale");
  EXPECT_EQ(NormalizeToken("attrs.scale:float32"), "attr.scale:float32");
  EXPECT_EQ(NormalizeToken("arg"), "arg");
  EXPECT_EQ(NormalizeToken("attr.x"), "attr.x");
  EXPECT_EQ(NormalizeToken("bogus"), "bogus");
}

TEST(ParseArgSpecTest, ParsesAllKinds) {
  auto spec =
      ParseArgSpec("scale_by", {"arg", "ret", "attr.scale_factor:float32", "stream", "attr.n"});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->name, "scale_by");
  EXPECT_TRUE(spec->namespaces.empty());
  ASSERT_EQ(spec->params.size(), 5u);
  EXPECT_EQ(spec->params[0].kind, ParamKind::kArg);
  EXPECT_EQ(spec->params[1].kind, ParamKind::kRet);
  EXPECT_EQ(spec->params[2].kind, ParamKind::kAttr);
  EXPECT_EQ(spec->params[2].name, "scale_factor");
  EXPECT_EQ(spec->params[2].attr_type, AttrType::kFloat32);
  EXPECT_EQ(spec->params[3].kind, ParamKind::kStream);
  EXPECT_EQ(spec->params[4].name, "n");
  EXPECT_FALSE(spec->params[4].attr_type.has_value());  // the signature reader fills it in
  EXPECT_TRUE(spec->has_stream());
}

TEST(ParseArgSpecTest, AcceptsAliasesAndAnyOrder) {
  auto spec = ParseArgSpec("f", {"ctx.stream", "attrs.k:int64", "rets", "args", "ret"});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(ToTokens(*spec), (Tokens{"stream", "attr.k:int64", "ret", "arg", "ret"}));
}

TEST(ParseArgSpecTest, AcceptsEveryAttrType) {
  for (const char* type : {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                           "uint64", "float32", "float64", "float16", "bfloat16"}) {
    auto spec = ParseArgSpec("f", {"ret", std::string("attr.v:") + type});
    ASSERT_TRUE(spec.ok()) << type;
    EXPECT_STREQ(AttrTypeName(*spec->params[1].attr_type), type);
  }
}

TEST(ParseArgSpecTest, ZeroArgsIsFine) {
  EXPECT_TRUE(ParseArgSpec("fill", {"ret", "attr.value:float64"}).ok());
}

TEST(ToTokensTest, CanonicalSpelling) {
  auto spec = ParseArgSpec("f", {"args", "rets", "attrs.a", "attrs.b:bfloat16", "ctx.stream"});
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(ToTokens(*spec), (Tokens{"arg", "ret", "attr.a", "attr.b:bfloat16", "stream"}));
}

TEST(FormatTokenListTest, Brackets) {
  EXPECT_EQ(FormatTokenList({}), "[]");
  EXPECT_EQ(FormatTokenList({"arg", "ret"}), "[arg, ret]");
}

TEST(ParseArgSpecErrorTest, UnknownTokenListsValidOnes) {
  int offending = -2;
  EXPECT_EQ(SpecErrorOf("f", {"arg", "output"}, &offending),
            "function `f`: unknown arg_spec token `output`; did you mean `ret`? valid tokens are "
            "`arg`, `ret`, `arg:<dtype>`, `ret:<dtype>`, `stream`, `attr.<name>`, "
            "`attr.<name>:<type>`, `pool`, `state`, `async`, `scratch` and `scratch_alloc` "
            "(aliases: `args`, `rets`, `ctx.stream`, `attrs.<name>`)");
  EXPECT_EQ(offending, 1);
}

TEST(ParseArgSpecErrorTest, UnknownTokenSuggestions) {
  EXPECT_NE(SpecErrorOf("f", {"arg", "rett"}).find("did you mean `ret`?"), std::string::npos);
  EXPECT_NE(SpecErrorOf("f", {"ret", "attr:scale"}).find("did you mean `attr.scale`?"),
            std::string::npos);
  EXPECT_NE(SpecErrorOf("f", {"Stream", "ret"}).find("did you mean `stream`?"), std::string::npos);
  EXPECT_EQ(SpecErrorOf("f", {"ret", "banana"}).find("did you mean"), std::string::npos);
}

TEST(ParseArgSpecErrorTest, TrailingCommentIsNotAToken) {
  // The anchor split `arg ret // note` into tokens; a caller handing us "//" gets a clear error.
  EXPECT_NE(SpecErrorOf("f", {"arg", "ret", "//", "note"}).find("unknown arg_spec token `//`"),
            std::string::npos);
}

TEST(ParseArgSpecErrorTest, EmptyToken) {
  EXPECT_NE(SpecErrorOf("f", {"ret", ""}).find("function `f`: a token is empty"),
            std::string::npos);
}

TEST(ParseArgSpecErrorTest, UnknownTypeSuggestsAndListsValidTypes) {
  int offending = -2;
  EXPECT_EQ(SpecErrorOf("scale", {"arg", "ret", "attr.s:float"}, &offending),
            "function `scale`: unknown attribute type `float` in `attr.s:float`; did you mean "
            "`float32`? valid types: bool, int8, int16, int32, int64, uint8, uint16, uint32, "
            "uint64, float32, float64, float16, bfloat16");
  EXPECT_EQ(offending, 2);
  EXPECT_NE(SpecErrorOf("f", {"ret", "attrs.n:std::int64_t"}).find("did you mean `int64`?"),
            std::string::npos);
  std::string no_guess = SpecErrorOf("f", {"ret", "attr.n:widget"});
  EXPECT_EQ(no_guess.find("did you mean"), std::string::npos);
  EXPECT_NE(no_guess.find("valid types: bool,"), std::string::npos);
}

TEST(ParseArgSpecErrorTest, ComplexTypesExplainWhy) {
  EXPECT_NE(SpecErrorOf("f", {"ret", "attr.z:complex64"}).find("cannot pass complex attributes"),
            std::string::npos);
}

TEST(ParseArgSpecErrorTest, AttrWithoutNameOrType) {
  EXPECT_EQ(SpecErrorOf("f", {"ret", "attr"}),
            "function `f`: `attr` needs a name: write `attr.<name>` (type from the C++ "
            "signature) or `attr.<name>:<type>`");
  EXPECT_NE(SpecErrorOf("f", {"ret", "attrs"}).find("`attrs` needs a name"), std::string::npos);
  EXPECT_NE(SpecErrorOf("f", {"ret", "attr."}).find("`attr.` has no attribute name"),
            std::string::npos);
  EXPECT_NE(SpecErrorOf("f", {"ret", "attr.:int32"}).find("has no attribute name"),
            std::string::npos);
  EXPECT_NE(SpecErrorOf("f", {"ret", "attr.x:"}).find("`attr.x:` has no type after `:`"),
            std::string::npos);
}

TEST(ParseArgSpecErrorTest, AttrNameNotIdentifier) {
  EXPECT_EQ(SpecErrorOf("f", {"ret", "attr.2x:int32"}),
            "function `f`: attribute name `2x` in `attr.2x:int32` is not a C identifier; use "
            "letters, digits and `_`, not starting with a digit");
  EXPECT_NE(SpecErrorOf("f", {"ret", "attr.a-b"}).find("`a-b`"), std::string::npos);
  EXPECT_NE(SpecErrorOf("f", {"ret", "attr.a.b:int32"}).find("`a.b`"), std::string::npos);
}

TEST(ParseArgSpecErrorTest, AttrNameKeyword) {
  EXPECT_EQ(SpecErrorOf("f", {"ret", "attrs.class:int32"}),
            "function `f`: attribute name `class` in `attrs.class:int32` is a C++ keyword; "
            "rename the parameter and the attribute (e.g. `class_`)");
}

TEST(ParseArgSpecErrorTest, FunctionNameMustBeIdentifier) {
  for (const char* name : {"1f", "ns::f", "f g", "f()", "a-b"}) {
    std::string message = SpecErrorOf(name, {"ret"});
    EXPECT_NE(message.find("is not a valid function name"), std::string::npos) << message;
  }
  EXPECT_EQ(SpecErrorOf("delete", {"ret"}),
            "`delete` is a C++ keyword, not a function name; export a function with another name");
  EXPECT_NE(SpecErrorOf("", {"ret"}).find("the function name is empty"), std::string::npos);
}

TEST(ParseArgSpecErrorTest, NoRet) {
  int offending = -2;
  EXPECT_EQ(SpecErrorOf("f", {"arg", "attr.n:int32"}, &offending),
            "function `f`: the arg_spec [arg, attr.n:int32] has no `ret`; an exported function "
            "must write at least one output tensor: add `ret` at the position of its non-const "
            "Tensor parameter");
  EXPECT_EQ(offending, -1);
}

TEST(ParseArgSpecErrorTest, EmptyList) {
  EXPECT_EQ(SpecErrorOf("f", {}),
            "function `f`: the arg_spec is empty; list one token per C++ parameter, in order, "
            "e.g. [arg, ret] (at least one `ret` is required)");
}

TEST(ParseArgSpecErrorTest, TwoStreams) {
  int offending = -2;
  EXPECT_EQ(SpecErrorOf("f", {"stream", "ret", "ctx.stream"}, &offending),
            "function `f`: `stream` appears twice (positions 1 and 3); a function receives at "
            "most one stream");
  EXPECT_EQ(offending, 2);
}

TEST(ParseArgSpecErrorTest, DuplicateAttribute) {
  int offending = -2;
  EXPECT_EQ(SpecErrorOf("f", {"ret", "attr.s:float32", "arg", "attrs.s"}, &offending),
            "function `f`: attribute `s` appears twice (positions 2 and 4); attribute names must "
            "be unique");
  EXPECT_EQ(offending, 3);
}

TEST(ValidateFunctionNameTest, AcceptsAndRejects) {
  EXPECT_TRUE(ValidateFunctionName("vector_add").ok());
  EXPECT_FALSE(ValidateFunctionName("vector-add").ok());
  EXPECT_EQ(ValidateFunctionName("int").error().kind, ErrorKind::kSpec);
}

TEST(HostileTokensTest, ControlBytesAreShownEscapedInMessages) {
  std::string message = SpecErrorOf("f", {"arg", std::string("ret\0x", 5)});
  EXPECT_NE(message.find("`ret\\x00x`"), std::string::npos) << message;
  EXPECT_EQ(message.find('\0'), std::string::npos);
}

TEST(HostileTokensTest, OverlongNamesAreRefusedWithTheLimit) {
  std::string long_name(kMaxNameLength + 1, 'a');
  std::string message = SpecErrorOf("f", {"arg", "ret", "attr." + long_name + ":float32"});
  EXPECT_NE(message.find("at most 255"), std::string::npos) << message;
  EXPECT_LT(message.size(), 400u) << "the name is quoted cut, not in full";
  message = SpecErrorOf(long_name, {"arg", "ret"});
  EXPECT_NE(message.find("at most 255"), std::string::npos) << message;
  EXPECT_TRUE(ParseArgSpec(std::string(kMaxNameLength, 'f'), {"arg", "ret"}).ok());
}

TEST(HostileTokensTest, AHugeTokenListIsQuotedByItsStart) {
  Tokens many(5000, "arg");
  std::string text = FormatTokenList(many);
  EXPECT_NE(text.find("... (5000 tokens)]"), std::string::npos) << text;
  EXPECT_LT(text.size(), 400u);
}

}  // namespace
}  // namespace jaxcc::argspec

namespace jaxcc::argspec {
namespace {

TEST(ParseArgSpecTest, PoolStateAndAsyncTokens) {
  auto spec = ParseArgSpec("f", {"arg", "ret", "pool", "state", "attr.n:int64"});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_TRUE(spec->has_pool());
  EXPECT_TRUE(spec->has_state());
  EXPECT_FALSE(spec->is_async());
  EXPECT_EQ(ToTokens(*spec),
            (std::vector<std::string>{"arg", "ret", "pool", "state", "attr.n:int64"}));
  for (const char* kind : {"pool", "state", "async"}) {
    EXPECT_EQ(ParamKindFromName(kind).has_value(), true) << kind;
    int offending = -1;
    auto twice = ParseArgSpec("f", {"ret", kind, kind}, &offending);
    ASSERT_FALSE(twice.ok());
    EXPECT_NE(twice.error().message.find("appears twice"), std::string::npos);
    EXPECT_EQ(offending, 2);
  }
  auto both = ParseArgSpec("f", {"ret", "pool", "async"});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("takes both `pool`"), std::string::npos);
}

// Decision 105: run-time scratch is one more context token, never with `async`.
TEST(ParseArgSpecTest, ScratchAllocToken) {
  auto spec = ParseArgSpec("f", {"arg", "ret", "scratch_alloc", "pool"});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_TRUE(spec->has_scratch_alloc());
  EXPECT_TRUE(spec->has_context());
  EXPECT_EQ(ToTokens(*spec), (std::vector<std::string>{"arg", "ret", "scratch_alloc", "pool"}));
  auto twice = ParseArgSpec("f", {"ret", "scratch_alloc", "scratch_alloc"});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("appears twice"), std::string::npos);
  auto both = ParseArgSpec("f", {"ret", "async", "scratch_alloc"});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("takes both `scratch_alloc`"), std::string::npos);
}

}  // namespace
}  // namespace jaxcc::argspec
