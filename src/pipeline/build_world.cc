#include "pipeline/build_world.h"

#include <algorithm>
#include <cstdlib>

#include "pipeline/tool_environment.h"
#include "toolchain/compiler_identity.h"
#include "toolchain/native_target.h"
#include "util/fs.h"

namespace jaxcc::pipeline {
namespace {

void AddDir(std::vector<std::string>& dirs, const std::string& dir) {
  if (dir.empty()) return;
  const std::string absolute = AbsolutePath(dir);
  if (std::find(dirs.begin(), dirs.end(), absolute) == dirs.end()) dirs.push_back(absolute);
}

std::vector<std::string> PathList(const char* variable) {
  std::vector<std::string> dirs;
  const char* value = std::getenv(variable);
  if (value == nullptr || *value == '\0') return dirs;
  const std::string list = value;
  for (size_t start = 0; start <= list.size();) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    const std::string dir = list.substr(start, end - start);
    dirs.push_back(dir.empty() ? "." : dir);
    start = end + 1;
  }
  return dirs;
}

}  // namespace

std::vector<std::string> RequestFlags(const LoadRequest& request) {
  std::vector<std::string> flags = request.extra_cflags;
  flags.insert(flags.end(), request.cuda.extra_cflags.begin(), request.cuda.extra_cflags.end());
  flags.insert(flags.end(), request.extra_ldflags.begin(), request.extra_ldflags.end());
  return flags;
}

bool AsksForNativeTarget(const LoadRequest& request) {
  for (const auto* flags :
       {&request.extra_cflags, &request.cuda.extra_cflags, &request.extra_ldflags}) {
    for (const std::string& flag : *flags) {
      if (flag.find("native") != std::string::npos || (!flag.empty() && flag[0] == '@')) {
        return true;  // a response file may hold one: the full path reads it
      }
    }
  }
  return false;
}

Result<BuildWorld> ReadBuildWorld(const LoadRequest& request,
                                  const toolchain::HostCompiler& compiler,
                                  const std::optional<CudaToolchain>& cuda,
                                  const std::string& memo_path) {
  BuildWorld world;
  world.environment = ToolEnvironment(request.platform);
  world.identities.push_back(compiler.path + "\t" + compiler.identity);
  if (cuda) {
    auto nvcc = toolchain::ExecutableDigest(cuda->nvcc.path, memo_path);
    if (!nvcc.ok()) return nvcc.error();
    world.identities.push_back(cuda->nvcc.path + "\t" + *nvcc);
  }
  auto files = FilesNamedByFlags(RequestFlags(request));
  if (!files.ok()) return files.error();
  world.flag_files = std::move(*files);

  std::vector<std::string> native = toolchain::NativeTargetFlags(world.flag_files.compiler_words);
  if (!native.empty()) {
    auto target = toolchain::ResolveNativeTarget(compiler.path, native);
    if (!target.ok()) return target.error();
    world.native_target = *target;
  }

  world.toolchain_dirs = toolchain::BuiltinSearchDirs(compiler.path, memo_path);
  for (const std::string& dir : request.source_dirs) AddDir(world.search_dirs, dir);
  for (const std::string& dir : request.extra_include_paths) AddDir(world.search_dirs, dir);
  for (const std::string& dir : world.flag_files.directories) AddDir(world.search_dirs, dir);
  for (const char* variable : {"CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH", "LIBRARY_PATH"}) {
    for (const std::string& dir : PathList(variable)) AddDir(world.search_dirs, dir);
  }
  // The compiler's include directories: a header installed there later (a package that
  // `__has_include(<tbb/tbb.h>)` was waiting for) changes the build. Its library directories
  // only matter to a link that searches them by -l name.
  const bool searches_libraries =
      std::any_of(world.flag_files.linker_words.begin(), world.flag_files.linker_words.end(),
                  [](const std::string& w) { return w.rfind("-l", 0) == 0; }) ||
      std::any_of(world.flag_files.compiler_words.begin(), world.flag_files.compiler_words.end(),
                  [](const std::string& w) { return w.rfind("-l", 0) == 0; });
  for (const std::string& dir : world.toolchain_dirs) {
    const bool is_include = dir.find("/include") != std::string::npos;
    if (is_include || searches_libraries) AddDir(world.search_dirs, dir);
  }
  return world;
}

std::vector<std::string> WorldKeyLines(const BuildWorld& world) {
  std::vector<std::string> lines;
  for (const std::string& value : world.environment) lines.push_back("env\t" + value);
  for (const std::string& identity : world.identities) lines.push_back("tool\t" + identity);
  if (!world.native_target.empty()) lines.push_back("native\t" + world.native_target);
  for (const std::string& file : world.flag_files.key) lines.push_back("file\t" + file);
  return lines;
}

}  // namespace jaxcc::pipeline
