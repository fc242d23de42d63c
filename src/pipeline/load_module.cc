#include "pipeline/load_module.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>

#include "argspec/arg_spec.h"
#include "build/builder.h"
#include "cache/cache_dir.h"
#include "cache/cache_key.h"
#include "cache/cache_usage.h"
#include "cache/file_lock.h"
#include "cache/header_digest.h"
#include "cache/object_cache.h"
#include "cache/ownership.h"
#include "codegen/ffi_wrapper.h"
#include "loader/library.h"
#include "pipeline/build_plan.h"
#include "pipeline/source_excerpt.h"
#include "toolchain/cuda_arch_resolve.h"
#include "toolchain/host_compiler.h"
#include "toolchain/ninja.h"
#include "util/clip_lines.h"
#include "util/fault_point.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::pipeline {
namespace {

using argspec::FunctionSpec;

std::string CanonicalSpecs(const std::vector<FunctionSpec>& specs) {
  std::string text;
  for (const FunctionSpec& spec : specs) {
    text += spec.name + "@" + std::to_string(spec.source_index) + ":";
    for (const std::string& ns : spec.namespaces) text += ns + "::";
    for (const std::string& token : argspec::ToTokens(spec)) text += " " + token;
    text += "\n";
  }
  return text;
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return !prefix.empty() && text.compare(0, prefix.size(), prefix) == 0;
}

// Files the build read that the key does not already cover: the user's own headers.
std::vector<cache::Dependency> TrackedDependencies(const std::vector<std::string>& paths,
                                                   const std::string& build_dir,
                                                   const LoadRequest& request,
                                                   const std::string& cuda_home) {
  std::vector<cache::Dependency> deps;
  std::string build_prefix = AbsolutePath(build_dir) + "/";
  for (const std::string& path : paths) {
    if (StartsWith(path, build_prefix) || StartsWith(path, request.jaxcc_include_dir + "/") ||
        StartsWith(path, request.ffi_include_dir + "/") ||
        (!cuda_home.empty() && StartsWith(AbsolutePath(path), AbsolutePath(cuda_home) + "/"))) {
      continue;
    }
    FileInfo info = StatPath(path);
    auto digest = Sha256FileHex(path);
    if (!info.exists || !digest.ok()) continue;
    deps.push_back({path, info.size, info.mtime_ns, *digest});
  }
  return deps;
}

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

std::optional<Result<LoadedModule>> LoadFromCache(const cache::CacheDir& cache,
                                                  const std::string& name, const std::string& key,
                                                  const std::vector<FunctionSpec>& specs,
                                                  cache::LookupMiss* miss) {
  auto entry = cache.Lookup(name, key, miss);
  if (!entry) return std::nullopt;
  FaultPoint("load");
  auto module = LoadEntry(*entry, specs);
  if (module.ok()) {
    module->cache_hit = true;
    cache::MarkUsed(entry->dir);
  }
  return module;
}

using GeneratedFiles = std::vector<std::pair<std::string, std::string>>;

Result<build::BuildOutcome> RunBuildIn(const std::string& build_dir, const LoadRequest& request,
                                       const build::BuildGraph& graph, GeneratedFiles files,
                                       const std::string& ninja) {
  if (!request.build_directory.empty()) {
    // The user's directory: a failure to create it is theirs to fix, not a cache problem.
    Status made = MakeDirs(build_dir, 0700);
    if (!made.ok()) {
      return MakeError(ErrorKind::kSpec,
                       "build_directory " + build_dir + " cannot be used: " + made.error().message +
                           "; pass a directory this process can create and write, or leave "
                           "build_directory unset to build in the cache");
    }
  }
  build::BuildRequest build_request;
  build_request.build_dir = build_dir;
  build_request.files = std::move(files);
  build_request.graph = graph;
  build_request.ninja = ninja;
  build_request.workers = request.ninja_workers;
  build_request.timeout_seconds = request.build_timeout_seconds;
  build_request.on_output = request.on_output;
  build_request.verbose = request.verbose;
  FaultPoint("build");
  auto outcome = build::RunBuild(build_request);
  if (!outcome.ok()) {
    Error error = outcome.error();
    if (error.kind == ErrorKind::kCompile) {
      error.message = ClipLongLines(AddSourceExcerpt(error.message, request.sources));
    }
    return error;
  }
  return outcome;
}

void FillBuildDetails(LoadedModule& module, const build::BuildOutcome& outcome,
                      const std::string& miss_reason) {
  module.cache_hit = false;
  module.miss_reason = miss_reason;
  module.build_seconds = outcome.seconds;
  module.build_log = outcome.log;
}

// Locks and build directories live in the cache root, so these are the failures that mean "this
// cache cannot be written" rather than "this code does not build".
bool IsCacheWriteFailure(const Error& error) { return error.kind == ErrorKind::kCache; }

bool MentionsFullDisk(const Error& error) {
  return error.message.find("No space left on device") != std::string::npos ||
         error.message.find("Disk quota exceeded") != std::string::npos;
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

// The fallback when the cache cannot take a build: compile in a fresh directory under $TMPDIR,
// load from there, remove it. Nothing is published, so nothing half-written can be left behind.
Result<LoadedModule> BuildUncached(const LoadRequest& request, const BuildPlan& plan,
                                   const std::vector<FunctionSpec>& specs, const std::string& key,
                                   const Error& cache_failure) {
  auto ninja = toolchain::FindNinja(request.ninja_search_dirs);
  if (!ninja.ok()) return ninja.error();
  auto temp_dir = MakeTempDir("jaxcc-" + request.name);
  if (!temp_dir.ok()) {
    return MakeError(ErrorKind::kCache, cache_failure.message +
                                            "\nBuilding in a private temporary directory "
                                            "failed as well: " +
                                            temp_dir.error().message);
  }
  std::string build_dir =
      request.build_directory.empty() ? *temp_dir : AbsolutePath(request.build_directory);
  auto outcome =
      RunBuildIn(build_dir, request, plan.graph, GenerateSources(request, specs), *ninja);
  if (!outcome.ok()) {
    (void)RemoveTree(*temp_dir);
    Error error = outcome.error();
    if (MentionsFullDisk(error)) {
      error.kind = ErrorKind::kCache;
      error.message = "no space left to build module '" + request.name +
                      "', neither in the cache (" + cache_failure.message +
                      ") nor in $TMPDIR. Free disk space or point $JAXCC_CACHE_DIR and $TMPDIR "
                      "at a disk with room.\n" +
                      error.message;
    }
    return error;
  }
  auto module = LoadPrivateLibrary(outcome->library_path, specs, key);
  (void)RemoveTree(*temp_dir);
  if (!module.ok()) return module.error();
  FillBuildDetails(*module, *outcome, "uncached");
  module->warning =
      "not cached, built in a private temporary directory instead: " + cache_failure.message;
  return module;
}

// The wrapper unit depends on the signatures, flags, compiler and headers, not on kernel bodies,
// and it is the slowest unit to compile: when an earlier build (of any module) compiled the same
// wrapper, its object is copied in and linked instead (cache/object_cache.h).
struct WrapperReuse {
  std::string key;
  std::string object_path;  ///< ffi_wrapper.o in the build directory
  bool reused = false;
};

WrapperReuse ReuseWrapperObject(const cache::ObjectCache& objects, const LoadRequest& request,
                                const GeneratedFiles& files, const std::string& compiler_version,
                                const std::string& header_digest, const std::string& build_dir,
                                build::BuildGraph& graph) {
  WrapperReuse reuse;
  auto step = std::find_if(graph.compiles.begin(), graph.compiles.end(),
                           [](const build::CompileStep& s) { return s.source == kWrapperSource; });
  auto text = std::find_if(files.begin(), files.end(),
                           [](const auto& file) { return file.first == kWrapperSource; });
  if (step == graph.compiles.end() || text == files.end()) return reuse;
  reuse.key = cache::ObjectCache::Key(text->second, step->command, compiler_version, header_digest);
  reuse.object_path = JoinPath(build_dir, step->object);
  if (request.force_rebuild || !objects.Fetch(reuse.key, reuse.object_path)) return reuse;
  graph.prebuilt_objects.push_back(step->object);
  graph.compiles.erase(step);
  reuse.reused = true;
  return reuse;
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

}  // namespace

Status ValidateModuleName(const std::string& name, const char* what) {
  bool ok = !name.empty() && name.size() <= 128 &&
            (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  }
  if (ok && name.find("..") == std::string::npos) return OkStatus();
  return MakeError(ErrorKind::kSpec,
                   std::string("invalid ") + what + " '" + name +
                       "': it names files and FFI targets, so it must start with a letter or '_' "
                       "and contain only letters, digits, '_', '-' and '.' (at most 128 "
                       "characters). Pick a name such as 'my_kernels'.");
}

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

Result<LoadedModule> LoadModuleInner(const LoadRequest& request, std::vector<std::string>& archs,
                                     std::string& archs_source) {
  JAXCC_RETURN_IF_ERROR(ValidateModuleName(request.name, "module name"));
  if (request.platform != "cpu" && request.platform != "cuda") {
    return MakeError(ErrorKind::kSpec,
                     "platform must be \"cpu\" or \"cuda\", got \"" + request.platform + "\"");
  }
  if (request.optimization_level < 0 || request.optimization_level > 3) {
    return MakeError(ErrorKind::kSpec, "optimization_level must be 0, 1, 2 or 3 (got " +
                                           std::to_string(request.optimization_level) + ")");
  }
  if (auto cap = CacheMaxBytes(); !cap.ok()) return cap.error();
  // Spec and signature errors come first: they need no toolchain.
  auto specs = signature::ResolveSpecs(request.sources, request.functions);
  if (!specs.ok()) return specs.error();

  JAXCC_RETURN_IF_ERROR(CheckCacheRootIsPrivate(request.cache_dir));
  cache::CacheDir cache(request.cache_dir);
  std::string memo_dir = JoinPath(request.cache_dir, ".memo");
  std::optional<CudaToolchain> cuda;
  if (request.platform == "cuda") {
    // Architecture spelling errors are the user's and need no toolchain: report them first.
    auto resolved = toolchain::ResolveCudaArchs(request.cuda_archs, request.detected_cuda_archs,
                                                toolchain::QueryGpusWithNvidiaSmi);
    if (!resolved.ok()) return resolved.error();
    auto nvcc = toolchain::FindNvcc(request.nvcc_search_dirs, JoinPath(memo_dir, "nvcc.json"));
    if (!nvcc.ok()) return nvcc.error();
    cuda = CudaToolchain{*nvcc, resolved->archs};
    archs = resolved->archs;
    archs_source = resolved->source;
  }
  auto compiler = toolchain::FindHostCompiler(JoinPath(memo_dir, "toolchain.json"));
  if (!compiler.ok()) return compiler.error();
  auto header_digest = cache::DigestDirectories(
      {JoinPath(request.ffi_include_dir, "xla/ffi/api"), request.jaxcc_include_dir},
      JoinPath(memo_dir, "headers.json"));
  if (!header_digest.ok()) return header_digest.error();

  BuildPlan plan = MakeBuildPlan(request, *compiler, cuda ? &*cuda : nullptr);
  cache::KeyInputs key_inputs;
  key_inputs.jaxcc_version = JAXCC_VERSION;
  key_inputs.platform = request.platform;
  key_inputs.module_name = request.name;
  for (const auto& source : request.sources)
    key_inputs.sources.emplace_back(source.label, source.text);
  key_inputs.specs = CanonicalSpecs(*specs);
  key_inputs.compile_flags = plan.user_flags;
  key_inputs.compile_flags.insert(key_inputs.compile_flags.end(), plan.wrapper_flags.begin(),
                                  plan.wrapper_flags.end());
  key_inputs.compile_flags.insert(key_inputs.compile_flags.end(), plan.cuda_flags.begin(),
                                  plan.cuda_flags.end());
  if (cuda) {
    key_inputs.toolchain = {"nvcc", cuda->nvcc.path, cuda->nvcc.version};
    key_inputs.codegen_options = {std::string("allow_cuda_graph=") +
                                  (request.allow_cuda_graph ? "1" : "0")};
  }
  key_inputs.link_flags = plan.graph.link_command;
  key_inputs.link_flags.insert(key_inputs.link_flags.end(), plan.graph.link_flags.begin(),
                               plan.graph.link_flags.end());
  key_inputs.include_paths = request.extra_include_paths;
  key_inputs.compiler_path = compiler->path;
  key_inputs.compiler_version = compiler->version;
  key_inputs.header_digest = *header_digest;
  std::string key = cache::ComputeKey(key_inputs);

  cache::LookupMiss miss = cache::LookupMiss::kAbsent;
  if (!request.force_rebuild) {
    if (auto hit = LoadFromCache(cache, request.name, key, *specs, &miss)) return std::move(*hit);
    if (miss == cache::LookupMiss::kUnsafe) {
      Status trusted = cache.CheckEntryIsTrusted(request.name, key);
      if (!trusted.ok()) return trusted.error();
    }
  }

  // Miss: one builder per (name, key) across threads and processes. A cache that cannot be
  // written (read-only, full, someone else's disk quota) still gets the user a working module,
  // built privately and not cached.
  auto lock = cache::FileLock::Acquire(cache.LockPath(request.name, key),
                                       request.build_timeout_seconds + 60);
  if (!lock.ok()) {
    if (!IsCacheWriteFailure(lock.error())) return lock.error();
    return BuildUncached(request, plan, *specs, key, lock.error());
  }
  if (!request.force_rebuild) {
    // Another process may have published while this one waited for the lock.
    if (auto hit = LoadFromCache(cache, request.name, key, *specs, &miss)) return std::move(*hit);
  }
  // Build directories of processes that died mid-build are nobody's; sweep them while here.
  cache.RemoveOrphans(std::nullopt, /*failed_builds_too=*/false);

  auto ninja = toolchain::FindNinja(request.ninja_search_dirs);
  if (!ninja.ok()) return ninja.error();
  bool private_build_dir = request.build_directory.empty();
  std::string build_dir = AbsolutePath(request.build_directory);
  if (private_build_dir) {
    auto made = cache.MakeBuildDir(request.name);
    if (!made.ok()) return BuildUncached(request, plan, *specs, key, made.error());
    build_dir = *made;
  }

  GeneratedFiles files = GenerateSources(request, *specs);
  build::BuildGraph graph = plan.graph;
  cache::ObjectCache objects(request.cache_dir);
  WrapperReuse wrapper;
  if (private_build_dir) {
    // A user's build_directory is incremental already: ninja skips an unchanged wrapper there.
    wrapper = ReuseWrapperObject(objects, request, files, compiler->version, *header_digest,
                                 build_dir, graph);
  }
  auto outcome = RunBuildIn(build_dir, request, graph, std::move(files), *ninja);
  if (outcome.ok() && private_build_dir && !wrapper.reused && !wrapper.key.empty()) {
    objects.Store(wrapper.key, wrapper.object_path);
  }
  if (!outcome.ok()) {
    Error error = outcome.error();
    if (private_build_dir && MentionsFullDisk(error)) {
      (void)RemoveTree(build_dir);
      return BuildUncached(request, plan, *specs, key, error);
    }
    if (private_build_dir) {
      std::string kept = KeepFailedBuild(cache, build_dir, request.name, key);
      if (!error.log_path.empty()) error.log_path = JoinPath(kept, "build.log");
    }
    return error;
  }

  cache::Manifest manifest;
  manifest.key = key;
  manifest.module_name = request.name;
  manifest.jaxcc_version = JAXCC_VERSION;
  for (const FunctionSpec& spec : *specs) manifest.function_names.push_back(spec.name);
  // The CUDA toolkit's headers are covered by nvcc's path and version in the key.
  manifest.dependencies = TrackedDependencies(outcome->dependencies, build_dir, request,
                                              cuda ? cuda->nvcc.cuda_home : "");
  manifest.inputs_json = cache::DescribeKeyInputs(key_inputs);
  manifest.build_seconds = outcome->seconds;
  manifest.created_unix = static_cast<std::int64_t>(std::time(nullptr));
  auto entry = cache.Publish(request.name, key, outcome->library_path, std::move(manifest));
  if (!entry.ok()) {
    // Publish wrote no manifest, so no half entry is visible; run the library from here.
    auto module = LoadPrivateLibrary(outcome->library_path, *specs, key);
    if (private_build_dir) (void)RemoveTree(build_dir);
    if (!module.ok()) return module.error();
    module->warning = "not cached: " + entry.error().message;
    FillBuildDetails(*module, *outcome, "uncached");
    return module;
  }
  if (private_build_dir) (void)RemoveTree(build_dir);

  auto module = LoadEntry(*entry, *specs);
  if (!module.ok()) return module.error();
  FillBuildDetails(*module, *outcome, request.force_rebuild ? "forced" : MissName(miss));
  module->wrapper_reused = wrapper.reused;
  EnforceSizeCap(cache, entry->dir, *module);
  return module;
}

}  // namespace

Result<LoadedModule> LoadModule(const LoadRequest& request) {
  std::vector<std::string> archs;
  std::string archs_source;
  auto module = LoadModuleInner(request, archs, archs_source);
  if (module.ok()) {
    module->cuda_archs = std::move(archs);
    module->cuda_archs_source = std::move(archs_source);
  }
  return module;
}

}  // namespace jaxcc::pipeline
