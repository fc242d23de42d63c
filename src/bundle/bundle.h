// Writing a bundle from a build, and loading one: verify every file, check it fits this machine,
// then dlopen through the same path as a cache hit (pipeline::LoadPrivateLibrary).
#pragma once

#include <map>
#include <string>

#include "bundle/bundle_manifest.h"
#include "bundle/compat.h"
#include "pipeline/load_request.h"
#include "util/result.h"

namespace jaxcc::bundle {

/// Builds (or fetches from the cache) the request's module, then writes `out_dir` as a bundle:
/// the library and the manifest, into a temporary sibling renamed into place, so `out_dir` is
/// whole or untouched. An `out_dir` that exists must be empty or an earlier bundle (replaced);
/// anything else is ErrorKind::kBundle. Errors of the build keep their kind.
Result<BundleManifest> WriteBundle(const pipeline::LoadRequest& request,
                                   const pipeline::BuildEnvironment& env,
                                   const std::string& out_dir);

/// Reads `dir`'s manifest (ErrorKind::kBundle when there is none or it is invalid or newer).
Result<BundleManifest> ReadBundleManifest(const std::string& dir);

struct LoadedBundle {
  BundleManifest manifest;
  pipeline::LoadedModule module;
};

/// Reads and checks the manifest (CheckCompatible), verifies the size and SHA-256 of every file
/// it lists, and only then dlopens the library and resolves one handler per function. Nothing is
/// loaded from a bundle that fails any check. Needs no compiler, nvcc or ninja. `sharding`
/// (function -> rule, as a loader's `sharding=`) adds or replaces the manifest's rules, checked
/// as a loader checks them (ErrorKind::kSpec).
Result<LoadedBundle> LoadBundle(const std::string& dir, const Runtime& runtime,
                                const std::map<std::string, std::string>& sharding = {});

}  // namespace jaxcc::bundle
