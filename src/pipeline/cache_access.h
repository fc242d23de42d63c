// Reading and writing the cache on behalf of LoadModule: loading an entry, what a miss was,
// which files a build tracks, keeping failed builds, the size cap.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cache/cache_dir.h"
#include "pipeline/load_request.h"
#include "util/result.h"

namespace jaxcc::pipeline {

/// dlopens an entry's library and resolves one handler per spec.
Result<LoadedModule> LoadEntry(const cache::Entry& entry, std::vector<argspec::FunctionSpec> specs);

/// Handlers that map the entry's library at their first call (loader/lazy_library.h), with the
/// traits the request's generated handlers report; the library is dlopened right away when the
/// process's stub pool is used up. Only for an entry this same library loaded from before (the
/// warm index's hits): a library that never loaded must fail at the load, not at a call.
Result<LoadedModule> LoadEntryLazily(const cache::Entry& entry, const LoadRequest& request,
                                     std::vector<argspec::FunctionSpec> specs);

/// Whether warm loads map libraries at the first call: $JAXCC_LAZY_LOAD, "1" (the default) or
/// "0"; anything else is a SpecError on every load.
Result<bool> LazyLoadSetting();

/// A verified hit, loaded (nullopt on a miss, with `miss` saying why). With `known`, the entry is
/// checked against those facts (the warm index's copy) instead of its manifest's; `verified`, if
/// given, receives the facts a hit was checked against. With `lazy_for`, the hit is loaded by
/// LoadEntryLazily for that request.
std::optional<Result<LoadedModule>> LoadFromCache(const cache::CacheDir& cache,
                                                  const std::string& name, const std::string& key,
                                                  const std::vector<argspec::FunctionSpec>& specs,
                                                  cache::LookupMiss* miss,
                                                  const cache::EntryFacts* known = nullptr,
                                                  cache::EntryFacts* verified = nullptr,
                                                  const LoadRequest* lazy_for = nullptr);

/// dlopen of a library outside the cache (a private build); the mapping outlives the file.
Result<LoadedModule> LoadPrivateLibrary(const std::string& library_path,
                                        const std::vector<argspec::FunctionSpec>& specs,
                                        const std::string& key);

/// "absent", "damaged", "stale-dependency" or "unsafe".
const char* MissName(cache::LookupMiss miss);

/// Refuses a cache root that another user owns or can write (a missing root is fine).
Status CheckCacheRootIsPrivate(const std::string& root);

/// Moves a failed build directory to <cache>/.failed/<name>-<key prefix>; returns where it is.
std::string KeepFailedBuild(const cache::CacheDir& cache, const std::string& build_dir,
                            const std::string& name, const std::string& key);

/// Applies $JAXCC_CACHE_MAX_BYTES after a publish, never evicting `keep_dir`.
void EnforceSizeCap(const cache::CacheDir& cache, const std::string& keep_dir,
                    LoadedModule& module);

}  // namespace jaxcc::pipeline
