// Whether a bundle fits this machine: the XLA FFI C API version of the installed jaxlib, the host
// (OS and CPU), and, for CUDA bundles, the architectures of the GPUs JAX sees.
#pragma once

#include <string>
#include <vector>

#include "bundle/bundle_manifest.h"
#include "util/result.h"

namespace jaxcc::bundle {

/// XLA_FFI_API_MAJOR/MINOR from `<ffi_include_dir>/xla/ffi/api/c_api.h` (jax.ffi.include_dir()).
/// ErrorKind::kToolchain when the header is missing or has no such lines.
Result<FfiApiVersion> ReadFfiApiVersion(const std::string& ffi_include_dir);

/// "linux-x86_64", "linux-aarch64", ...: uname's system and machine, lower case.
std::string HostPlatform();

/// What this process offers a bundle.
struct Runtime {
  std::string host;
  FfiApiVersion ffi_api;
  std::vector<std::string> gpu_archs;  ///< compute capabilities of the GPUs JAX sees ("9.0")
  /// This CPU's feature flags (/proc/cpuinfo); empty reads them (toolchain::HostCpuFeatures).
  std::vector<std::string> cpu_features;
};

/// The GPUs of `gpu_archs` that neither a SASS architecture (same major, minor not above the
/// GPU's; an "a" architecture only on its own GPU) nor the PTX (not above the GPU) can run,
/// normalised ("86"). Unparseable GPU names are returned as given.
std::vector<std::string> UncoveredGpus(const std::vector<std::string>& sass_archs,
                                       const std::string& ptx_arch,
                                       const std::vector<std::string>& gpu_archs);

/// ErrorKind::kBundle naming the bundle's side and this machine's side, and the fix, when the
/// host differs, the bundle was built for a CPU feature this CPU lacks (`-march=native`, decision
/// 177), the FFI major version differs or the bundle's minor is newer than the runtime's,
/// or a GPU JAX sees is not covered. Rules: docs/deploy.md, "Load".
Status CheckCompatible(const BundleManifest& manifest, const Runtime& runtime);

}  // namespace jaxcc::bundle
