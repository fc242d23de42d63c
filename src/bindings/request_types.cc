#include "bindings/request_types.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings/raise_error.h"
#include "pipeline/source_text.h"
#include "toolchain/cuda_runtime.h"
#include "util/fs.h"

namespace nb = nanobind;

namespace jaxcc::bindings {
namespace {

using pipeline::BuildEnvironment;
using pipeline::CudaOptions;
using pipeline::LoadRequest;
using signature::FunctionRequest;
using signature::SourceFile;
using Strings = std::vector<std::string>;

// Every field of a request decides the result, so identity is all of them. One tuple, so that
// equality and hashing cannot disagree about which fields count.
auto Identity(const LoadRequest& r) {
  return std::tie(r.name, r.platform, r.extra_cflags, r.extra_ldflags, r.extra_include_paths,
                  r.source_dirs, r.optimization_level, r.build_directory, r.cache_dir, r.cuda.archs,
                  r.cuda.extra_cflags, r.cuda.use_fast_math, r.cuda.allow_cuda_graph,
                  r.target_prefix, r.vmap_method, r.auto_register, r.sharding, r.debug);
}

bool SameSources(const LoadRequest& a, const LoadRequest& b) {
  if (a.sources.size() != b.sources.size()) return false;
  for (size_t i = 0; i < a.sources.size(); ++i) {
    if (a.sources[i].label != b.sources[i].label || a.sources[i].text != b.sources[i].text) {
      return false;
    }
  }
  // A deferred file is the same source while its stamp is (decision 139).
  if (a.source_stamps != b.source_stamps) return false;
  if (a.functions.has_value() != b.functions.has_value()) return false;
  if (!a.functions) return true;
  if (a.functions->size() != b.functions->size()) return false;
  for (size_t i = 0; i < a.functions->size(); ++i) {
    if ((*a.functions)[i].name != (*b.functions)[i].name ||
        (*a.functions)[i].tokens != (*b.functions)[i].tokens) {
      return false;
    }
  }
  return true;
}

// Equal requests must hash equal, nothing more: the name and the sources tell requests apart
// in practice, and __eq__ compares every field.
std::size_t HashOf(const LoadRequest& r) {
  std::hash<std::string> hash;
  std::size_t seed = hash(r.name);
  for (const SourceFile& source : r.sources) {
    seed ^= hash(source.text) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  }
  for (const cache::LibraryStamp& stamp : r.source_stamps) {
    seed ^= std::hash<std::int64_t>()(stamp.ctime_ns) + 0x9e3779b97f4a7c15ULL + (seed << 6) +
            (seed >> 2);
  }
  return seed;
}

void MakeRequest(FrozenRequest* self, std::string name, std::string platform,
                 std::vector<pipeline::SourceInput> sources,
                 std::optional<std::vector<FunctionRequest>> functions, Strings extra_cflags,
                 Strings extra_ldflags, Strings extra_include_paths, Strings source_dirs,
                 int optimization_level, std::string build_directory, std::string cache_dir,
                 std::optional<CudaOptions> cuda, std::optional<std::string> target_prefix,
                 std::string vmap_method, bool auto_register,
                 std::map<std::string, std::string> sharding, bool debug) {
  LoadRequest request;
  request.name = std::move(name);
  request.platform = std::move(platform);
  pipeline::SetSources(request, std::move(sources));
  request.functions = std::move(functions);
  request.extra_cflags = std::move(extra_cflags);
  request.extra_ldflags = std::move(extra_ldflags);
  request.extra_include_paths = std::move(extra_include_paths);
  request.source_dirs = std::move(source_dirs);
  request.optimization_level = optimization_level;
  request.build_directory = std::move(build_directory);
  request.cache_dir = std::move(cache_dir);
  if (cuda) request.cuda = std::move(*cuda);
  request.target_prefix = std::move(target_prefix);
  request.vmap_method = std::move(vmap_method);
  request.auto_register = auto_register;
  request.sharding = std::move(sharding);
  request.debug = debug;
  Status valid = pipeline::ValidateRequest(request);
  if (!valid.ok()) RaiseError(valid.error());
  std::size_t hash = HashOf(request);
  new (self) FrozenRequest{std::move(request), hash};
}

// check_kernel's `bounds` row (decision 160): the same sources, flags and functions built under
// the debug profile, registered under their own prefix so that the user's targets and the
// versioned names of decision 155 never see it. Registered even where the original is not
// (auto_register=False), since the row calls it.
FrozenRequest DebugTwin(const FrozenRequest& original, std::string target_prefix) {
  LoadRequest request = original.value;
  request.debug = true;
  request.auto_register = true;
  request.target_prefix = std::move(target_prefix);
  Status valid = pipeline::ValidateRequest(request);
  if (!valid.ok()) RaiseError(valid.error());
  std::size_t hash = HashOf(request);
  return FrozenRequest{std::move(request), hash};
}

void BindSourcesAndFunctions(nb::module_& m) {
  nb::class_<SourceFile>(m, "SourceFile", "One translation unit: a label for diagnostics, text.")
      .def(nb::init<std::string, std::string>(), nb::arg("label"), nb::arg("text"))
      .def_ro("label", &SourceFile::label)
      .def_ro("text", &SourceFile::text);
  m.def(
      "read_source_file",
      [](const std::string& path) {
        auto source = pipeline::ReadSourceFile(path);
        if (!source.ok()) RaiseError(source.error());
        return std::move(*source);
      },
      nb::arg("path"),
      "The file at `path` as a SourceFile labelled with the path, read by the core (SpecError "
      "when unreadable or not UTF-8).");
  nb::class_<pipeline::DeferredSource>(
      m, "DeferredSourceFile",
      "A source file named by its path and settled stat stamp, read only when a load needs its "
      "bytes (decision 139).")
      .def_prop_ro("label", [](const pipeline::DeferredSource& s) { return s.path; });
  m.def(
      "open_source_file",
      [](const std::string& path) {
        auto source = pipeline::OpenSourceFile(path);
        if (!source.ok()) RaiseError(source.error());
        return std::move(*source);
      },
      nb::arg("path"),
      "The file at `path` for a load request: a DeferredSourceFile when its stat has settled "
      "(a warm load then never reads it), else the SourceFile read now (SpecError when "
      "unreadable or not UTF-8).");
  nb::class_<FunctionRequest>(m, "FunctionRequest",
                              "An entry of `functions`: a name, with arg_spec tokens or None "
                              "(infer from the C++ signature).")
      .def(nb::init<std::string, std::optional<Strings>>(), nb::arg("name"),
           nb::arg("tokens").none())
      .def_ro("name", &FunctionRequest::name)
      .def_ro("tokens", &FunctionRequest::tokens);
  nb::class_<CudaOptions>(m, "CudaOptions", "Options of platform 'cuda'.")
      .def(
          "__init__",
          [](CudaOptions* self, Strings archs, Strings extra_cflags, bool use_fast_math,
             bool allow_cuda_graph) {
            new (self) CudaOptions{std::move(archs), std::move(extra_cflags), use_fast_math,
                                   allow_cuda_graph};
          },
          nb::kw_only(), nb::arg("archs") = Strings(), nb::arg("extra_cflags") = Strings(),
          nb::arg("use_fast_math") = false, nb::arg("allow_cuda_graph") = true)
      .def_ro("archs", &CudaOptions::archs)
      .def_ro("extra_cflags", &CudaOptions::extra_cflags)
      .def_ro("use_fast_math", &CudaOptions::use_fast_math)
      .def_ro("allow_cuda_graph", &CudaOptions::allow_cuda_graph);
}

void BindLoadRequest(nb::module_& m) {
  nb::class_<FrozenRequest>(m, "LoadRequest",
                            "What to build and how to register it; frozen and hashable. Value "
                            "rules (names, platform, optimization level, vmap method) are checked "
                            "on construction.")
      .def("__init__", &MakeRequest, nb::kw_only(), nb::arg("name"), nb::arg("platform"),
           nb::arg("sources"), nb::arg("functions").none(), nb::arg("extra_cflags") = Strings(),
           nb::arg("extra_ldflags") = Strings(), nb::arg("extra_include_paths") = Strings(),
           nb::arg("source_dirs") = Strings(), nb::arg("optimization_level") = 3,
           nb::arg("build_directory") = "", nb::arg("cache_dir"),
           nb::arg("cuda").none() = nb::none(), nb::arg("target_prefix").none() = nb::none(),
           nb::arg("vmap_method") = "sequential", nb::arg("auto_register") = true,
           nb::arg("sharding") = std::map<std::string, std::string>(), nb::arg("debug") = false)
      .def_prop_ro("name", [](const FrozenRequest& r) { return r.value.name; })
      .def_prop_ro("platform", [](const FrozenRequest& r) { return r.value.platform; })
      .def_prop_ro("target_prefix",
                   [](const FrozenRequest& r) { return pipeline::TargetPrefix(r.value); })
      .def_prop_ro("vmap_method", [](const FrozenRequest& r) { return r.value.vmap_method; })
      .def_prop_ro("auto_register", [](const FrozenRequest& r) { return r.value.auto_register; })
      .def_prop_ro("cache_dir", [](const FrozenRequest& r) { return r.value.cache_dir; })
      .def_prop_ro("sources",
                   [](const FrozenRequest& r) { return pipeline::SourceInputs(r.value); })
      .def_prop_ro("cuda_archs", [](const FrozenRequest& r) { return r.value.cuda.archs; })
      .def_prop_ro("sharding", [](const FrozenRequest& r) { return r.value.sharding; })
      .def_prop_ro("debug", [](const FrozenRequest& r) { return r.value.debug; })
      .def("debug_twin", &DebugTwin, nb::arg("target_prefix"),
           "This request under the debug profile (debug=True), registered as `target_prefix`: "
           "its own cache entry, the user's targets untouched.")
      .def("__hash__", [](const FrozenRequest& r) { return r.hash; })
      .def(
          "__eq__",
          [](const FrozenRequest& a, const FrozenRequest& b) {
            return a.hash == b.hash && Identity(a.value) == Identity(b.value) &&
                   SameSources(a.value, b.value);
          },
          nb::is_operator())
      .def("__repr__", [](const FrozenRequest& r) {
        return "<jaxcc._core.LoadRequest " + r.value.name + " (" + r.value.platform + ")>";
      });
}

// The interpreter's view of where it finds packages; the core turns it into ninja's wheel
// directories only on a miss (toolchain::NinjaWheelDirs).
// PySys_GetObject reads the interpreter's own sys module: no import machinery on this path.
Strings PythonPath() {
  Strings path;
  nb::handle sys_path(PySys_GetObject("path"));
  if (!sys_path.is_valid()) return path;
  for (nb::handle entry : sys_path) {
    if (nb::isinstance<nb::str>(entry)) path.push_back(nb::cast<std::string>(entry));
  }
  return path;
}

std::string PythonExecutable() {
  nb::handle executable(PySys_GetObject("executable"));
  return executable.is_valid() && nb::isinstance<nb::str>(executable)
             ? nb::cast<std::string>(executable)
             : std::string();
}

void BindBuildEnvironment(nb::module_& m) {
  nb::class_<BuildEnvironment>(m, "BuildEnvironment",
                               "Where this process finds headers and tools, and how to run the "
                               "build; changes no result.")
      .def(
          "__init__",
          [](BuildEnvironment* self, std::string ffi_include_dir, Strings nvcc_search_dirs,
             Strings cuda_runtime_dirs, Strings detected_cuda_archs, bool verbose,
             bool force_rebuild, int ninja_workers) {
            // Read on every load, hit or miss, like the cache size cap: a bad value is reported
            // before it can matter.
            auto timeout = pipeline::BuildTimeoutFromEnvironment();
            if (!timeout.ok()) RaiseError(timeout.error());
            auto shared_runtime = toolchain::SharedCudaRuntimeFromEnvironment();
            if (!shared_runtime.ok()) RaiseError(shared_runtime.error());
            Strings python_path = PythonPath();
            std::string executable = PythonExecutable();
            BuildEnvironment* env = new (self) BuildEnvironment();
            env->jaxcc_include_dir = KernelIncludeDir();
            env->ffi_include_dir = std::move(ffi_include_dir);
            env->python_path = std::move(python_path);
            env->python_executable = std::move(executable);
            env->nvcc_search_dirs = std::move(nvcc_search_dirs);
            env->cuda_runtime_dirs = std::move(cuda_runtime_dirs);
            env->shared_cuda_runtime = *shared_runtime;
            env->detected_cuda_archs = std::move(detected_cuda_archs);
            env->build_timeout_seconds = *timeout;
            env->verbose = verbose;
            env->force_rebuild = force_rebuild;
            env->ninja_workers = ninja_workers;
          },
          nb::kw_only(), nb::arg("ffi_include_dir"), nb::arg("nvcc_search_dirs") = Strings(),
          nb::arg("cuda_runtime_dirs") = Strings(), nb::arg("detected_cuda_archs") = Strings(),
          nb::arg("verbose") = false, nb::arg("force_rebuild") = false,
          nb::arg("ninja_workers") = 0)
      .def_ro("jaxcc_include_dir", &BuildEnvironment::jaxcc_include_dir)
      .def_ro("ffi_include_dir", &BuildEnvironment::ffi_include_dir)
      .def_ro("build_timeout_seconds", &BuildEnvironment::build_timeout_seconds)
      .def_ro("python_path", &BuildEnvironment::python_path)
      .def_ro("force_rebuild", &BuildEnvironment::force_rebuild)
      .def_ro("verbose", &BuildEnvironment::verbose);
}

}  // namespace

const std::string& KernelIncludeDir() {
  // The extension's __file__ rather than dladdr(), which scans the whole symbol table for the
  // nearest symbol (50 us for this extension, the largest step of a warm load's environment).
  static const std::string dir = [] {
    // From sys.modules: the module is loaded already, nothing needs importing.
    nb::object name = nb::str("jaxcc._core");
    nb::object module = nb::steal(PyImport_GetModule(name.ptr()));
    if (!module.is_valid()) throw nb::python_error();
    std::string file = nb::cast<std::string>(module.attr("__file__"));
    return JoinPath(DirName(AbsolutePath(file)), "include");
  }();
  return dir;
}

void AttachCallbacks(BuildEnvironment& environment, nb::object on_output, nb::object on_build_start,
                     nb::object on_progress) {
  if (!on_progress.is_none()) {
    environment.on_progress = [on_progress](int finished, int total) {
      nb::gil_scoped_acquire acquire;
      try {
        on_progress(finished, total);
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("jaxcc build progress callback");
      }
    };
  }
  if (!on_output.is_none()) {
    environment.on_output = [on_output](std::string_view chunk) {
      nb::gil_scoped_acquire acquire;
      try {
        on_output(nb::str(chunk.data(), chunk.size()));
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("jaxcc verbose output callback");
      }
    };
  }
  if (!on_build_start.is_none()) {
    environment.on_build_start = [on_build_start] {
      nb::gil_scoped_acquire acquire;
      try {
        on_build_start();
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("jaxcc build start callback");
      }
    };
  }
}

void BindRequestTypes(nb::module_& m) {
  BindSourcesAndFunctions(m);
  BindLoadRequest(m);
  BindBuildEnvironment(m);
}

}  // namespace jaxcc::bindings
