// The input and output of one module load, as the Python layer hands it to the core.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "argspec/function_spec.h"
#include "signature/resolve.h"

namespace jaxcc::pipeline {

struct LoadRequest {
  std::string name;
  std::string platform = "cpu";
  std::vector<signature::SourceFile> sources;
  std::optional<std::vector<signature::FunctionRequest>> functions;
  std::vector<std::string> extra_cflags;
  std::vector<std::string> extra_ldflags;
  std::vector<std::string> extra_include_paths;
  /// Directories of the loaded files: on the include path so `#include "x.h"` works.
  std::vector<std::string> source_dirs;
  int optimization_level = 3;
  std::string build_directory;  ///< user-chosen build dir (kept, incremental); "" = private temp
  bool verbose = false;
  bool force_rebuild = false;
  int ninja_workers = 0;
  std::string cache_dir;
  std::string jaxcc_include_dir;
  std::string ffi_include_dir;
  std::vector<std::string> ninja_search_dirs;
  double build_timeout_seconds = 600;
  std::function<void(std::string_view)> on_output;  ///< verbose build output, live

  // CUDA only (platform "cuda").
  std::vector<std::string> cuda_archs;           ///< compute_capability as the user gave it
  std::vector<std::string> detected_cuda_archs;  ///< compute capabilities of the GPUs JAX sees
  std::vector<std::string> extra_cuda_cflags;
  std::vector<std::string> nvcc_search_dirs;  ///< bin directories of pip's NVIDIA CUDA wheels
  bool use_fast_math = false;
  bool allow_cuda_graph = true;
};

struct LoadedModule {
  std::string library_path;
  std::string entry_dir;
  std::string key;
  std::vector<argspec::FunctionSpec> specs;
  std::map<std::string, void*> handlers;  ///< function name -> XLA_FFI_Handler*
  bool cache_hit = false;
  std::string
      miss_reason;  ///< "absent", "damaged", "stale-dependency", "forced", "uncached" on a miss
  double build_seconds = 0;
  std::string build_log;    ///< compiler output of a fresh build (warnings), "" on a hit
  std::string warning;      ///< something the user should hear about that did not stop the load
  int evicted_entries = 0;  ///< entries the size cap removed after this build was published
  /// A fresh build linked the FFI wrapper object of an earlier build (same signatures, flags,
  /// compiler and headers) instead of compiling it.
  bool wrapper_reused = false;
  std::vector<std::string> cuda_archs;  ///< architectures built for (CUDA), e.g. {"80", "90a"}
  std::string cuda_archs_source;        ///< where they came from
};

}  // namespace jaxcc::pipeline
