// libFuzzer target for the signature reader. Input: up to four C++ sources separated by a form
// feed byte (\f). The target resolves the module from its annotations, then each of the first
// four functions the sources declare on its own (spec inferred) and again with the inferred
// tokens written out, then all of them at once; each step must return a spec or an error, and
// the results must agree. The lexer's tokens are checked against the text on the way.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "argspec/arg_spec.h"
#include "fuzz/fuzz_check.h"
#include "signature/active_code.h"
#include "signature/declarations.h"
#include "signature/lexer.h"
#include "signature/resolve.h"

namespace jaxcc::fuzz {
namespace {

using argspec::FunctionSpec;
using argspec::ParamKind;
using signature::FunctionRequest;
using signature::SourceFile;
using signature::Token;
using signature::TokenKind;
using Specs = std::vector<FunctionSpec>;

constexpr size_t kMaxSources = 4;
constexpr size_t kMaxNames = 4;  // functions resolved one by one per input (each costs 2 passes)

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// Whether only blanks and backslash-newline splices lie in [begin, end) of `text`.
bool OnlyBlanks(std::string_view text, size_t begin, size_t end) {
  for (size_t pos = begin; pos < end; ++pos) {
    if (IsSpace(text[pos])) continue;
    if (text[pos] != '\\') return false;
    if (text.substr(pos + 1, 1) == "\n") {
      pos += 1;
    } else if (text.substr(pos + 1, 2) == "\r\n") {
      pos += 2;
    } else {
      return false;
    }
  }
  return true;
}

// The lexer loses nothing and invents nothing: each token is the source text at its offset, in
// order, with the right line and column, and only blanks and line splices lie between tokens.
void CheckLexer(std::string_view text, const std::vector<Token>& tokens) {
  size_t pos = 0;         // end of the previous token
  size_t counted = 0;     // newlines before this offset are counted in `line`
  size_t line_start = 0;  // offset of the first byte of line `line`
  int line = 1;
  for (const Token& t : tokens) {
    JAXCC_FUZZ_CHECK(!t.text.empty() && t.offset >= pos, "token at " + std::to_string(t.offset));
    JAXCC_FUZZ_CHECK(text.substr(t.offset, t.text.size()) == t.text, "token text " + t.text);
    JAXCC_FUZZ_CHECK(OnlyBlanks(text, pos, t.offset), "bytes dropped before " + t.text);
    for (; counted < t.offset; ++counted) {
      if (text[counted] != '\n') continue;
      ++line;
      line_start = counted + 1;
    }
    JAXCC_FUZZ_CHECK(t.line == line, "line of " + t.text + ": " + std::to_string(t.line));
    JAXCC_FUZZ_CHECK(t.column == static_cast<int>(t.offset - line_start) + 1,
                     "column of " + t.text + ": " + std::to_string(t.column));
    pos = t.end_offset();
  }
  JAXCC_FUZZ_CHECK(OnlyBlanks(text, pos, text.size()), "bytes dropped at the end");
}

// The distinct names the sources declare at namespace scope, in order, at most kMaxNames.
std::vector<std::string> DeclaredNames(const std::vector<SourceFile>& sources) {
  std::vector<std::string> names;
  for (size_t i = 0; i < sources.size(); ++i) {
    std::vector<Token> tokens = signature::Lex(sources[i].text);
    CheckLexer(sources[i].text, tokens);
    std::vector<Token> code = signature::CodeTokens(signature::DropDisabledBranches(tokens));
    for (const Token& t : code) {
      JAXCC_FUZZ_CHECK(t.kind != TokenKind::kLineComment && t.kind != TokenKind::kBlockComment &&
                           t.kind != TokenKind::kPreprocessor,
                       "not code: " + t.text);
    }
    signature::SourceScan scan = signature::ScanDeclarations(code, static_cast<int>(i));
    for (const signature::Declaration& d : scan.declarations) {
      JAXCC_FUZZ_CHECK(d.name == d.name_token.text && d.source_index == static_cast<int>(i),
                       d.name);
      if (names.size() < kMaxNames &&
          std::find(names.begin(), names.end(), d.name) == names.end()) {
        names.push_back(d.name);
      }
    }
  }
  return names;
}

void CheckError(const Error& error, bool valid_utf8) {
  JAXCC_FUZZ_CHECK(error.kind == ErrorKind::kSpec || error.kind == ErrorKind::kSignature,
                   error.message);
  JAXCC_FUZZ_CHECK(!error.message.empty(), "empty message");
  JAXCC_FUZZ_CHECK(!valid_utf8 || IsValidUtf8(error.message), "invalid UTF-8: " + error.message);
}

// What every resolved spec guarantees to the code generator.
void CheckSpec(const FunctionSpec& spec, size_t num_sources) {
  JAXCC_FUZZ_CHECK(argspec::ValidateFunctionName(spec.name).ok(), spec.name);
  JAXCC_FUZZ_CHECK(spec.num_rets() >= 1, spec.name + " has no ret");
  JAXCC_FUZZ_CHECK(spec.CountOf(ParamKind::kStream) <= 1, spec.name + " has two streams");
  JAXCC_FUZZ_CHECK(spec.source_index >= 0 && spec.source_index < static_cast<int>(num_sources),
                   spec.name + " source " + std::to_string(spec.source_index));
  for (const std::string& ns : spec.namespaces) {
    JAXCC_FUZZ_CHECK(!ns.empty(), spec.name + " has an empty namespace");
  }
  for (const argspec::Param& p : spec.params) {
    JAXCC_FUZZ_CHECK(p.kind != ParamKind::kAttr || p.attr_type, spec.name + " attr untyped");
  }
  std::vector<std::string> tokens = argspec::ToTokens(spec);
  auto again = argspec::ParseArgSpec(spec.name, tokens);
  JAXCC_FUZZ_CHECK(again.ok(), again.error().message);
}

void CheckResult(const Result<Specs>& result, size_t num_sources, bool valid_utf8) {
  if (!result.ok()) return CheckError(result.error(), valid_utf8);
  JAXCC_FUZZ_CHECK(!result->empty(), "success with no spec");
  for (const FunctionSpec& spec : *result) CheckSpec(spec, num_sources);
}

bool SameSpec(const FunctionSpec& a, const FunctionSpec& b) {
  if (a.name != b.name || a.namespaces != b.namespaces || a.source_index != b.source_index ||
      a.params.size() != b.params.size()) {
    return false;
  }
  for (size_t i = 0; i < a.params.size(); ++i) {
    const argspec::Param& p = a.params[i];
    const argspec::Param& q = b.params[i];
    if (p.kind != q.kind || p.name != q.name || p.attr_type != q.attr_type || p.dtype != q.dtype) {
      return false;
    }
  }
  return true;
}

std::string Describe(const FunctionSpec& spec) {
  std::string text;
  for (const std::string& ns : spec.namespaces) text += ns + "::";
  return text + spec.name + " " + argspec::FormatTokenList(argspec::ToTokens(spec)) + " in #" +
         std::to_string(spec.source_index);
}

void FuzzModule(const std::vector<SourceFile>& sources, bool valid_utf8) {
  CheckResult(signature::ResolveSpecs(sources, std::nullopt), sources.size(), valid_utf8);
  CheckResult(signature::ResolveSpecs(
                  sources, std::vector<FunctionRequest>{{"jaxcc_fuzz_absent", std::nullopt}}),
              sources.size(), valid_utf8);

  std::vector<std::string> names = DeclaredNames(sources);
  std::vector<FunctionRequest> all;
  Specs individual;
  bool any_error = false;
  std::vector<Result<Specs>> results;
  results.reserve(names.size());
  for (const std::string& name : names) {
    all.push_back({name, std::nullopt});
    results.push_back(signature::ResolveSpecs(sources, std::vector<FunctionRequest>{all.back()}));
    const Result<Specs>& one = results.back();
    CheckResult(one, sources.size(), valid_utf8);
    if (!one.ok()) {
      any_error = true;
      continue;
    }
    JAXCC_FUZZ_CHECK(one->size() == 1, name);
    const FunctionSpec& spec = one->front();
    individual.push_back(spec);
    // Writing out what was inferred (or read from the annotation) changes nothing.
    std::vector<FunctionRequest> explicit_request{{name, argspec::ToTokens(spec)}};
    auto written = signature::ResolveSpecs(sources, explicit_request);
    JAXCC_FUZZ_CHECK(written.ok(), Describe(spec) + "\n" + written.error().message);
    JAXCC_FUZZ_CHECK(written->size() == 1, Describe(spec));
    JAXCC_FUZZ_CHECK(SameSpec(written->front(), spec),
                     Describe(spec) + " came back as " + Describe(written->front()));
  }
  if (all.empty()) return;
  // One request for every name resolves each as on its own. When some fail, the error is one of
  // theirs (names are all validated before any is resolved, so not always the first one's).
  auto together = signature::ResolveSpecs(sources, all);
  if (any_error) {
    JAXCC_FUZZ_CHECK(!together.ok(), "together succeeded");
    bool known = std::any_of(results.begin(), results.end(), [&](const Result<Specs>& one) {
      return !one.ok() && one.error().message == together.error().message;
    });
    JAXCC_FUZZ_CHECK(known, "new error: " + together.error().message);
    return;
  }
  JAXCC_FUZZ_CHECK(together.ok(), together.error().message);
  JAXCC_FUZZ_CHECK(together->size() == individual.size(), "count");
  for (size_t i = 0; i < individual.size(); ++i) {
    JAXCC_FUZZ_CHECK(SameSpec((*together)[i], individual[i]),
                     Describe((*together)[i]) + " vs " + Describe(individual[i]));
  }
}

}  // namespace
}  // namespace jaxcc::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jaxcc;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> texts = fuzz::SplitOn(input, '\f');
  static const char* const kLabels[fuzz::kMaxSources] = {"<module>", "b.cc", "c.cu", "d.h"};
  std::vector<signature::SourceFile> sources;
  for (size_t i = 0; i < texts.size() && i < fuzz::kMaxSources; ++i) {
    sources.push_back({kLabels[i], texts[i]});
  }
  fuzz::FuzzModule(sources, fuzz::IsValidUtf8(input));
  return 0;
}
