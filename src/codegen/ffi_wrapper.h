// The XLA FFI translation units of a module: the wrapper (one handler per entry point, a
// descriptor and a body that calls the kernel unit's bridge) and the frame runtime (the decoder
// every handler calls, the same text for every module of a platform). Both are compiled apart
// from the user's code, so XLA's FFI header never meets the user's translation unit (or nvcc),
// and only the runtime reads it (decision 128).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "argspec/function_spec.h"

namespace jaxcc::codegen {

struct WrapperOptions {
  std::string module_name;
  /// "cpu": no stream context (a `stream` parameter receives 0); "cuda": XLA's platform stream.
  std::string platform = "cpu";
  /// Adds the command-buffer trait so XLA may capture CUDA handlers in CUDA graphs.
  bool allow_cuda_graph = true;
  /// Each source's label (its path, or the inline name), by FunctionSpec::source_index: what a
  /// crash report names as the function's file (crash_site.h); "" where none is given.
  std::vector<std::string> source_labels;
};

/// Exported symbol of a function's handler.
std::string HandlerSymbol(const std::string& function_name);

/// The XLA_FFI_Handler_Traits a function's handler reports: command-buffer compatible for CUDA
/// with `allow_cuda_graph`, unless it allocates scratch at run time (XLA forbids its allocator in
/// command buffers). The generated handler and the lazy stub that stands in for it
/// (loader/lazy_library.h) both answer XLA's metadata query with this.
std::uint32_t HandlerTraits(const argspec::FunctionSpec& spec, const WrapperOptions& options);

/// The wrapper unit: includes only jaxcc/detail/frame_entry.h.
std::string GenerateFfiWrapper(const std::vector<argspec::FunctionSpec>& specs,
                               const WrapperOptions& options);

/// The FFI lifecycle features a frame runtime carries (decision 161c): a CPU module's runtime
/// carries only those its functions take, so the machinery of the others is neither parsed nor
/// compiled on a cache's first build. Every feature by default.
struct FrameFeatures {
  bool async = true;          ///< a `jaxcc::Async` function
  bool state = true;          ///< a `jaxcc::State<T>&` parameter
  bool pool = true;           ///< a `jaxcc::ThreadPool&` parameter
  bool scratch_alloc = true;  ///< a `jaxcc::ScratchAllocator&` parameter
};

/// The features the functions of `specs` take.
FrameFeatures FrameFeaturesOf(const std::vector<argspec::FunctionSpec>& specs);

/// The frame runtime unit of `platform` ("cpu" or "cuda"): defines RunFrame from ffi_frame.h.
/// Its text depends only on the platform and, on the CPU, on `features` (CUDA's carries every
/// feature), so every module with the same features shares one cached object.
std::string FrameRuntimeSource(const std::string& platform, const FrameFeatures& features = {});

}  // namespace jaxcc::codegen
