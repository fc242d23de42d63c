// The XLA FFI translation unit: one typed handler per entry point, compiled apart from the
// user's code so the heavy XLA FFI headers never meet the user's translation unit (or nvcc).
#pragma once

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
};

/// Exported symbol of a function's handler.
std::string HandlerSymbol(const std::string& function_name);

/// The includes every generated wrapper unit starts with, in order: the text of the precompiled
/// prelude the pipeline builds once per compiler, flags and header set (decision 122).
std::string WrapperPrelude();

std::string GenerateFfiWrapper(const std::vector<argspec::FunctionSpec>& specs,
                               const WrapperOptions& options);

}  // namespace jaxcc::codegen
