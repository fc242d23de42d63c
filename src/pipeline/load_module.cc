#include "pipeline/load_module.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "argspec/arg_spec.h"
#include "build/builder.h"
#include "cache/cache_dir.h"
#include "cache/cache_key.h"
#include "cache/file_lock.h"
#include "cache/header_digest.h"
#include "codegen/ffi_wrapper.h"
#include "loader/library.h"
#include "pipeline/build_plan.h"
#include "pipeline/source_excerpt.h"
#include "toolchain/host_compiler.h"
#include "toolchain/ninja.h"
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
                                                   const LoadRequest& request) {
  std::vector<cache::Dependency> deps;
  std::string build_prefix = AbsolutePath(build_dir) + "/";
  for (const std::string& path : paths) {
    if (StartsWith(path, build_prefix) || StartsWith(path, request.jaxcc_include_dir + "/") ||
        StartsWith(path, request.ffi_include_dir + "/")) {
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
  FileInfo info = StatPath(root);
  if (!info.exists) return OkStatus();
  if (info.owner != ::geteuid()) {
    return MakeError(ErrorKind::kCache,
                     "refusing to use the cache directory " + root + ": it belongs to uid " +
                         std::to_string(info.owner) + ", not to this user (uid " +
                         std::to_string(::geteuid()) +
                         "). Libraries from it would run in this process. Use a directory of your "
                         "own: jaxcc.set_cache_dir(...) or JAXCC_CACHE_DIR.");
  }
  if ((info.mode & 022) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.mode & 07777));
    return MakeError(ErrorKind::kCache,
                     "refusing to use the cache directory " + root + ": its mode " + mode +
                         " lets other users write to it, so they could plant a library this "
                         "process would load. Fix it with: chmod go-w " + root);
  }
  return OkStatus();
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

Result<LoadedModule> LoadModule(const LoadRequest& request) {
  JAXCC_RETURN_IF_ERROR(ValidateModuleName(request.name, "module name"));
  if (request.optimization_level < 0 || request.optimization_level > 3) {
    return MakeError(ErrorKind::kSpec, "optimization_level must be 0, 1, 2 or 3 (got " +
                                           std::to_string(request.optimization_level) + ")");
  }
  // Spec and signature errors come first: they need no toolchain.
  auto specs = signature::ResolveSpecs(request.sources, request.functions);
  if (!specs.ok()) return specs.error();

  JAXCC_RETURN_IF_ERROR(CheckCacheRootIsPrivate(request.cache_dir));
  cache::CacheDir cache(request.cache_dir);
  std::string memo_dir = JoinPath(request.cache_dir, ".memo");
  auto compiler = toolchain::FindHostCompiler(JoinPath(memo_dir, "toolchain.json"));
  if (!compiler.ok()) return compiler.error();
  auto header_digest = cache::DigestDirectories(
      {JoinPath(request.ffi_include_dir, "xla/ffi/api"), request.jaxcc_include_dir},
      JoinPath(memo_dir, "headers.json"));
  if (!header_digest.ok()) return header_digest.error();

  BuildPlan plan = MakeBuildPlan(request, *compiler);
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
    if (auto entry = cache.Lookup(request.name, key, &miss)) {
      auto module = LoadEntry(*entry, *specs);
      if (module.ok()) module->cache_hit = true;
      return module;
    }
  }

  // Miss: one builder per (name, key) across threads and processes.
  auto lock = cache::FileLock::Acquire(cache.LockPath(request.name, key),
                                       request.build_timeout_seconds + 60);
  if (!lock.ok()) return lock.error();
  if (!request.force_rebuild) {
    // Another process may have published while this one waited for the lock.
    if (auto entry = cache.Lookup(request.name, key, &miss)) {
      auto module = LoadEntry(*entry, *specs);
      if (module.ok()) module->cache_hit = true;
      return module;
    }
  }

  auto ninja = toolchain::FindNinja(request.ninja_search_dirs);
  if (!ninja.ok()) return ninja.error();
  bool private_build_dir = request.build_directory.empty();
  std::string build_dir = request.build_directory;
  if (private_build_dir) {
    auto made = cache.MakeBuildDir(request.name);
    if (!made.ok()) return made.error();
    build_dir = *made;
  } else {
    build_dir = AbsolutePath(build_dir);
  }

  build::BuildRequest build_request;
  build_request.build_dir = build_dir;
  build_request.files = GenerateSources(request, *specs);
  build_request.graph = plan.graph;
  build_request.ninja = *ninja;
  build_request.workers = request.ninja_workers;
  build_request.timeout_seconds = request.build_timeout_seconds;
  build_request.on_output = request.on_output;
  build_request.verbose = request.verbose;
  auto outcome = build::RunBuild(build_request);
  if (!outcome.ok()) {
    Error error = outcome.error();
    if (error.kind == ErrorKind::kCompile) {
      error.message = AddSourceExcerpt(error.message, request.sources);
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
  manifest.dependencies = TrackedDependencies(outcome->dependencies, build_dir, request);
  manifest.inputs_json = cache::DescribeKeyInputs(key_inputs);
  manifest.build_seconds = outcome->seconds;
  manifest.created_unix = static_cast<std::int64_t>(std::time(nullptr));
  auto entry = cache.Publish(request.name, key, outcome->library_path, std::move(manifest));
  if (private_build_dir) (void)RemoveTree(build_dir);
  if (!entry.ok()) return entry.error();

  auto module = LoadEntry(*entry, *specs);
  if (!module.ok()) return module.error();
  module->cache_hit = false;
  module->miss_reason = request.force_rebuild ? "forced" : MissName(miss);
  module->build_seconds = outcome->seconds;
  module->build_log = outcome->log;
  return module;
}

}  // namespace jaxcc::pipeline
