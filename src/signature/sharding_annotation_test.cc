// `sharding="RULE"` at the end of a `// @BE` annotation: read, checked, errors with carets.
#include <gtest/gtest.h>

#include "signature/resolve_test_util.h"

namespace jaxcc::signature {
namespace {

using namespace resolve_testing;  // NOLINT(google-build-using-namespace): test helpers only

constexpr const char* kRowOp = "void row_op(const Tensor& x, Tensor& y) {}\n";

TEST(ShardingAnnotationTest, RuleFillsTheSpec) {
  auto specs = Resolve(
      {{"<module>", std::string("// @BE row_op arg ret sharding=\"r  c -> r c\"\n") + kRowOp}});
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  EXPECT_EQ((*specs)[0].sharding_rule, "r c -> r c");
  EXPECT_EQ((*specs)[0].num_args(), 1);
  // A bare annotation with a rule infers the parameters and keeps the rule.
  specs = Resolve({{"<module>", std::string("// @BE row_op sharding=\"... -> ...\"\n") + kRowOp}});
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  EXPECT_EQ((*specs)[0].sharding_rule, "... -> ...");
  // Requested by name, the annotation's rule still applies; without a rule nothing changes.
  specs = Resolve({{"<module>", std::string("// @BE row_op sharding=\"r c -> r c\"\n") + kRowOp}},
                  std::vector<FunctionRequest>{{"row_op", std::nullopt}});
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  EXPECT_EQ((*specs)[0].sharding_rule, "r c -> r c");
  specs = Resolve({{"<module>", std::string("// @BE row_op arg ret\n") + kRowOp}});
  ASSERT_TRUE(specs.ok());
  EXPECT_EQ((*specs)[0].sharding_rule, "");
}

TEST(ShardingAnnotationTest, MalformedRulePointsIntoTheRule) {
  Error e = ErrorOf(One(std::string("// @BE row_op sharding=\"r 1c -> r\"\n") + kRowOp));
  EXPECT_EQ(e.kind, ErrorKind::kSpec);
  EXPECT_NE(e.message.find("<module>:1:27: error: function `row_op`: sharding rule"),
            std::string::npos)
      << e.message;
  EXPECT_NE(e.message.find("start with a letter"), std::string::npos);
  EXPECT_NE(e.message.find("                          ^"), std::string::npos) << e.message;
}

TEST(ShardingAnnotationTest, OperandCountAgainstTheSignature) {
  Error e = ErrorOf(One(std::string("// @BE row_op sharding=\"r c, c -> r c\"\n") + kRowOp));
  EXPECT_EQ(e.kind, ErrorKind::kSpec);
  EXPECT_NE(e.message.find("<module>:1:25: error: function `row_op`: sharding rule \"r c, c -> "
                           "r c\" has 2 input(s), but the function takes 1"),
            std::string::npos)
      << e.message;
}

TEST(ShardingAnnotationTest, UnquotedOrMisplacedRule) {
  Error e = ErrorOf(One(std::string("// @BE row_op sharding=r->r\n") + kRowOp));
  EXPECT_NE(e.message.find("write the rule in double quotes"), std::string::npos) << e.message;
  e = ErrorOf(One(std::string("// @BE row_op sharding=\"r -> r\" arg ret\n") + kRowOp));
  EXPECT_NE(e.message.find("must be the annotation's last item"), std::string::npos) << e.message;
}

}  // namespace
}  // namespace jaxcc::signature
