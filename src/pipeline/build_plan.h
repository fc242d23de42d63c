// Turns a request into compile flags and a ninja build graph, and resolved specs into the
// generated translation units.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "build/build_graph.h"
#include "pipeline/load_request.h"
#include "toolchain/host_compiler.h"
#include "toolchain/nvcc.h"

namespace jaxcc::pipeline {

/// The generated FFI wrapper unit's file name in every build directory.
inline constexpr char kWrapperSource[] = "ffi_wrapper.cc";
/// The frame runtime unit's (codegen::FrameRuntimeSource): one object per cache and platform.
inline constexpr char kFrameRuntimeSource[] = "ffi_frame_runtime.cc";

struct BuildPlan {
  build::BuildGraph graph;
  std::vector<std::string> user_flags;     ///< flags of the user's translation units
  std::vector<std::string> wrapper_flags;  ///< flags of the FFI wrapper translation unit
  std::vector<std::string> runtime_flags;  ///< flags of the frame runtime translation unit
  std::vector<std::string> cuda_flags;     ///< flags of nvcc translation units (CUDA only)
};

/// What a CUDA build needs beyond the host compiler.
struct CudaToolchain {
  toolchain::Nvcc nvcc;
  std::vector<std::string> archs;  ///< normalised ("80", "90a")
  /// The wheel's libcudart.so.<major> the module links and finds by RUNPATH, or "" for the
  /// static runtime (toolchain/cuda_runtime.h; decision 136).
  std::string shared_runtime;
};

/// Flags and the build graph: everything the cache key needs, and cheap (no code generation).
/// `cuda` is required for platform "cuda" and ignored otherwise. For CUDA, sources whose label
/// ends in .cc/.cpp/.cxx go to the host compiler (with the CUDA headers on the include path),
/// every other source to nvcc; the FFI wrapper and the frame runtime always go to the host
/// compiler.
BuildPlan MakeBuildPlan(const LoadRequest& request, const BuildEnvironment& env,
                        const toolchain::HostCompiler& compiler,
                        const CudaToolchain* cuda = nullptr);

/// The user flags each source is compiled with (`cuda.extra_cflags` for a source nvcc compiles,
/// `extra_cflags` for the others), as signature::ResolveSpecs reads their `-D`/`-U`.
std::vector<std::vector<std::string>> SourceUserFlags(const LoadRequest& request);

/// The generated translation units (file name, text), one per source plus the FFI wrapper and the
/// frame runtime, named
/// as MakeBuildPlan's graph expects. Only needed on a cache miss.
std::vector<std::pair<std::string, std::string>> GenerateSources(
    const LoadRequest& request, const std::vector<argspec::FunctionSpec>& specs);

}  // namespace jaxcc::pipeline
