// Sharding rules: Shardy's einsum-like notation ("b i, i -> b i"), as jax's custom_partitioning
// `sharding_rule` accepts it, plus optional `; reduction: k` / `; need_replication: i` /
// `; permutation: j` clauses. Parsed and checked against a function's inputs and outputs at load.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "argspec/function_spec.h"
#include "util/result.h"

namespace jaxcc::argspec {

/// One dimension of an operand: a factor name, or a compound `(i j)` of several factors.
/// An ellipsis (`...`, only as an operand's first dimension) is kept as the factor "...".
using RuleDim = std::vector<std::string>;

/// One operand: its dimensions in order. An empty list is a scalar.
struct RuleOperand {
  std::vector<RuleDim> dims;
  bool has_ellipsis() const { return !dims.empty() && dims.front().front() == "..."; }
  /// Dimensions named explicitly (the ellipsis stands for any number of leading ones).
  int explicit_rank() const { return static_cast<int>(dims.size()) - (has_ellipsis() ? 1 : 0); }
};

struct ShardingRule {
  std::vector<RuleOperand> inputs;
  std::vector<RuleOperand> outputs;
  std::vector<std::string> reduction;         ///< factors whose split needs an all-reduce
  std::vector<std::string> need_replication;  ///< factors that must never be split
  std::vector<std::string> permutation;       ///< factors split by a permutation only
  /// The einsum part, canonically spaced ("b i, i -> b i"): what jax's `sharding_rule` takes.
  std::string einsum;
  /// The whole rule, canonically spaced, clauses included: what FunctionSpec stores.
  std::string text;
};

/// Parses `text`. On error (ErrorKind::kSpec) the message says what is wrong and how a correct
/// rule reads; `*error_offset` (when given) is the byte offset in `text` of the fault.
/// `check_folding` = false leaves out the check that every factor an output lacks is declared
/// (ParseRuleFor runs it after the operand counts).
Result<ShardingRule> ParseShardingRule(std::string_view text, size_t* error_offset = nullptr,
                                       bool check_folding = true);

/// Checks `rule` against `spec`: as many inputs as `arg`s, as many outputs as `ret`s. The message
/// names the function and the fix. (Ranks are checked at call time, when shapes are known.)
Status CheckRuleAgainstSpec(const ShardingRule& rule, const FunctionSpec& spec);

/// Parse + check, for one function: the error message starts with "function `name`".
Result<ShardingRule> ParseRuleFor(const FunctionSpec& spec, std::string_view text,
                                  size_t* error_offset = nullptr);

}  // namespace jaxcc::argspec
