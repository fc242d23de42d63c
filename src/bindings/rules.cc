#include "bindings/rules.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

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
      "parse_cuda_archs",
      [](const std::vector<std::string>& items) {
        auto archs = toolchain::ParseArchList(items);
        if (!archs.ok()) RaiseError(archs.error());
        return *archs;
      },
      nb::arg("items"), "Comma lists and entries normalised, sorted, without duplicates.");
}

}  // namespace jaxcc::bindings
