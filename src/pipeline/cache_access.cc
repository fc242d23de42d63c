#include "pipeline/cache_access.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "cache/cache_usage.h"
#include "cache/ownership.h"
#include "codegen/ffi_wrapper.h"
#include "loader/lazy_library.h"
#include "loader/library.h"
#include "pipeline/load_module.h"
#include "util/env_setting.h"
#include "util/fault_point.h"
#include "util/fs.h"
#include "util/load_trace.h"

namespace jaxcc::pipeline {

using argspec::FunctionSpec;
Result<LoadedModule> LoadEntry(const cache::Entry& entry, std::vector<FunctionSpec> specs) {
  std::vector<std::string> symbols;
  for (const FunctionSpec& spec : specs) symbols.push_back(codegen::HandlerSymbol(spec.name));
  auto library = loader::LoadLibrary(entry.library_path, symbols);
  if (!library.ok()) return library.error();
  LoadedModule module;
  module.library_path = entry.library_path;
  module.entry_dir = entry.dir;
  module.key = entry.manifest.key;
  for (const FunctionSpec& spec : specs) {
    module.handlers[spec.name] = library->symbols[codegen::HandlerSymbol(spec.name)];
  }
  module.specs = std::move(specs);
  return module;
}

Result<LoadedModule> LoadEntryLazily(const cache::Entry& entry, const LoadRequest& request,
                                     std::vector<FunctionSpec> specs) {
  codegen::WrapperOptions options;
  options.platform = request.platform;
  options.allow_cuda_graph = request.cuda.allow_cuda_graph;
  std::vector<loader::LazyFunction> functions;
  for (const FunctionSpec& spec : specs) {
    functions.push_back({codegen::HandlerSymbol(spec.name), codegen::HandlerTraits(spec, options),
                         spec.has_state()});
  }
  // The file held open from here to the first call must be the one the lookup verified (the
  // stamp it checked); without a stamp to compare, or a pin to hold, the library is mapped now.
  const cache::LibraryStamp& verified = entry.checked_stamp;
  loader::PinnedFile pin;
  if (verified.known) pin = loader::PinLibraryFile(entry.library_path);
  if (pin.fd < 0 || !(cache::StampOf(pin.info) == verified)) {
    loader::ReleasePin(pin);
    return LoadEntry(entry, std::move(specs));
  }
  // Never freed: XLA keeps the stubs, and the stubs this library.
  auto* library = new loader::LazyLibrary(request.name, entry.library_path, pin);
  auto stubs = loader::AssignLazyStubs(library, functions);
  if (!stubs) {
    delete library;  // releases the pin
    return LoadEntry(entry, std::move(specs));
  }
  LoadedModule module;
  module.library_path = entry.library_path;
  module.entry_dir = entry.dir;
  module.key = entry.manifest.key;
  module.lazy_library = library;
  for (std::size_t i = 0; i < specs.size(); ++i) module.handlers[specs[i].name] = (*stubs)[i];
  module.specs = std::move(specs);
  return module;
}

Result<bool> LazyLoadSetting() {
  return OnOffSetting("JAXCC_LAZY_LOAD", "map a warm module's library at its first call",
                      "at the load");
}

const char* MissName(cache::LookupMiss miss) {
  switch (miss) {
    case cache::LookupMiss::kAbsent:
      return "absent";
    case cache::LookupMiss::kDamaged:
      return "damaged";
    case cache::LookupMiss::kStaleDependency:
      return "stale-dependency";
    case cache::LookupMiss::kUnsafe:
      return "unsafe";
  }
  return "absent";
}

// Keeps a failed build's sources and log for inspection at a stable place, replacing the previous
// failure of the same module and key.
std::string KeepFailedBuild(const cache::CacheDir& cache, const std::string& build_dir,
                            const std::string& name, const std::string& key) {
  std::string failed_root = JoinPath(cache.root(), ".failed");
  std::string target = JoinPath(failed_root, name + "-" + key.substr(0, 24));
  if (!MakeDirs(failed_root, 0700).ok()) return build_dir;
  (void)RemoveTree(target);
  if (::rename(build_dir.c_str(), target.c_str()) != 0) return build_dir;
  return target;
}

// A cache directory that someone else owns or can write to could hand this process a library to
// run; refuse it rather than trust it. A missing root is fine: it is created with mode 0700.
Status CheckCacheRootIsPrivate(const std::string& root) {
  return cache::CheckPrivatePath(
      root, "the cache directory",
      "Use a directory of your own: jaxcc.set_cache_dir(...) or $JAXCC_CACHE_DIR.");
}

std::optional<Result<LoadedModule>> LoadFromCache(
    const cache::CacheDir& cache, const std::string& name, const std::string& key,
    const std::vector<FunctionSpec>& specs, cache::LookupMiss* miss, const cache::EntryFacts* known,
    cache::EntryFacts* verified, const LoadRequest* lazy_for) {
  auto entry = known ? cache.LookupKnown(name, key, *known, miss) : cache.Lookup(name, key, miss);
  if (!entry) return std::nullopt;
  if (verified != nullptr) {
    // Moved, not copied: nothing below reads the checked lists (a warm load does this).
    if (known != nullptr) {
      verified->library_file = known->library_file;
      verified->library_sha256 = known->library_sha256;
      verified->shadows = known->shadows;
    } else {
      *verified = cache::FactsOf(entry->manifest);
    }
    verified->library_stamp = entry->library_stamp;
    verified->dependencies = std::move(entry->checked_dependencies);
    verified->directories = std::move(entry->checked_directories);
  }
  FaultPoint("load");
  auto module = lazy_for ? LoadEntryLazily(*entry, *lazy_for, specs) : LoadEntry(*entry, specs);
  trace::Mark(lazy_for ? "lazy handlers" : "dlopen + dlsym");
  if (!module.ok() && !(cache::StampOf(StatPath(entry->library_path)) == entry->checked_stamp)) {
    // The verified library went between the check and dlopen (`cache clear` or the size cap in
    // another process, a rebuild's publish): what was verified is gone, so this is a miss and
    // the caller builds, never a LoadError whose fix is about the loader path.
    if (miss != nullptr) *miss = cache::LookupMiss::kAbsent;
    return std::nullopt;
  }
  if (module.ok()) {
    module->cache_hit = true;
    cache::MarkUsed(entry->dir);
    trace::Mark("mark used");
  }
  return module;
}

// dlopen of a private copy: the build directory is deleted right after, and the mapping stays.
Result<LoadedModule> LoadPrivateLibrary(const std::string& library_path,
                                        const std::vector<FunctionSpec>& specs,
                                        const std::string& key) {
  cache::Entry entry;
  entry.dir = DirName(library_path);
  entry.library_path = library_path;
  entry.manifest.key = key;
  return LoadEntry(entry, specs);
}

// Size cap after each publish (least recently used first, never the entry just loaded). A
// failure here costs disk space, not correctness, so it becomes a warning.
void EnforceSizeCap(const cache::CacheDir& cache, const std::string& keep_dir,
                    LoadedModule& module) {
  auto max_bytes = CacheMaxBytes();
  if (!max_bytes.ok() || *max_bytes == 0) return;
  cache::PruneOptions options;
  options.max_bytes = *max_bytes;
  options.keep_dir = keep_dir;
  auto report = cache::Prune(cache, options);
  if (!report.ok()) {
    module.warning = "cache size cap not enforced: " + report.error().message;
  } else if (report->entries_removed > 0) {
    module.evicted_entries = report->entries_removed;
  }
}

}  // namespace jaxcc::pipeline
