// The `sharding=` argument of a load, applied to the resolved functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "argspec/function_spec.h"
#include "util/result.h"

namespace jaxcc::pipeline {

/// Sets `sharding_rule` of each function `rules` names, after parsing the rule and checking it
/// against the function's inputs and outputs. A name no spec has, or a bad rule, is a kSpec
/// error naming the function and the fix; nothing is changed then.
Status ApplyShardingRules(const std::map<std::string, std::string>& rules,
                          std::vector<argspec::FunctionSpec>* specs);

}  // namespace jaxcc::pipeline
