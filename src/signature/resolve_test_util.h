// Helpers shared by the ResolveSpecs tests (resolve_test.cc, anchor_bugs_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "argspec/arg_spec.h"
#include "signature/resolve.h"

namespace jaxcc::signature::resolve_testing {

using argspec::FunctionSpec;
using Strings = std::vector<std::string>;
using Requests = std::vector<FunctionRequest>;

inline std::vector<SourceFile> One(const std::string& text) { return {{"<module>", text}}; }

inline Result<std::vector<FunctionSpec>> Resolve(
    const std::vector<SourceFile>& sources,
    const std::optional<Requests>& requests = std::nullopt) {
  return ResolveSpecs(sources, requests);
}

// The single spec resolved from `text` (annotations or `requests`), or a failed expectation.
inline FunctionSpec Single(const std::string& text,
                           const std::optional<Requests>& requests = std::nullopt) {
  auto specs = Resolve(One(text), requests);
  EXPECT_TRUE(specs.ok()) << specs.error().message;
  if (!specs.ok() || specs->size() != 1) return FunctionSpec{};
  return specs->front();
}

inline Strings TokensOf(const std::string& text,
                        const std::optional<Requests>& requests = std::nullopt) {
  return argspec::ToTokens(Single(text, requests));
}

inline Requests Infer(const std::string& name) { return {FunctionRequest{name, std::nullopt}}; }

inline Error ErrorOf(const std::vector<SourceFile>& sources,
                     const std::optional<Requests>& requests = std::nullopt) {
  auto specs = Resolve(sources, requests);
  EXPECT_FALSE(specs.ok());
  return specs.ok() ? Error{} : specs.error();
}

}  // namespace jaxcc::signature::resolve_testing
