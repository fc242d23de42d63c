// Inference from the C++ declaration, including every silent drop of the anchor (§2.4).
#include "signature/inference.h"

#include <gtest/gtest.h>

#include "argspec/arg_spec.h"
#include "signature/active_code.h"

namespace jaxcc::signature {
namespace {

using Strings = std::vector<std::string>;

// Infers the spec of the last declaration named `name` in `text`.
Result<argspec::FunctionSpec> Infer(const std::string& text, const std::string& name = "f") {
  SourceFile source{"<module>", text};
  SourceScan scan = ScanDeclarations(CodeTokens(DropDisabledBranches(Lex(text))), 0);
  const Declaration* decl = nullptr;
  for (const Declaration& d : scan.declarations) {
    if (d.name == name) decl = &d;
  }
  if (!decl) return MakeError(ErrorKind::kIo, "test: no declaration");
  return InferSpec(*decl, source);
}

Strings Tokens(const std::string& text) {
  auto spec = Infer(text);
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  return spec.ok() ? argspec::ToTokens(*spec) : Strings{};
}

std::string ErrorOf(const std::string& text) {
  auto spec = Infer(text);
  EXPECT_FALSE(spec.ok());
  if (spec.ok()) return "";
  EXPECT_EQ(spec.error().kind, ErrorKind::kSignature);
  return spec.error().message;
}

TEST(InferSpecTest, SeedVectorAdd) {
  auto spec = Infer(
      "void f(const BE::Tensor a, const BE::Tensor b,\n"
      "       BE::Tensor out, int64_t stream) {}");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(argspec::ToTokens(*spec), (Strings{"arg", "arg", "ret", "stream"}));
  EXPECT_EQ(spec->params[0].name, "a");
  EXPECT_EQ(spec->params[2].name, "out");
  EXPECT_EQ(spec->params[3].name, "stream");
}

TEST(InferSpecTest, TensorSpellings) {
  EXPECT_EQ(Tokens("void f(BE::Tensor const& x, const jaxcc::Tensor& y, const ::jaxcc::Tensor z,"
                   " const Tensor& w, Tensor& o, jaxcc::Tensor p);"),
            (Strings{"arg", "arg", "arg", "arg", "ret", "ret"}));
}

TEST(InferSpecTest, CommentsInParameterListDoNotSwapKinds) {
  // Anchor bug: the `const` of the comment was attributed to the next parameter, and a comma in
  // a comment split a parameter.
  EXPECT_EQ(Tokens("void f(BE::Tensor a, // const input, see docs\n"
                   "       BE::Tensor o) {}"),
            (Strings{"ret", "ret"}));
  EXPECT_EQ(Tokens("void f(const BE::Tensor a /* in, const */, BE::Tensor o /* out */);"),
            (Strings{"arg", "ret"}));
}

TEST(InferSpecTest, DefaultArgumentsKeepTheParameter) {
  // Anchor bug: `float s = 1.0f` was silently dropped.
  auto spec = Infer("void f(const Tensor& x, Tensor& y, float s = 1.0f, int n = g(1, 2));");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(argspec::ToTokens(*spec), (Strings{"arg", "ret", "attr.s:float32", "attr.n:int32"}));
}

TEST(InferSpecTest, StreamsAndSizeTypesAreNotDropped) {
  // Anchor bug: cudaStream_t, size_t, long, unsigned, std:: types were silently dropped.
  EXPECT_EQ(Tokens("void f(const Tensor& x, Tensor& y, cudaStream_t s, size_t n, long l,"
                   " unsigned u, std::int32_t i, std::uint8_t b, unsigned long long ull);"),
            (Strings{"arg", "ret", "stream", "attr.n:uint64", "attr.l:int64", "attr.u:uint32",
                     "attr.i:int32", "attr.b:uint8", "attr.ull:uint64"}));
}

TEST(InferSpecTest, ConstInt64StreamIsTheStream) {
  // Anchor bug: `const int64_t stream` became the attribute `stream`.
  EXPECT_EQ(Tokens("void f(const Tensor& x, Tensor& y, const int64_t stream);"),
            (Strings{"arg", "ret", "stream"}));
  EXPECT_EQ(Tokens("void f(Tensor& y, const std::int64_t stream);"), (Strings{"ret", "stream"}));
  // Another name is an ordinary attribute.
  EXPECT_EQ(Tokens("void f(Tensor& y, int64_t s);"), (Strings{"ret", "attr.s:int64"}));
}

TEST(InferSpecTest, AllScalarKinds) {
  EXPECT_EQ(Tokens("void f(Tensor o, bool a, int8_t b, signed char c, uint8_t d, unsigned char e,"
                   " int16_t g, short h, uint16_t i, unsigned short j, int32_t k, int l,"
                   " uint32_t m, unsigned int n, int64_t p, long long q, uint64_t r,"
                   " unsigned long s, float t, double u, const float v, const double& w);"),
            (Strings{"ret",
                     "attr.a:bool",
                     "attr.b:int8",
                     "attr.c:int8",
                     "attr.d:uint8",
                     "attr.e:uint8",
                     "attr.g:int16",
                     "attr.h:int16",
                     "attr.i:uint16",
                     "attr.j:uint16",
                     "attr.k:int32",
                     "attr.l:int32",
                     "attr.m:uint32",
                     "attr.n:uint32",
                     "attr.p:int64",
                     "attr.q:int64",
                     "attr.r:uint64",
                     "attr.s:uint64",
                     "attr.t:float32",
                     "attr.u:float64",
                     "attr.v:float32",
                     "attr.w:float64"}));
}

TEST(InferSpecTest, AttributesAndUnnamedTensors) {
  auto spec = Infer(
      "void f([[maybe_unused]] const Tensor&, Tensor& __attribute__((unused)),"
      " [[maybe_unused]] float s);");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(argspec::ToTokens(*spec), (Strings{"arg", "ret", "attr.s:float32"}));
  EXPECT_EQ(spec->params[0].name, "");
}

TEST(InferSpecTest, NamespacesAndSourceIndex) {
  auto spec = Infer("namespace ops { namespace detail { void f(Tensor o); } }");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->namespaces, (Strings{"ops", "detail"}));
  EXPECT_EQ(spec->source_index, 0);
}

TEST(InferSpecTest, PointerIsAnErrorWithCaret) {
  EXPECT_EQ(ErrorOf("void f(const Tensor& x,\n       float* p, Tensor& y);"),
            "<module>:2:8: error: parameter `p` of `f` has type `float*`, which jaxcc cannot "
            "pass: pointers cannot come from JAX; pass arrays as tensors (`const "
            "jaxcc::Tensor&`) and scalars by value\n"
            "       float* p, Tensor& y);\n"
            "       ^~~~~~~~");
}

TEST(InferSpecTest, UnknownTypedefIsAnErrorNeverDropped) {
  EXPECT_EQ(ErrorOf("void f(Tensor& y, real_t scale);"),
            "<module>:1:19: error: parameter `scale` of `f` has type `real_t`, which jaxcc "
            "cannot pass: jaxcc does not know the type `real_t`: it maps `jaxcc::Tensor` (const: "
            "input, non-const: output), `cudaStream_t`, `jaxcc::ThreadPool&`, `jaxcc::State<T>&`, "
            "`jaxcc::Async`, `jaxcc::Scratch`, `jaxcc::ScratchAllocator&` and the scalars bool, "
            "int8_t..int64_t, "
            "uint8_t..uint64_t, float and double; if `real_t` is an alias of one of them, spell "
            "the type out or give the tokens explicitly\n"
            "void f(Tensor& y, real_t scale);\n"
            "                  ^~~~~~~~~~~~");
}

TEST(InferSpecTest, HalfNeedsRawBits) {
  std::string message = ErrorOf("void f(Tensor& y, __half h);");
  EXPECT_NE(message.find("parameter `h` of `f` has type `__half`"), std::string::npos);
  EXPECT_NE(message.find("`attr.<name>:float16`"), std::string::npos);
}

TEST(InferSpecTest, UnnamedScalar) {
  EXPECT_EQ(ErrorOf("void f(Tensor& y, float);"),
            "<module>:1:19: error: parameter #2 of `f` (`float`) has no name: a scalar parameter "
            "becomes an attribute named after it; name it, e.g. `float value`\n"
            "void f(Tensor& y, float);\n"
            "                  ^~~~~");
}

TEST(InferSpecTest, OtherUnpassableParameters) {
  EXPECT_NE(ErrorOf("void f(Tensor& y, void (*cb)(int));").find("parameter `cb` of `f`"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, int n, ...);").find("`f` is variadic"), std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, float& s);").find("cannot be written back"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(const torch::Tensor& x, Tensor& y);").find("not jaxcc's tensor"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, char c);").find("plain `char`"), std::string::npos);
}

TEST(InferSpecTest, TwoStreamCandidates) {
  EXPECT_EQ(ErrorOf("void f(Tensor& y, cudaStream_t s, int64_t stream);"),
            "<module>:1:35: error: parameter `stream` of `f` is a second stream (parameter `s` "
            "is the first); a function receives one stream: to pass `stream` as an int64 "
            "attribute, give the tokens explicitly with `attr.stream:int64`\n"
            "void f(Tensor& y, cudaStream_t s, int64_t stream);\n"
            "                                  ^~~~~~~~~~~~~~");
}

TEST(InferSpecTest, NoOutputTensor) {
  EXPECT_EQ(ErrorOf("static void f(const Tensor& x, float s) {}"),
            "<module>:1:13: error: `f` has no output tensor: an exported function writes at "
            "least one result; take it as a non-const `jaxcc::Tensor&` (inputs are `const "
            "jaxcc::Tensor&`)\n"
            "static void f(const Tensor& x, float s) {}\n"
            "            ^");
  EXPECT_NE(ErrorOf("void f();").find("has no output tensor"), std::string::npos);
}

// Found by fuzz_signature: both used to give a spec the arg_spec parser rejects, which the code
// generator would have turned into a broken wrapper instead of a message about the user's line.
TEST(InferSpecTest, AttributeNamesMustBeUniqueIdentifiers) {
  EXPECT_EQ(ErrorOf("void f(Tensor& y, float s, int n, double s);"),
            "<module>:1:35: error: parameter `s` of `f` has the name of parameter #2; each scalar "
            "parameter becomes an attribute named after it, and attribute names must be unique: "
            "rename one of them\n"
            "void f(Tensor& y, float s, int n, double s);\n"
            "                                  ^~~~~~~~");
  EXPECT_EQ(ErrorOf("void f(Tensor& y, float a$b);"),
            "<module>:1:19: error: parameter `a$b` of `f` would become an attribute of that name, "
            "which is not a C identifier of at most 255 characters (letters, digits and `_`): "
            "rename the parameter, or give the tokens explicitly with another attribute name, "
            "e.g. `attr.value:float32`\n"
            "void f(Tensor& y, float a$b);\n"
            "                  ^~~~~~~~~");
  EXPECT_NE(ErrorOf("void f(Tensor& y, int caf\xc3\xa9);").find("parameter `caf\xc3\xa9` of `f`"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, int " + std::string(256, 'n') + ");").find("at most 255"),
            std::string::npos);
  // Tensors and the stream may share names with anything: only attributes are named after them.
  EXPECT_EQ(Tokens("void f(const Tensor& s, Tensor& s, int64_t stream, float x);"),
            (Strings{"arg", "ret", "stream", "attr.x:float32"}));
}

}  // namespace
}  // namespace jaxcc::signature

namespace jaxcc::signature {
namespace {

// Decision 94: what a function takes from XLA beyond buffers is read from its parameter types.
TEST(InferSpecTest, PoolStateAndAsyncParametersBecomeTheirTokens) {
  EXPECT_EQ(Tokens("void f(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ThreadPool& pool, "
                   "float s);"),
            (Strings{"arg", "ret", "pool", "attr.s:float32"}));
  EXPECT_EQ(Tokens("void f(const BE::Tensor& x, BE::Tensor& y, BE::State<ops::Table<3>>& t, "
                   "int64_t n);"),
            (Strings{"arg", "ret", "state", "attr.n:int64"}));
  EXPECT_EQ(Tokens("void f(const Tensor& x, Tensor& y, jaxcc::Async);"),
            (Strings{"arg", "ret", "async"}));
  EXPECT_EQ(Tokens("void f(Tensor& y, jaxcc::Scratch work);"), (Strings{"ret", "scratch"}));
  EXPECT_EQ(Tokens("void f(Tensor& y, const ::jaxcc::State<int>& s, ThreadPool& p);"),
            (Strings{"ret", "state", "pool"}));
}

TEST(InferSpecTest, PoolStateAndAsyncMisusesAreCaretErrors) {
  EXPECT_NE(ErrorOf("void f(Tensor& y, jaxcc::ThreadPool pool);")
                .find("take the pool by reference: `jaxcc::ThreadPool& pool`"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, jaxcc::ThreadPool* pool);").find("by reference"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, jaxcc::State<int> s);").find("take the state by reference"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, jaxcc::Async& a);").find("take the tag by value"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, jaxcc::ThreadPool& a, jaxcc::ThreadPool& b);")
                .find("is a second `pool` parameter"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf("void f(Tensor& y, jaxcc::ThreadPool& p, jaxcc::Async a);").find("takes both `pool`"),
      std::string::npos);
}

TEST(InferSpecTest, ScratchAllocatorParameterBecomesItsToken) {
  EXPECT_EQ(
      Tokens("void f(const Tensor& x, Tensor& y, jaxcc::ScratchAllocator& alloc, int64_t n);"),
      (Strings{"arg", "ret", "scratch_alloc", "attr.n:int64"}));
  EXPECT_EQ(Tokens("void f(Tensor& y, BE::ScratchAllocator& a);"),
            (Strings{"ret", "scratch_alloc"}));
  EXPECT_NE(ErrorOf("void f(Tensor& y, jaxcc::ScratchAllocator a);")
                .find("take the allocator by reference: `jaxcc::ScratchAllocator& alloc`"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, const jaxcc::ScratchAllocator& a);").find("by reference"),
            std::string::npos);
  EXPECT_NE(ErrorOf("void f(Tensor& y, jaxcc::ScratchAllocator& a, jaxcc::Async s);")
                .find("takes both `scratch_alloc`"),
            std::string::npos);
}

}  // namespace
}  // namespace jaxcc::signature
