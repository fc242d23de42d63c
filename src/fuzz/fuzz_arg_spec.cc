// libFuzzer target for the arg_spec parser. Input: the function name on the first line, then one
// token per line, verbatim (blanks, control bytes and empty tokens included).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "argspec/arg_spec.h"
#include "fuzz/fuzz_check.h"

namespace jaxcc::fuzz {
namespace {

using argspec::FunctionSpec;
using argspec::Param;
using argspec::ParamKind;

// A message quotes user text escaped and cut, so whatever the input, it stays printable and
// short: no control byte and no megabyte-long quote.
constexpr size_t kMaxMessageBytes = 16 * 1024;

bool SameParams(const std::vector<Param>& a, const std::vector<Param>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind != b[i].kind || a[i].name != b[i].name || a[i].attr_type != b[i].attr_type ||
        a[i].dtype != b[i].dtype) {
      return false;
    }
  }
  return true;
}

void CheckError(const Error& error, int offending, size_t num_tokens, bool valid_utf8) {
  JAXCC_FUZZ_CHECK(error.kind == ErrorKind::kSpec, error.message);
  JAXCC_FUZZ_CHECK(!error.message.empty(), "empty message");
  JAXCC_FUZZ_CHECK(error.message.size() <= kMaxMessageBytes, error.message.substr(0, 200));
  for (char c : error.message) {
    unsigned char byte = static_cast<unsigned char>(c);
    JAXCC_FUZZ_CHECK(byte >= 0x20 && byte != 0x7f, "raw control byte in: " + error.message);
  }
  JAXCC_FUZZ_CHECK(!valid_utf8 || IsValidUtf8(error.message), "invalid UTF-8: " + error.message);
  JAXCC_FUZZ_CHECK(offending >= -1 && offending < static_cast<int>(num_tokens),
                   "offending token " + std::to_string(offending));
}

void CheckSpec(const FunctionSpec& spec, const std::string& name,
               const std::vector<std::string>& tokens, int offending) {
  JAXCC_FUZZ_CHECK(offending == -1, "offending token set on success");
  JAXCC_FUZZ_CHECK(spec.name == name, spec.name);
  JAXCC_FUZZ_CHECK(spec.params.size() == tokens.size(), "one param per token");
  JAXCC_FUZZ_CHECK(spec.num_rets() >= 1, "no ret accepted");
  JAXCC_FUZZ_CHECK(spec.CountOf(ParamKind::kStream) <= 1, "two streams accepted");
  for (size_t i = 0; i < spec.params.size(); ++i) {
    const Param& p = spec.params[i];
    if (p.kind != ParamKind::kAttr) continue;
    JAXCC_FUZZ_CHECK(argspec::IsCIdentifier(p.name), "attribute name " + p.name);
    JAXCC_FUZZ_CHECK(p.name.size() <= argspec::kMaxNameLength, "attribute name too long");
    for (size_t j = 0; j < i; ++j) {
      const Param& q = spec.params[j];
      JAXCC_FUZZ_CHECK(q.kind != ParamKind::kAttr || q.name != p.name, "repeated " + p.name);
    }
  }
  // The canonical spelling is each token with its alias resolved, and parses back to the same
  // spec: what the signature reader and the cache key see is what the user wrote.
  std::vector<std::string> canonical = argspec::ToTokens(spec);
  for (size_t i = 0; i < tokens.size(); ++i) {
    JAXCC_FUZZ_CHECK(canonical[i] == argspec::NormalizeToken(tokens[i]),
                     tokens[i] + " printed as " + canonical[i]);
  }
  auto again = argspec::ParseArgSpec(name, canonical);
  JAXCC_FUZZ_CHECK(again.ok(), again.error().message);
  JAXCC_FUZZ_CHECK(SameParams(again->params, spec.params), argspec::FormatTokenList(canonical));
  JAXCC_FUZZ_CHECK(argspec::ToTokens(*again) == canonical, argspec::FormatTokenList(canonical));
}

}  // namespace
}  // namespace jaxcc::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jaxcc;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines = fuzz::SplitOn(input, '\n');
  std::string name = lines.empty() ? "" : lines.front();
  std::vector<std::string> tokens;
  if (!lines.empty()) tokens.assign(lines.begin() + 1, lines.end());

  int offending = -2;
  auto spec = argspec::ParseArgSpec(name, tokens, &offending);
  if (spec.ok()) {
    fuzz::CheckSpec(*spec, name, tokens, offending);
  } else {
    fuzz::CheckError(spec.error(), offending, tokens.size(), fuzz::IsValidUtf8(input));
  }
  // The function name on its own agrees with the full parse.
  Status name_ok = argspec::ValidateFunctionName(name);
  if (!name_ok.ok()) {
    JAXCC_FUZZ_CHECK(!spec.ok() && offending == -1, "bad name accepted: " + name);
    fuzz::CheckError(name_ok.error(), -1, 0, fuzz::IsValidUtf8(input));
  }
  return 0;
}
