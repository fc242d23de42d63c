#include "pipeline/load_module.h"

#include <cstdlib>
#include <ctime>
#include <optional>
#include <utility>

#include "cache/cache_dir.h"
#include "cache/cache_key.h"
#include "cache/cache_usage.h"
#include "cache/file_lock.h"
#include "cache/header_digest.h"
#include "cache/lock_mode.h"
#include "cache/manifest.h"
#include "cache/object_cache.h"
#include "cache/watched_directory.h"
#include "pipeline/build_inputs.h"
#include "pipeline/build_plan.h"
#include "pipeline/build_world.h"
#include "pipeline/cache_access.h"
#include "pipeline/module_key.h"
#include "pipeline/run_build.h"
#include "pipeline/sanitizer_runtime.h"
#include "pipeline/sharding_rules.h"
#include "pipeline/source_text.h"
#include "pipeline/warm_index.h"
#include "pipeline/warm_remember.h"
#include "toolchain/cuda_arch_resolve.h"
#include "toolchain/cuda_runtime.h"
#include "toolchain/host_compiler.h"
#include "toolchain/ninja.h"
#include "util/fs.h"
#include "util/load_trace.h"

namespace jaxcc::pipeline {
using argspec::FunctionSpec;

Result<std::int64_t> CacheMaxBytes() {
  const char* text = std::getenv("JAXCC_CACHE_MAX_BYTES");
  if (text == nullptr || *text == '\0') return cache::kDefaultMaxCacheBytes;
  auto bytes = cache::ParseByteSize(text);
  if (!bytes.ok()) {
    return MakeError(ErrorKind::kSpec,
                     "JAXCC_CACHE_MAX_BYTES: " + bytes.error().message + "; 0 turns the cap off");
  }
  return bytes;
}

namespace {

// Shared objects get a quarter of the cache's size cap (none when the cap is off): enough for
// every unit of the modules in use, small enough that entries keep most of the room.
std::int64_t ObjectCacheMaxBytes() {
  auto cap = CacheMaxBytes();
  return cap.ok() ? *cap / 4 : 0;
}

// The warm index's hit: the entry the same request resolved to last time, verified and loaded
// exactly as the full path's lookup would (cache_access.h); nullopt sends the load down the
// full path. On a hit the record is also written under `also_fingerprint` when one is given.
std::optional<Result<LoadedModule>> LoadWarm(const LoadRequest& request, bool lazy,
                                             const std::string& fingerprint,
                                             std::vector<std::string>& archs,
                                             std::string& archs_source,
                                             const std::string& also_fingerprint = "") {
  const std::string record_path = WarmIndexPath(request.cache_dir, fingerprint);
  auto record = ReadValidWarmRecord(record_path);
  trace::Mark("warm index");
  if (!record) return std::nullopt;
  cache::CacheDir cache(request.cache_dir);
  cache::LookupMiss miss = cache::LookupMiss::kAbsent;
  cache::EntryFacts verified;
  // The record exists because the full path loaded this library (RememberWarm), so mapping it
  // can wait for the first call (decision 137).
  auto hit = LoadFromCache(cache, request.name, record->key, record->specs, &miss, &record->entry,
                           &verified, lazy ? &request : nullptr);
  if (!hit || !hit->ok()) return std::nullopt;  // the full path says what is wrong, or rebuilds
  // The library hashed right under a stamp the record did not hold yet (the record was written
  // by a build, or the file is new): keep the stamp, so later hits skip the hash (decision 90).
  // Likewise a header that hashed right under a new, settled stamp (a `touch`, a checkout of the
  // same text, or a stamp too young to keep at the build): kept, so the next hit only stats it.
  const bool library_restamped =
      verified.library_stamp.known && !(verified.library_stamp == record->entry.library_stamp);
  const bool headers_restamped = verified.dependencies != record->entry.dependencies ||
                                 verified.directories != record->entry.directories;
  if (library_restamped || headers_restamped) {
    if (library_restamped) record->entry.library_stamp = verified.library_stamp;
    if (headers_restamped) {
      record->entry.dependencies = verified.dependencies;
      record->entry.directories = verified.directories;
    }
    (void)WriteWarmRecord(record_path, *record);
    trace::Mark("warm index: stamp kept");
  }
  if (!also_fingerprint.empty()) {
    (void)WriteWarmRecord(WarmIndexPath(request.cache_dir, also_fingerprint), *record);
  }
  archs = record->cuda_archs;
  archs_source = record->cuda_archs_source;
  return hit;
}

Result<LoadedModule> LoadModuleInner(const LoadRequest& given, const BuildEnvironment& env,
                                     std::vector<std::string>& archs, std::string& archs_source) {
  trace::Reset();
  JAXCC_RETURN_IF_ERROR(ValidateRequest(given));
  if (auto cap = CacheMaxBytes(); !cap.ok()) return cap.error();
  // A misspelled lock mode is reported on every load, hit or miss, like a bad size cap.
  if (auto lock_mode = cache::LockSetting(); !lock_mode.ok()) return lock_mode.error();
  auto lazy = LazyLoadSetting();
  if (!lazy.ok()) return lazy.error();
  trace::Mark("validate request");
  // An untrusted cache root only skips the index here: the full path reports spec and
  // signature errors first, then the cache root's. A sanitized library dlopen'ed without its
  // runtime ends the process, and which runtime is the compiler's to say (decision 168): such a
  // load skips the index (no record is read or written) and takes the full path, which finds the
  // compiler (memoised), checks the process's runtime, and then hits the cache.
  std::string fingerprint;
  bool root_trusted = false;
  if (!env.force_rebuild && given.build_directory.empty() && !AsksForAddressSanitizer(given) &&
      CheckCacheRootIsPrivate(given.cache_dir).ok()) {
    root_trusted = true;
    fingerprint = WarmFingerprint(given, env);
    trace::Mark("warm fingerprint");
    if (auto hit = LoadWarm(given, *lazy, fingerprint, archs, archs_source)) {
      return std::move(*hit);
    }
  }
  // Past the stamps every step needs the sources' bytes: the deferred files are read now.
  std::optional<LoadRequest> read_request;
  std::vector<std::string> fingerprints;  // the records a successful full path writes
  if (!fingerprint.empty()) fingerprints.push_back(fingerprint);
  if (HasDeferredSources(given)) {
    read_request = given;
    auto unchanged = ReadDeferredSources(*read_request);
    if (!unchanged.ok()) return unchanged.error();
    trace::Mark("read deferred sources");
    if (!*unchanged) {
      // A file written since its stamp was taken: these bytes are not what the stamp (and so
      // the fingerprint) stood for, and no record may say they were.
      fingerprints.clear();
    } else if (!fingerprint.empty()) {
      // The same files by their text: a record written while a file was too young to defer (the
      // load right after an edit), or before a `touch`. Found so, it is kept under the stamps too.
      std::string text_fingerprint = WarmFingerprint(*read_request, env);
      trace::Mark("warm fingerprint (text)");
      if (auto hit =
              LoadWarm(*read_request, *lazy, text_fingerprint, archs, archs_source, fingerprint)) {
        return std::move(*hit);
      }
      fingerprints.push_back(text_fingerprint);
    }
  }
  const LoadRequest& request = read_request ? *read_request : given;
  // Spec and signature errors come first: they need no toolchain.
  std::vector<signature::TuneDeclaration> tune;  // tune= parameters left open (decision 159a)
  auto specs =
      signature::ResolveSpecs(request.sources, request.functions, SourceUserFlags(request), &tune);
  if (!specs.ok()) return specs.error();
  JAXCC_RETURN_IF_ERROR(ApplyShardingRules(request.sharding, &*specs));
  JAXCC_RETURN_IF_ERROR(ValidateSpecsForCallables(request.name, *specs));
  trace::Mark("validate + resolve specs");
  if (!tune.empty()) return TuneDeclared(std::move(*specs), std::move(tune));

  if (!root_trusted) JAXCC_RETURN_IF_ERROR(CheckCacheRootIsPrivate(request.cache_dir));
  trace::Mark("cache root trust check");
  cache::CacheDir cache(request.cache_dir);
  std::string memo_dir = JoinPath(request.cache_dir, ".memo");
  std::optional<CudaToolchain> cuda;
  if (request.platform == "cuda") {
    // Architecture spelling errors are the user's and need no toolchain: report them first.
    auto resolved = toolchain::ResolveCudaArchs(request.cuda.archs, env.detected_cuda_archs,
                                                toolchain::QueryGpusWithNvidiaSmi);
    if (!resolved.ok()) return resolved.error();
    // Also the user's to fix and toolchain-free, after the architecture spelling.
    JAXCC_RETURN_IF_ERROR(ValidateSpecsForPlatform(request.platform, *specs));
    auto nvcc = toolchain::FindNvcc(env.nvcc_search_dirs, JoinPath(memo_dir, "nvcc.json"));
    if (!nvcc.ok()) return nvcc.error();
    cuda = CudaToolchain{*nvcc, resolved->archs, {}};
    if (env.shared_cuda_runtime) {
      cuda->shared_runtime = toolchain::FindWheelCudaRuntime(env.cuda_runtime_dirs, nvcc->version);
    }
    archs = resolved->archs;
    archs_source = resolved->source;
  }
  auto compiler = toolchain::FindHostCompiler(JoinPath(memo_dir, "toolchain.json"));
  if (!compiler.ok()) return compiler.error();
  if (AsksForAddressSanitizer(request)) {  // now that the compiler, and so its runtime, is known
    JAXCC_RETURN_IF_ERROR(CheckAddressSanitizerRuntime(request, ReadOwnMaps(), *compiler));
  }
  trace::Mark("find compiler (memo)");
  auto header_digest = cache::DigestDirectories(
      {JoinPath(env.ffi_include_dir, "xla/ffi/api"), env.jaxcc_include_dir},
      JoinPath(memo_dir, "headers.json"));
  if (!header_digest.ok()) return header_digest.error();
  trace::Mark("header digest (memo)");

  // What the tools read beyond the request (decisions 170-175): in the key, and watched.
  auto world = ReadBuildWorld(request, *compiler, cuda, JoinPath(memo_dir, "toolchain.json"));
  if (!world.ok()) return world.error();
  trace::Mark("build world");

  BuildPlan plan = MakeBuildPlan(request, env, *compiler, cuda ? &*cuda : nullptr);
  cache::KeyInputs key_inputs =
      ModuleKeyInputs(request, *specs, plan, cuda ? &*cuda : nullptr, *compiler, *header_digest);
  key_inputs.world = WorldKeyLines(*world);
  std::string key = cache::ComputeKey(key_inputs);
  trace::Mark("build plan + key");

  auto remember = [&](const Result<LoadedModule>& loaded, const cache::EntryFacts& facts) {
    if (loaded.ok() && !fingerprints.empty()) {
      RememberWarm(request, env, fingerprints, key, facts, *specs, *compiler, cuda, archs,
                   archs_source);
    }
  };
  cache::LookupMiss miss = cache::LookupMiss::kAbsent;
  if (!env.force_rebuild) {
    cache::EntryFacts verified;
    if (auto hit = LoadFromCache(cache, request.name, key, *specs, &miss, nullptr, &verified)) {
      remember(*hit, verified);
      return std::move(*hit);
    }
    if (miss == cache::LookupMiss::kUnsafe) {
      Status trusted = cache.CheckEntryIsTrusted(request.name, key);
      if (!trusted.ok()) return trusted.error();
    }
  }

  // Miss: one builder per (name, key) across threads and processes. A cache that cannot be
  // written (read-only, full, someone else's disk quota) still gets the user a working module,
  // built privately and not cached.
  auto lock =
      cache::FileLock::Acquire(cache.LockPath(request.name, key), env.build_timeout_seconds + 60);
  if (!lock.ok()) {
    if (!IsCacheWriteFailure(lock.error())) return lock.error();
    return BuildUncached(request, env, plan, *specs, key,
                         CacheFailureLine(lock.error(), request.cache_dir, "lock"));
  }
  if (!env.force_rebuild) {
    // Another process may have published while this one waited for the lock.
    if (auto hit = LoadFromCache(cache, request.name, key, *specs, &miss)) return std::move(*hit);
  }
  trace::Mark("lock + look again");
  // Build directories of processes that died mid-build are nobody's; sweep them while here.
  cache.RemoveOrphans(std::nullopt, /*failed_builds_too=*/false);

  auto ninja =
      toolchain::FindNinja(toolchain::NinjaWheelDirs(env.python_path, env.python_executable));
  if (!ninja.ok()) return ninja.error();
  const bool private_build_dir = request.build_directory.empty();
  const std::string cuda_home = cuda ? cuda->nvcc.cuda_home : "";
  IncludeSearch search = UserIncludeSearch(request);
  search.toolchain_dirs = world->toolchain_dirs;
  search.search_dirs = world->search_dirs;
  // Every unit's object is shared through the object cache, so an edit rebuilds only the unit
  // it touched. A user's build_directory is incremental already (ninja skips unchanged units).
  cache::ObjectCache objects(request.cache_dir, /*max_objects=*/1024, ObjectCacheMaxBytes());
  std::string toolchain_version = compiler->path + " " + compiler->version;
  if (cuda) toolchain_version += "\n" + cuda->nvcc.path + " " + cuda->nvcc.version;
  // Every unit's object depends on what its compiler read beyond the command (the environment,
  // the compiler's bytes, a native target, the files the flags name) as much as the entry does.
  for (const std::string& line : key_inputs.world) toolchain_version += "\n" + line;

  // A build whose inputs changed while it ran is built again, once (decision 146c): what the
  // compiler read is then unknown, so neither the entry nor the objects may vouch for it. If they
  // change again, the second build is loaded for this process only, unpublished.
  constexpr int kBuildAttempts = 2;
  std::string build_dir;
  std::vector<UnitObject> units;
  std::optional<build::BuildOutcome> outcome;
  BuildInputs inputs;
  for (int attempt = 1;; ++attempt) {
    build_dir = AbsolutePath(request.build_directory);
    if (private_build_dir) {
      auto made = cache.MakeBuildDir(request.name);
      if (!made.ok()) {
        return BuildUncached(request, env, plan, *specs, key,
                             CacheFailureLine(made.error(), request.cache_dir, "build directory"));
      }
      build_dir = *made;
    }
    GeneratedFiles files = GenerateSources(request, *specs);
    build::BuildGraph graph = plan.graph;
    trace::Mark("orphans, ninja, build dir, generate");
    // Taken before any object is fetched or compiled: every header read after this moment that
    // changes later has a newer timestamp.
    const std::int64_t build_start_ns = BuildStartNs();
    units.clear();
    if (private_build_dir) {
      units =
          ReuseObjects(objects, env, files, toolchain_version, *header_digest, build_dir, graph);
    }
    trace::Mark("reuse objects");
    auto built = RunBuildIn(build_dir, request, env, graph, std::move(files), *ninja);
    if (!built.ok()) {
      Error error = built.error();
      if (private_build_dir && MentionsFullDisk(error)) {
        (void)RemoveTree(build_dir);
        return BuildUncached(request, env, plan, *specs, key,
                             CacheFailureLine(error, request.cache_dir, "compile"));
      }
      if (private_build_dir) {
        std::string kept = KeepFailedBuild(cache, build_dir, request.name, key);
        if (!error.log_path.empty()) error.log_path = JoinPath(kept, "build.log");
      }
      return error;
    }
    outcome = std::move(*built);
    trace::Mark("build (ninja)");
    std::vector<std::string> read = outcome->dependencies;
    read.insert(read.end(), world->flag_files.files.begin(), world->flag_files.files.end());
    inputs = StampBuildInputs(read, build_dir, env, cuda_home, search, build_start_ns);
    trace::Mark("stamp inputs");
    if (inputs.changed.empty() || attempt == kBuildAttempts) break;
    if (private_build_dir) {
      (void)RemoveTree(build_dir);
    } else {
      ForgetObjects(build_dir, plan.graph);  // ninja judges by mtime: compile every unit again
    }
  }
  if (!inputs.changed.empty()) {
    // Still changing: run what was built, vouch for nothing (no entry, no objects, no record).
    auto module = LoadPrivateLibrary(outcome->library_path, *specs, key);
    if (private_build_dir) (void)RemoveTree(build_dir);
    if (!module.ok()) return module.error();
    FillBuildDetails(*module, *outcome, "uncached");
    module->warning = "not cached: " + inputs.changed +
                      " (twice); this process runs what the compiler read, and the next load "
                      "builds again";
    return module;
  }
  if (private_build_dir) {
    StoreObjects(objects, units, build_dir, env, cuda_home, inputs, search);
  }
  trace::Mark("store objects");

  cache::Manifest manifest;
  manifest.key = key;
  manifest.module_name = request.name;
  manifest.jaxcc_version = JAXCC_VERSION;
  for (const FunctionSpec& spec : *specs) manifest.function_names.push_back(spec.name);
  // The CUDA toolkit's headers are covered by nvcc's path and version in the key.
  manifest.dependencies = std::move(inputs.dependencies);
  // A shadow in a directory watched by its names is seen there: only the others are stat'ed.
  manifest.shadows = cache::ShadowsNoWatchSees(std::move(inputs.shadows), inputs.directories);
  // A file a flag names that did not exist: the entry holds while it stays absent.
  for (const std::string& absent : world->flag_files.absent) manifest.shadows.push_back(absent);
  manifest.directories = std::move(inputs.directories);
  for (const UnitObject& unit : units) manifest.objects.push_back(unit.key);
  manifest.inputs_json = cache::DescribeKeyInputs(key_inputs);
  manifest.build_seconds = outcome->seconds;
  manifest.created_unix = static_cast<std::int64_t>(std::time(nullptr));
  auto entry = cache.Publish(request.name, key, outcome->library_path, std::move(manifest));
  if (!entry.ok()) {
    // Publish wrote no manifest, so no half entry is visible; run the library from here.
    auto module = LoadPrivateLibrary(outcome->library_path, *specs, key);
    if (private_build_dir) (void)RemoveTree(build_dir);
    if (!module.ok()) return module.error();
    module->warning =
        "not cached: " + CacheFailureLine(entry.error(), request.cache_dir, "publish").message;
    FillBuildDetails(*module, *outcome, "uncached");
    return module;
  }
  trace::Mark("publish");
  if (private_build_dir) (void)RemoveTree(build_dir);
  trace::Mark("remove build dir");

  auto module = LoadEntry(*entry, *specs);
  if (!module.ok()) return module.error();
  trace::Mark("load entry");
  remember(module, cache::FactsOf(entry->manifest));
  trace::Mark("warm index record");
  FillBuildDetails(*module, *outcome, env.force_rebuild ? "forced" : MissName(miss));
  for (const UnitObject& unit : units) {
    if (!unit.reused) continue;
    ++module->objects_reused;
    if (unit.source == kWrapperSource) module->wrapper_reused = true;
  }
  EnforceSizeCap(cache, entry->dir, *module);
  trace::Mark("size cap");
  return module;
}

}  // namespace

Result<LoadedModule> LoadModule(const LoadRequest& request, const BuildEnvironment& env) {
  std::vector<std::string> archs;
  std::string archs_source;
  auto module = LoadModuleInner(request, env, archs, archs_source);
  if (module.ok()) {
    module->cuda_archs = std::move(archs);
    module->cuda_archs_source = std::move(archs_source);
  }
  return module;
}

}  // namespace jaxcc::pipeline
