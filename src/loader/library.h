// dlopen/dlsym for compiled kernel libraries. Libraries are never closed: XLA keeps raw handler
// pointers for the life of the process.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::loader {

struct LoadedLibrary {
  std::string path;
  void* handle = nullptr;
  std::map<std::string, void*> symbols;  ///< requested symbol name -> address
};

/// Loads `path` with RTLD_NOW | RTLD_LOCAL (unresolved symbols fail here, not at first call) and
/// resolves every name in `symbols`. Errors are ErrorKind::kLoad with dlerror()'s text and a hint.
/// Loading a path twice returns the same handle (the dynamic loader's reference count).
Result<LoadedLibrary> LoadLibrary(const std::string& path, const std::vector<std::string>& symbols);

}  // namespace jaxcc::loader
