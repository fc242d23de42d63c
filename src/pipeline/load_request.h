// The input and output of one module load, as the Python layer hands it to the core.
//
// A load has two inputs of different nature. `LoadRequest` says what to build and how to
// register it: it decides the result, so the Python layer freezes it and uses it as the key of
// its in-process table. `BuildEnvironment` says where this process finds things and how to run
// the build: it changes no result (the cache key covers the tools themselves).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "argspec/function_spec.h"
#include "build/ninja_log.h"
#include "cache/cache_dir.h"
#include "signature/resolve.h"
#include "util/result.h"

namespace jaxcc::loader {
class LazyLibrary;
}  // namespace jaxcc::loader

namespace jaxcc::pipeline {

/// The `vmap_method`s jax.ffi.ffi_call accepts; a module's functions are called with one of them.
inline constexpr const char* kVmapMethods[] = {"sequential", "sequential_unrolled", "expand_dims",
                                               "broadcast_all"};
inline constexpr int kMinOptimizationLevel = 0;
inline constexpr int kMaxOptimizationLevel = 3;

/// Options of platform "cuda" (ignored on "cpu").
struct CudaOptions {
  std::vector<std::string> archs;  ///< compute_capability as the user gave it ("8.0", "sm_90a")
  std::vector<std::string> extra_cflags;
  bool use_fast_math = false;
  bool allow_cuda_graph = true;
};

struct LoadRequest {
  std::string name;
  std::string platform = "cpu";
  std::vector<signature::SourceFile> sources;
  /// Empty, or one per source: a known stamp marks that source as a file named by its path
  /// (`label`) and stamp, its `text` empty until the full path reads it (decision 139,
  /// source_text.h). A warm load fingerprints the stamp and never reads the file.
  std::vector<cache::LibraryStamp> source_stamps;
  std::optional<std::vector<signature::FunctionRequest>> functions;
  std::vector<std::string> extra_cflags;
  std::vector<std::string> extra_ldflags;
  std::vector<std::string> extra_include_paths;
  /// Directories of the loaded files: on the include path so `#include "x.h"` works.
  std::vector<std::string> source_dirs;
  int optimization_level = 3;
  /// The debug profile (JAXCC_DEBUG=1 or debug=True; decision 150c): user code at -O0 -g with
  /// JAXCC_DEBUG defined, outputs run on guarded copies, nvcc's -G. Part of the key.
  bool debug = false;
  std::string build_directory;  ///< user-chosen build dir (kept, incremental); "" = private temp
  std::string cache_dir;
  CudaOptions cuda;
  // How the Python layer registers and calls the result; validated here so the rules have one
  // owner, not used by the build.
  std::optional<std::string> target_prefix;  ///< nullopt = the module name
  std::string vmap_method = "sequential";
  bool auto_register = true;
  /// `sharding={"fn": RULE}`: function name -> sharding rule (argspec/sharding_rule.h). Overrides
  /// a `sharding="..."` annotation of the same function. Not in the cache key (decision 62).
  std::map<std::string, std::string> sharding;
};

/// Whether source `i` of a request whose stamps are `source_stamps` is a deferred file, its text
/// not read yet (decision 139).
inline bool IsDeferredSource(const std::vector<cache::LibraryStamp>& source_stamps, size_t i) {
  return i < source_stamps.size() && source_stamps[i].known;
}

/// Where this process finds headers and tools, and how to run the build.
struct BuildEnvironment {
  std::string jaxcc_include_dir;
  std::string ffi_include_dir;
  /// sys.path and sys.executable: where the `ninja` wheel may be (toolchain::NinjaWheelDirs),
  /// turned into directories only when a build needs ninja.
  std::vector<std::string> python_path;
  std::string python_executable;
  std::vector<std::string> nvcc_search_dirs;  ///< bin directories of pip's NVIDIA CUDA wheels
  /// lib directories of pip's NVIDIA CUDA runtime wheels (nvidia/cu13/lib, ...), import order.
  std::vector<std::string> cuda_runtime_dirs;
  /// Unless $JAXCC_CUDA_RUNTIME=static: CUDA modules link the wheel's shared runtime found in
  /// `cuda_runtime_dirs` (toolchain/cuda_runtime.h); false, or no such wheel: the static one.
  bool shared_cuda_runtime = false;
  std::vector<std::string> detected_cuda_archs;  ///< compute capabilities of the GPUs JAX sees
  double build_timeout_seconds = 600;  ///< $JAXCC_BUILD_TIMEOUT (BuildTimeoutFromEnvironment)
  bool verbose = false;
  bool force_rebuild = false;
  int ninja_workers = 0;                            ///< 0 = one job per core
  std::function<void(std::string_view)> on_output;  ///< verbose build output, live
  /// Called once a load knows it must compile (not on a cache hit), e.g. to show progress.
  std::function<void()> on_build_start;
  /// Called with (steps finished, steps in the build) as the build runs (build::BuildRequest).
  std::function<void(int, int)> on_progress;
};

/// $JAXCC_BUILD_TIMEOUT in seconds (default 600); a value that is not a number in (0, 1e6] is a
/// SpecError naming the variable and the fix.
Result<double> BuildTimeoutFromEnvironment();

/// Checks every rule of a request that needs no file system or toolchain: the module name and
/// target prefix, the platform, the optimization level and the vmap method. ErrorKind::kSpec.
Status ValidateRequest(const LoadRequest& request);

/// The calling convention of the Python callables, `fn(*arrays, outs=None, **attributes)`: no
/// attribute may be named `outs`. ErrorKind::kSpec naming module, function and the fix.
Status ValidateSpecsForCallables(const std::string& module_name,
                                 const std::vector<argspec::FunctionSpec>& specs);

/// Rules a module's resolved functions must meet on its platform: on "cuda" every function takes
/// a `stream` (decision 57). ErrorKind::kSpec naming the function and the fix.
Status ValidateSpecsForPlatform(const std::string& platform,
                                const std::vector<argspec::FunctionSpec>& specs);

/// The prefix of the FFI target names: target_prefix, or the module name when there is none.
const std::string& TargetPrefix(const LoadRequest& request);

struct LoadedModule {
  std::string library_path;
  std::string entry_dir;
  std::string key;
  std::vector<argspec::FunctionSpec> specs;
  std::map<std::string, void*> handlers;  ///< function name -> XLA_FFI_Handler*
  /// Set when `handlers` are lazy stubs: the library they map at their first call (never freed).
  loader::LazyLibrary* lazy_library = nullptr;
  bool cache_hit = false;
  std::string
      miss_reason;  ///< "absent", "damaged", "stale-dependency", "forced", "uncached" on a miss
  double build_seconds = 0;
  std::string build_log;    ///< compiler output of a fresh build (warnings), "" on a hit
  std::vector<build::BuildStep> build_steps;  ///< what each compile and the link took
  std::string warning;      ///< something the user should hear about that did not stop the load
  int evicted_entries = 0;  ///< entries the size cap removed after this build was published
  /// A fresh build linked the FFI wrapper object of an earlier build (same signatures, flags,
  /// compiler and headers) instead of compiling it.
  bool wrapper_reused = false;
  /// How many of a fresh build's translation units (kernel units and wrapper) linked an earlier
  /// build's object instead of being compiled (cache/object_cache.h).
  int objects_reused = 0;
  std::vector<std::string> cuda_archs;  ///< architectures built for (CUDA), e.g. {"80", "90a"}
  std::string cuda_archs_source;        ///< where they came from
  /// Not empty when the sources' annotations declare `tune="..."` parameters the request's flags
  /// leave open: then nothing was built or loaded (no library, no handlers), and the caller (the
  /// Python tuner) expands the declarations into one request per configuration (decision 159a).
  std::vector<signature::TuneDeclaration> tune;
};

/// What a load returns for open tune= declarations: the specs, the declarations, nothing built
/// (and no warm record, so every load of such a request reads the annotation as it is now).
inline LoadedModule TuneDeclared(std::vector<argspec::FunctionSpec> specs,
                                 std::vector<signature::TuneDeclaration> tune) {
  LoadedModule declared;
  declared.specs = std::move(specs);
  declared.tune = std::move(tune);
  return declared;
}

}  // namespace jaxcc::pipeline
