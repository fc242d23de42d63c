#include "pipeline/sharding_rules.h"

#include "argspec/sharding_rule.h"
#include "argspec/suggest.h"
#include "util/text.h"

namespace jaxcc::pipeline {

Status ApplyShardingRules(const std::map<std::string, std::string>& rules,
                          std::vector<argspec::FunctionSpec>* specs) {
  std::map<std::string, std::string> parsed;
  for (const auto& [name, text] : rules) {
    const argspec::FunctionSpec* spec = nullptr;
    std::vector<std::string> names;
    for (const argspec::FunctionSpec& s : *specs) {
      names.push_back(s.name);
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      std::string message = "sharding={\"" + name +
                            "\": ...} names a function the module does "
                            "not load (it loads: ";
      for (size_t i = 0; i < names.size(); ++i) message += (i ? ", " : "") + names[i];
      message += ")";
      std::vector<std::string> near = argspec::NearMisses(name, names);
      if (!near.empty()) message += "; did you mean `" + near.front() + "`?";
      message += "; add it to `functions` (or annotate it) or fix the key";
      return MakeError(ErrorKind::kSpec, message);
    }
    auto rule = argspec::ParseRuleFor(*spec, text);
    if (!rule.ok()) {
      return MakeError(ErrorKind::kSpec, "sharding={\"" + EscapeForMessage(name) +
                                             "\": ...}: " + rule.error().message);
    }
    parsed[name] = rule->text;
  }
  for (argspec::FunctionSpec& spec : *specs) {
    auto it = parsed.find(spec.name);
    if (it != parsed.end()) spec.sharding_rule = it->second;
  }
  return OkStatus();
}

}  // namespace jaxcc::pipeline
