// libFuzzer target for the macro expander and the conditionals over the sources' own macros.
// Input: one C++ source. The target expands it as a stamped entry point's lookup would, checks
// what every expansion guarantees (only code tokens, nothing empty, bounds held, every token
// traced to a real place of the source and to a recorded invocation, the same result twice),
// then resolves every name the expansion declares and every annotation: each must be a spec or
// a typed error, never a crash or a hang, and a spec inferred from an expansion must come back
// unchanged when its tokens are written out.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "argspec/arg_spec.h"
#include "fuzz/fuzz_check.h"
#include "signature/active_code.h"
#include "signature/declarations.h"
#include "signature/expanded_source.h"
#include "signature/lexer.h"
#include "signature/macro_expander.h"
#include "signature/resolve.h"

namespace jaxcc::fuzz {
namespace {

using signature::ExpandedSource;
using signature::Token;
using signature::TokenKind;

constexpr size_t kMaxNames = 4;

bool SameTokens(const std::vector<Token>& a, const std::vector<Token>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].text != b[i].text || a[i].kind != b[i].kind || a[i].offset != b[i].offset ||
        a[i].expansion != b[i].expansion) {
      return false;
    }
  }
  return true;
}

void CheckExpansion(const std::string& text, const std::vector<Token>& active,
                    const ExpandedSource& x) {
  size_t input_tokens = active.size();
  JAXCC_FUZZ_CHECK(x.code.size() <= input_tokens + signature::kMaxExpansionTokens,
                   "expansion past its bound: " + std::to_string(x.code.size()));
  bool any_define = false;
  for (const Token& t : active) {
    any_define = any_define || (t.kind == TokenKind::kPreprocessor &&
                                signature::SplitDirective(t.text).name == "define");
  }
  for (const Token& t : x.code) {
    JAXCC_FUZZ_CHECK(t.kind != TokenKind::kLineComment && t.kind != TokenKind::kBlockComment &&
                         t.kind != TokenKind::kPreprocessor,
                     "not code: " + t.text);
    JAXCC_FUZZ_CHECK(!t.text.empty(), "empty token (a placemarker leaked)");
    JAXCC_FUZZ_CHECK(t.offset < text.size(), "token placed past the source: " + t.text);
    JAXCC_FUZZ_CHECK(t.line >= 1 && t.column >= 1, "token without a place: " + t.text);
    JAXCC_FUZZ_CHECK(t.expansion >= -1 && t.expansion < static_cast<int>(x.invocations.size()),
                     "token of an unknown invocation: " + std::to_string(t.expansion));
    if (t.expansion < 0) {
      // Not from a macro: spelled in the source exactly there.
      JAXCC_FUZZ_CHECK(text.compare(t.offset, t.text.size(), t.text) == 0,
                       "unexpanded token not in the source: " + t.text);
    }
  }
  if (!any_define) {
    JAXCC_FUZZ_CHECK(SameTokens(x.code, signature::CodeTokens(active)),
                     "a source without macros changed");
  }
  for (const signature::Invocation& inv : x.invocations) {
    JAXCC_FUZZ_CHECK(inv.macro != nullptr && inv.macro->name == inv.name.text, inv.name.text);
    JAXCC_FUZZ_CHECK(
        inv.problem.empty() || inv.problem.find(inv.problem_at.text) != std::string::npos,
        inv.problem);
  }
}

void CheckResolved(const Result<std::vector<argspec::FunctionSpec>>& result, bool valid_utf8) {
  if (result.ok()) return;
  const Error& e = result.error();
  JAXCC_FUZZ_CHECK(e.kind == ErrorKind::kSpec || e.kind == ErrorKind::kSignature, e.message);
  JAXCC_FUZZ_CHECK(!e.message.empty(), "empty message");
  JAXCC_FUZZ_CHECK(!valid_utf8 || IsValidUtf8(e.message), "invalid UTF-8: " + e.message);
}

}  // namespace
}  // namespace jaxcc::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jaxcc;
  std::string text(reinterpret_cast<const char*>(data), size);
  bool valid_utf8 = fuzz::IsValidUtf8(text);
  std::vector<signature::Token> active = signature::DropDisabledBranches(signature::Lex(text));
  signature::ExpandedSource x = signature::ExpandSource(active);
  fuzz::CheckExpansion(text, active, x);
  signature::ExpandedSource again = signature::ExpandSource(active);
  JAXCC_FUZZ_CHECK(fuzz::SameTokens(x.code, again.code) && x.limit_problem == again.limit_problem,
                   "two expansions differ");

  std::vector<signature::SourceFile> sources = {{"<fuzz>", text}};
  fuzz::CheckResolved(signature::ResolveSpecs(sources, std::nullopt), valid_utf8);
  std::vector<std::string> names;
  for (const signature::Declaration& d : signature::ScanDeclarations(x.code, 0).declarations) {
    if (d.name_token.expansion < 0 || names.size() >= fuzz::kMaxNames) continue;
    if (std::find(names.begin(), names.end(), d.name) == names.end()) names.push_back(d.name);
  }
  for (const std::string& name : names) {
    auto inferred = signature::ResolveSpecs(
        sources, std::vector<signature::FunctionRequest>{{name, std::nullopt}});
    fuzz::CheckResolved(inferred, valid_utf8);
    if (!inferred.ok()) continue;
    // Writing out what was inferred from the expansion resolves to the same spec (explicit
    // tokens are cross-checked against the same expanded declaration).
    std::vector<std::string> tokens = argspec::ToTokens(inferred->front());
    auto written =
        signature::ResolveSpecs(sources, std::vector<signature::FunctionRequest>{{name, tokens}});
    JAXCC_FUZZ_CHECK(written.ok(), name + ": " + written.error().message);
    JAXCC_FUZZ_CHECK(argspec::ToTokens(written->front()) == tokens &&
                         written->front().namespaces == inferred->front().namespaces &&
                         written->front().source_index == inferred->front().source_index,
                     name + " changed when its tokens were written out");
  }
  return 0;
}
