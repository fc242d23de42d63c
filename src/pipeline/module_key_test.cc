// The specs' part of the cache key: every fact about a function that a load hands back must
// change the key, or a cache entry would be reused with another spec's facts (decision 158).
#include "pipeline/module_key.h"

#include <gtest/gtest.h>

#include "argspec/arg_spec.h"

namespace jaxcc::pipeline {
namespace {

argspec::FunctionSpec Parsed(const std::vector<std::string>& tokens) {
  auto spec = argspec::ParseArgSpec("scale", tokens);
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  return spec.ok() ? *spec : argspec::FunctionSpec{};
}

TEST(ModuleKey, ADeclaredDtypeAloneChangesTheSpecsKey) {
  std::string untyped = CanonicalSpecs({Parsed({"arg", "ret"})});
  std::string typed = CanonicalSpecs({Parsed({"arg:float32", "ret"})});
  std::string other = CanonicalSpecs({Parsed({"arg:float64", "ret"})});
  std::string typed_ret = CanonicalSpecs({Parsed({"arg", "ret:float32"})});
  EXPECT_NE(untyped, typed);
  EXPECT_NE(typed, other);
  EXPECT_NE(untyped, typed_ret);
  EXPECT_NE(typed, typed_ret);  // the same dtype on another parameter
  EXPECT_EQ(typed, CanonicalSpecs({Parsed({"args:float32", "rets"})}));  // aliases: one spec
}

}  // namespace
}  // namespace jaxcc::pipeline
