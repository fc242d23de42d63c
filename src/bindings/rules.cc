#include "bindings/rules.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "argspec/sharding_rule.h"
#include "bindings/raise_error.h"
#include "cache/entry_names.h"
#include "jaxcc/limits.h"
#include "pipeline/load_request.h"
#include "toolchain/cuda_arch.h"

namespace nb = nanobind;

namespace jaxcc::bindings {

void BindRules(nb::module_& m) {
  m.attr("MAX_RANK") = jaxcc::kMaxDim;
  nb::list methods;
  for (const char* method : pipeline::kVmapMethods) methods.append(method);
  m.attr("VMAP_METHODS") = methods;
  m.attr("MAX_OPTIMIZATION_LEVEL") = pipeline::kMaxOptimizationLevel;

  m.def(
      "validate_name",
      [](const std::string& name, const std::string& what) {
        Status valid = cache::ValidateModuleName(name, what.c_str());
        if (!valid.ok()) RaiseError(valid.error());
      },
      nb::arg("name"), nb::arg("what"),
      "Raises SpecError unless `name` is a valid module name or target prefix.");
  m.def("module_name_from_path", &cache::ModuleNameFromPath, nb::arg("path"),
        "A valid module name made from a file or directory path.");
  m.def(
      "normalize_cuda_arch",
      [](const std::string& text) {
        auto arch = toolchain::NormalizeArch(text);
        if (!arch.ok()) RaiseError(arch.error());
        return *arch;
      },
      nb::arg("text"), "'8.0', 'sm_90a', '90' -> '80', '90a'; SpecError for anything else.");
  m.def(
      "parse_sharding_rule",
      [](const std::string& text, int num_args, int num_rets, const std::string& function) {
        // A spec of `num_args` args and `num_rets` rets stands in for the function.
        argspec::FunctionSpec spec;
        spec.name = function;
        for (int i = 0; i < num_args; ++i) spec.params.push_back({argspec::ParamKind::kArg});
        for (int i = 0; i < num_rets; ++i) spec.params.push_back({argspec::ParamKind::kRet});
        // Negative counts: the caller does not know them yet (an XLACustomKernel's rule).
        auto rule =
            num_args < 0 ? argspec::ParseShardingRule(text) : argspec::ParseRuleFor(spec, text);
        if (!rule.ok() && num_args < 0) {
          RaiseError(MakeError(ErrorKind::kSpec, "`" + function + "`: " + rule.error().message));
        }
        if (!rule.ok()) RaiseError(rule.error());
        auto dims = [](const std::vector<argspec::RuleOperand>& side) {
          std::vector<std::vector<std::vector<std::string>>> out;
          for (const argspec::RuleOperand& op : side) out.push_back(op.dims);
          return out;
        };
        nb::dict d;
        d["einsum"] = rule->einsum;
        d["text"] = rule->text;
        d["inputs"] = dims(rule->inputs);
        d["outputs"] = dims(rule->outputs);
        d["reduction"] = rule->reduction;
        d["need_replication"] = rule->need_replication;
        d["permutation"] = rule->permutation;
        return d;
      },
      nb::arg("text"), nb::arg("num_args"), nb::arg("num_rets"), nb::arg("function"),
      "Parses a sharding rule for a function of num_args inputs and num_rets outputs: a dict of "
      "einsum, text, inputs/outputs (operand -> dims -> factors; '...' for the ellipsis), "
      "reduction, need_replication, permutation. SpecError naming `function` and the fix.");
  m.def(
      "parse_cuda_archs",
      [](const std::vector<std::string>& items) {
        auto archs = toolchain::ParseArchList(items);
        if (!archs.ok()) RaiseError(archs.error());
        return *archs;
      },
      nb::arg("items"), "Comma lists and entries normalised, sorted, without duplicates.");
}

}  // namespace jaxcc::bindings
