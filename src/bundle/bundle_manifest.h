// The bundle format: a directory holding a module's shared library and `jaxcc-bundle.json`, the
// manifest that says what the library is, what it was built for and the SHA-256 of every file.
// The core owns the format; `jaxcc build` writes it and `jaxcc.load_library` reads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "argspec/function_spec.h"
#include "util/result.h"

namespace jaxcc::bundle {

/// Bumped when a reader of the previous format could misread a bundle; a reader refuses a newer
/// one.
inline constexpr int kBundleFormat = 1;
inline constexpr const char* kManifestName = "jaxcc-bundle.json";

/// One file of the bundle, relative to the bundle directory.
struct BundleFile {
  std::string path;  ///< a plain file name: no '/', never ".." (checked on read)
  std::string role;  ///< "library"
  std::int64_t size = 0;
  std::string sha256;
};

/// An XLA FFI C API version (`XLA_FFI_API_MAJOR` / `XLA_FFI_API_MINOR` of xla/ffi/api/c_api.h).
struct FfiApiVersion {
  int major = 0;
  int minor = 0;
};

struct BundleManifest {
  int format = kBundleFormat;
  std::string module_name;
  std::string key;  ///< the cache key of the build: equal keys mean identical code
  std::string jaxcc_version;
  std::string platform;  ///< "cpu" or "cuda": where the handlers run
  std::string host;      ///< "linux-x86_64": the OS and CPU the library was linked for
  std::vector<std::string> cuda_archs;  ///< SASS architectures ("80", "90a"), CUDA only
  std::string ptx_arch;                 ///< the PTX embedded for newer GPUs ("90"), CUDA only
  FfiApiVersion ffi_api;
  std::string compiler;  ///< host compiler path and version line
  std::string nvcc;      ///< nvcc path and release line, CUDA only
  int optimization_level = 3;
  std::string target_prefix;  ///< the default prefix of the FFI target names
  std::string vmap_method = "sequential";
  std::vector<argspec::FunctionSpec> functions;
  std::vector<BundleFile> files;
  /// Shared libraries the library needs beyond the C/C++ runtime (its DT_NEEDED names, as
  /// bundle/needed_libraries.h filters them): named when the target machine lacks one. Absent in
  /// bundles of earlier jaxcc versions (read as empty).
  std::vector<std::string> needed_libraries;
  /// For a build with `-march=native` and kin (decision 177): the target the compiler chose
  /// ("-march=znver3 ...") and the CPU features it enabled, in /proc/cpuinfo's spelling; a CPU
  /// without one of them is refused at load. Empty otherwise, and in earlier bundles.
  std::string cpu_target;
  std::vector<std::string> cpu_features;
  std::int64_t created_unix = 0;
};

std::string BundleManifestToJson(const BundleManifest& manifest);

/// ErrorKind::kBundle on malformed JSON, a missing or mistyped field, an unsafe file name, or a
/// format newer than kBundleFormat (naming both versions and the fix: a newer jaxcc).
Result<BundleManifest> BundleManifestFromJson(const std::string& text, const std::string& where);

}  // namespace jaxcc::bundle
