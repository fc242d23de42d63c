// The sharding-rule reader: accepted forms, canonical text, and one typed error per mistake.
#include "argspec/sharding_rule.h"

#include <gtest/gtest.h>

#include "argspec/arg_spec.h"

namespace jaxcc::argspec {
namespace {

using Dims = std::vector<RuleDim>;

FunctionSpec Spec(int args, int rets) {
  FunctionSpec spec;
  spec.name = "row_op";
  for (int i = 0; i < args; ++i) spec.params.push_back({ParamKind::kArg});
  for (int i = 0; i < rets; ++i) spec.params.push_back({ParamKind::kRet});
  return spec;
}

std::string ErrorOf(std::string_view text, size_t* at = nullptr) {
  auto rule = ParseShardingRule(text, at);
  EXPECT_FALSE(rule.ok()) << text;
  return rule.ok() ? "" : rule.error().message;
}

TEST(ShardingRuleTest, BatchRule) {
  auto rule = ParseShardingRule("b  i,i->b i");
  ASSERT_TRUE(rule.ok()) << rule.error().message;
  ASSERT_EQ(rule->inputs.size(), 2u);
  EXPECT_EQ(rule->inputs[0].dims, (Dims{{"b"}, {"i"}}));
  EXPECT_EQ(rule->inputs[1].dims, (Dims{{"i"}}));
  EXPECT_EQ(rule->outputs[0].dims, (Dims{{"b"}, {"i"}}));
  EXPECT_EQ(rule->einsum, "b i, i -> b i");
  EXPECT_EQ(rule->text, "b i, i -> b i");
}

TEST(ShardingRuleTest, EllipsisCompoundScalarAndClauses) {
  auto rule = ParseShardingRule("..., ... -> ...");
  ASSERT_TRUE(rule.ok());
  EXPECT_TRUE(rule->inputs[0].has_ellipsis());
  EXPECT_EQ(rule->inputs[0].explicit_rank(), 0);
  rule = ParseShardingRule("i j, i -> (i j)");
  ASSERT_TRUE(rule.ok()) << rule.error().message;
  EXPECT_EQ(rule->outputs[0].dims, (Dims{{"i", "j"}}));
  rule = ParseShardingRule("i k, k j, -> i j ; reduction: k;need_replication: j");
  ASSERT_TRUE(rule.ok()) << rule.error().message;
  EXPECT_TRUE(rule->inputs[2].dims.empty());  // a scalar operand
  EXPECT_EQ(rule->reduction, (std::vector<std::string>{"k"}));
  EXPECT_EQ(rule->need_replication, (std::vector<std::string>{"j"}));
  EXPECT_EQ(rule->einsum, "i k, k j,  -> i j");
  EXPECT_EQ(rule->text, "i k, k j,  -> i j; reduction: k; need_replication: j");
  // The canonical text reads back to the same rule.
  auto again = ParseShardingRule(rule->text);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->text, rule->text);
}

TEST(ShardingRuleTest, MalformedRulesSayWhatAndWhere) {
  size_t at = 99;
  EXPECT_NE(ErrorOf("b i, i", &at).find("no `->`"), std::string::npos);
  EXPECT_NE(ErrorOf("a -> b -> c").find("exactly one `->`"), std::string::npos);
  EXPECT_NE(ErrorOf("b 1i -> b", &at).find("start with a letter"), std::string::npos);
  EXPECT_EQ(at, 2u);
  EXPECT_NE(ErrorOf("b # -> b").find("unexpected character '#'"), std::string::npos);
  EXPECT_NE(ErrorOf("b ... -> b").find("first dimension"), std::string::npos);
  EXPECT_NE(ErrorOf("(i j -> i").find("never closed"), std::string::npos);
  EXPECT_NE(ErrorOf("i) -> i").find("without a matching"), std::string::npos);
  EXPECT_NE(ErrorOf("(i) -> i").find("at least two factors"), std::string::npos);
  EXPECT_NE(ErrorOf("(i j) -> i").find("`j` is used only inside"), std::string::npos);
  EXPECT_NE(ErrorOf("i i -> i").find("appears twice in input 1"), std::string::npos);
  EXPECT_NE(ErrorOf("i -> i j").find("`j` of the outputs appears in no input"), std::string::npos);
  EXPECT_NE(ErrorOf("i k -> i; reduction: q").find("does not use"), std::string::npos);
  EXPECT_NE(ErrorOf("i k -> i; reduce: k").find("after `;`"), std::string::npos);
  EXPECT_NE(ErrorOf("i k -> i k; reduction: k").find("appears in an output"), std::string::npos);
  EXPECT_NE(ErrorOf("i k -> i; reduction: k; need_replication: k").find("more than one"),
            std::string::npos);
  EXPECT_NE(ErrorOf("i k -> i; reduction:").find("lists no factor"), std::string::npos);
  // A factor only inputs name must be declared (issue 25): reduction or need_replication.
  std::string message = ErrorOf("r c -> r", &at);
  EXPECT_NE(message.find("`c` appears only in inputs"), std::string::npos) << message;
  EXPECT_NE(message.find("`; reduction: c`"), std::string::npos) << message;
  EXPECT_NE(message.find("`; need_replication: c`"), std::string::npos) << message;
  EXPECT_EQ(at, 2u);
  EXPECT_NE(ErrorOf("... i, i -> i").find("`...` appears in inputs but not in output 1"),
            std::string::npos);
  // Found by the differential test: "r c -> r c, r" (a scaled copy and row sums), `c` split.
  EXPECT_NE(ErrorOf("r c -> r c, r").find("`c` appears in inputs but not in output 2"),
            std::string::npos);
  EXPECT_TRUE(ParseShardingRule("r c -> r c, r; need_replication: c").ok());
  EXPECT_TRUE(ParseShardingRule("r c -> r; need_replication: c").ok());
  EXPECT_TRUE(ParseShardingRule("r c -> r; reduction: c").ok());
  EXPECT_TRUE(ParseShardingRule("i j, i -> (i j)").ok());
}

TEST(ShardingRuleTest, MessagesQuoteUserTextEscapedAndCut) {
  std::string message = ErrorOf(std::string("r \x01 -> r"));
  EXPECT_NE(message.find("\\x01"), std::string::npos) << message;
  EXPECT_EQ(message.find('\x01'), std::string::npos);
  std::string huge(100000, 'a');
  message = ErrorOf(huge + " " + huge + " -> " + huge);
  EXPECT_NE(message.find("appears twice"), std::string::npos);
  EXPECT_LT(message.size(), 1000u);
}

TEST(ShardingRuleTest, OperandCountsMustMatchTheFunction) {
  auto rule = ParseRuleFor(Spec(2, 1), "b i -> b i");
  ASSERT_FALSE(rule.ok());
  EXPECT_EQ(rule.error().kind, ErrorKind::kSpec);
  EXPECT_NE(rule.error().message.find("function `row_op`"), std::string::npos);
  EXPECT_NE(rule.error().message.find("1 input(s), but the function takes 2"), std::string::npos);
  rule = ParseRuleFor(Spec(1, 2), "b i -> b i");
  ASSERT_FALSE(rule.ok());
  EXPECT_NE(rule.error().message.find("1 output(s), but the function takes 2"), std::string::npos);
  EXPECT_TRUE(ParseRuleFor(Spec(1, 2), "b i -> b i, b; need_replication: i").ok());
  rule = ParseRuleFor(Spec(1, 1), "b i -> b i x");
  ASSERT_FALSE(rule.ok());
  EXPECT_NE(rule.error().message.find("function `row_op`: sharding rule"), std::string::npos);
}

}  // namespace
}  // namespace jaxcc::argspec
