#include "bindings/result_types.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "argspec/function_spec.h"
#include "bindings/raise_error.h"
#include "cache/cache_usage.h"
#include "loader/lazy_library.h"
#include "pipeline/load_request.h"

namespace nb = nanobind;

namespace jaxcc::bindings {
namespace {

using argspec::FunctionSpec;
using argspec::Param;

nb::object AttrTypeOf(const Param& p) {
  return p.attr_type ? nb::cast(argspec::AttrTypeName(*p.attr_type)) : nb::none();
}

// spec["params"] and p["kind"] kept working when specs stopped being dicts (CompiledModule.specs
// is public); only the keys the dicts had are accepted.
[[noreturn]] void NoSuchKey(const std::string& key, const char* keys) {
  throw nb::key_error((key + " (keys: " + keys + ")").c_str());
}

void BindSpecs(nb::module_& m) {
  nb::class_<Param>(m, "Param", "One parameter of a kernel, in the C++ order.")
      .def_prop_ro(
          "kind", [](const Param& p) { return argspec::ParamKindName(p.kind); },
          "'arg', 'ret', 'stream', 'attr', 'pool', 'state' or 'async'")
      .def_ro("name", &Param::name)
      .def_prop_ro("attr_type", &AttrTypeOf, "the attribute's type name ('float32'), or None")
      .def_prop_ro(
          "dtype",
          [](const Param& p) -> std::optional<std::string> {
            if (!p.dtype) return std::nullopt;
            return std::string(argspec::ElementTypeName(*p.dtype));
          },
          "an 'arg' or 'ret' tensor's declared dtype, numpy's name ('float32', from "
          "`arg:float32`), which a call must pass; None for any dtype")
      .def("__getitem__",
           [](const Param& p, const std::string& key) -> nb::object {
             if (key == "kind") return nb::cast(argspec::ParamKindName(p.kind));
             if (key == "name") return nb::cast(p.name);
             if (key == "type") return AttrTypeOf(p);
             NoSuchKey(key, "kind, name, type");
           })
      .def("__repr__", [](const Param& p) {
        std::string text =
            std::string(argspec::ParamKindName(p.kind)) + (p.name.empty() ? "" : " " + p.name);
        if (p.attr_type) text += std::string(": ") + argspec::AttrTypeName(*p.attr_type);
        if (p.dtype) text += std::string(": ") + argspec::ElementTypeName(*p.dtype);
        return "<Param " + text + ">";
      });
  nb::class_<FunctionSpec>(m, "FunctionSpec", "A kernel entry point and its parameters.")
      .def_ro("name", &FunctionSpec::name)
      .def_ro("namespaces", &FunctionSpec::namespaces)
      .def_ro("params", &FunctionSpec::params)
      .def_prop_ro("num_args", &FunctionSpec::num_args)
      .def_prop_ro("num_rets", &FunctionSpec::num_rets)
      .def_prop_ro("has_state", &FunctionSpec::has_state,
                   "takes a jaxcc::State<T>&: its target registers XLA's instantiate stage too")
      .def_ro("sharding_rule", &FunctionSpec::sharding_rule,
              "the function's sharding rule, canonically spaced; '' when it has none")
      .def("__getitem__",
           [](const FunctionSpec& spec, const std::string& key) -> nb::object {
             if (key == "name") return nb::cast(spec.name);
             if (key == "namespaces") return nb::cast(spec.namespaces);
             if (key == "params") return nb::cast(spec.params);
             NoSuchKey(key, "name, namespaces, params");
           })
      .def("__repr__", [](const FunctionSpec& spec) { return "<FunctionSpec " + spec.name + ">"; });
}

void BindLoadedModule(nb::module_& m) {
  using pipeline::LoadedModule;
  nb::class_<build::BuildStep>(m, "BuildStep",
                               "One compile or the link of a fresh build, from ninja's log.")
      .def_ro("output", &build::BuildStep::output)
      .def_ro("start_seconds", &build::BuildStep::start_seconds, "since the build started")
      .def_ro("end_seconds", &build::BuildStep::end_seconds)
      .def("__repr__", [](const build::BuildStep& step) {
        return "<BuildStep " + step.output + " " + std::to_string(step.start_seconds) + "-" +
               std::to_string(step.end_seconds) + " s>";
      });
  using signature::TuneDeclaration;
  using signature::TuneParameter;
  nb::class_<TuneParameter>(m, "TuneParameter", "A tune= macro and its candidate values.")
      .def_ro("name", &TuneParameter::name)
      .def_ro("values", &TuneParameter::values);
  nb::class_<TuneDeclaration>(m, "TuneDeclaration",
                              "A function's tune=\"...\" annotation, less the parameters the "
                              "flags define.")
      .def_ro("function", &TuneDeclaration::function)
      .def_ro("parameters", &TuneDeclaration::parameters)
      .def_ro("where", &TuneDeclaration::where);
  nb::class_<LoadedModule>(m, "LoadedModule", "A module the core built or found and dlopened.")
      .def_ro("library_path", &LoadedModule::library_path)
      .def_ro("entry_dir", &LoadedModule::entry_dir)
      .def_ro("key", &LoadedModule::key)
      .def_ro("specs", &LoadedModule::specs)
      .def_ro("cache_hit", &LoadedModule::cache_hit)
      .def_ro("miss_reason", &LoadedModule::miss_reason)
      .def_ro("build_seconds", &LoadedModule::build_seconds)
      .def_ro("build_log", &LoadedModule::build_log)
      .def_ro("build_steps", &LoadedModule::build_steps)
      .def_ro("warning", &LoadedModule::warning)
      .def_ro("evicted_entries", &LoadedModule::evicted_entries)
      .def_ro("wrapper_reused", &LoadedModule::wrapper_reused)
      .def_ro("objects_reused", &LoadedModule::objects_reused)
      .def_ro("cuda_archs", &LoadedModule::cuda_archs)
      .def_ro("cuda_archs_source", &LoadedModule::cuda_archs_source)
      .def_ro("tune", &LoadedModule::tune,
              "Open tune= declarations; when not empty nothing was built (decision 159a).")
      .def(
          "handler",
          [](const LoadedModule& module, const std::string& function) {
            auto found = module.handlers.find(function);
            if (found == module.handlers.end()) {
              throw nb::key_error(("no handler for function " + function).c_str());
            }
            // XLA reads the raw handler pointer out of an unnamed capsule.
            return nb::capsule(found->second);
          },
          nb::arg("function"), "The XLA_FFI_Handler* of a function, as a capsule.")
      .def_prop_ro(
          "library_loaded",
          [](const LoadedModule& module) {
            return module.lazy_library == nullptr || module.lazy_library->loaded();
          },
          "Whether the library is mapped (a warm load maps it at the first call).")
      .def(
          "load_library",
          [](const LoadedModule& module) {
            if (module.lazy_library == nullptr) return;
            Status loaded = OkStatus();
            {
              nb::gil_scoped_release unlocked;  // dlopen runs the library's constructors
              loaded = module.lazy_library->Load();
            }
            if (!loaded.ok()) RaiseError(loaded.error());
          },
          "Maps the library now if a warm load deferred it; LoadError if it cannot be mapped.");
}

void BindCacheRows(nb::module_& m) {
  nb::class_<cache::EntryUsage>(m, "CacheEntry", "One cache entry, as `cache ls` shows it.")
      .def_ro("name", &cache::EntryUsage::module_name)
      .def_ro("dir", &cache::EntryUsage::dir)
      .def_ro("key", &cache::EntryUsage::key)
      .def_ro("bytes", &cache::EntryUsage::bytes)
      .def_ro("last_used_ns", &cache::EntryUsage::last_used_ns)
      .def_ro("created_unix", &cache::EntryUsage::created_unix)
      .def_ro("build_seconds", &cache::EntryUsage::build_seconds)
      .def_ro("functions", &cache::EntryUsage::function_names)
      .def_ro("complete", &cache::EntryUsage::complete);
  nb::class_<cache::PruneReport>(m, "PruneReport", "What a prune removed and kept.")
      .def_ro("entries_removed", &cache::PruneReport::entries_removed)
      .def_ro("bytes_freed", &cache::PruneReport::bytes_freed)
      .def_ro("entries_kept", &cache::PruneReport::entries_kept)
      .def_ro("bytes_kept", &cache::PruneReport::bytes_kept)
      .def_ro("busy_skipped", &cache::PruneReport::busy_skipped)
      .def_ro("orphans_removed", &cache::PruneReport::orphans_removed);
}

}  // namespace

void BindResultTypes(nb::module_& m) {
  BindSpecs(m);
  BindLoadedModule(m);
  BindCacheRows(m);
}

}  // namespace jaxcc::bindings
