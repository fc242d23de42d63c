#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>

#include "bundle/bundle.h"
#include "bundle/needed_libraries.h"
#include "pipeline/build_world.h"
#include "pipeline/flag_files.h"
#include "pipeline/load_module.h"
#include "toolchain/host_compiler.h"
#include "toolchain/native_target.h"
#include "toolchain/nvcc.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::bundle {
namespace {

// The PTX a CUDA build embeds: the highest architecture, without an "a" suffix
// (toolchain::GencodeFlags).
std::string PtxArch(const std::vector<std::string>& archs) {
  if (archs.empty()) return "";
  std::string last = archs.back();
  if (!last.empty() && last.back() == 'a') last.pop_back();
  return last;
}

// An existing out_dir is replaced only when it is empty or a bundle: never a user's other files.
Status CheckReplaceable(const std::string& out_dir) {
  FileInfo info = StatPath(out_dir);
  if (!info.exists) return OkStatus();
  std::vector<std::string> names = ListDir(out_dir);
  if (names.empty()) return OkStatus();
  // A manifest jaxcc cannot read (edited, from a newer jaxcc) still marks a bundle, and the
  // loader's fix for one is to rebuild it here.
  if (StatPath(JoinPath(out_dir, kManifestName)).exists) return OkStatus();
  return MakeError(ErrorKind::kBundle,
                   "--out " + out_dir + " exists and is not a jaxcc bundle (it has " +
                       std::to_string(names.size()) + " entries and no " + kManifestName +
                       "); give an empty or new directory, or an earlier bundle to replace");
}

}  // namespace

Result<BundleManifest> WriteBundle(const pipeline::LoadRequest& request,
                                   const pipeline::BuildEnvironment& env,
                                   const std::string& out_dir_text) {
  std::string out_dir = AbsolutePath(out_dir_text);
  JAXCC_RETURN_IF_ERROR(CheckReplaceable(out_dir));
  auto ffi = ReadFfiApiVersion(env.ffi_include_dir);
  if (!ffi.ok()) return ffi.error();
  // A bundle is a self-contained file set for other machines: its modules carry the static CUDA
  // runtime whatever $JAXCC_CUDA_RUNTIME says, since the folder a shared one's RUNPATH names is
  // this machine's (decision 136).
  pipeline::BuildEnvironment self_contained = env;
  self_contained.shared_cuda_runtime = false;
  auto loaded = pipeline::LoadModule(request, self_contained);
  if (!loaded.ok()) return loaded.error();
  if (!loaded->tune.empty()) {  // `jaxcc build` writes tuned bundles itself (decision 159b)
    return MakeError(ErrorKind::kSpec,
                     "module '" + request.name + "' declares tune= parameters (" +
                         loaded->tune[0].where +
                         "): one bundle holds one build; give each -D, or "
                         "bundle it with `jaxcc build`, which ships every variant");
  }

  std::string memo_dir = JoinPath(request.cache_dir, ".memo");
  BundleManifest m;
  m.module_name = request.name;
  m.key = loaded->key;
  m.jaxcc_version = JAXCC_VERSION;
  m.platform = request.platform;
  m.host = HostPlatform();
  m.ffi_api = *ffi;
  // Both are memoised by the build that just ran: no subprocess here.
  auto compiler = toolchain::FindHostCompiler(JoinPath(memo_dir, "toolchain.json"));
  if (compiler.ok()) m.compiler = compiler->path + " (" + compiler->version + ")";
  if (request.platform == "cuda") {
    m.cuda_archs = loaded->cuda_archs;
    m.ptx_arch = PtxArch(loaded->cuda_archs);
    auto nvcc = toolchain::FindNvcc(env.nvcc_search_dirs, JoinPath(memo_dir, "nvcc.json"));
    if (nvcc.ok()) m.nvcc = nvcc->path + " (" + nvcc->version + ")";
  }
  // A native CPU target (decision 177): what the compiler chose here, and the features it
  // enabled that this CPU reports (so the builder never refuses its own bundle), recorded for
  // the loader to check. Memoised by the build that just ran: no subprocess here.
  if (compiler.ok() && pipeline::AsksForNativeTarget(request)) {
    auto flags = pipeline::FilesNamedByFlags(pipeline::RequestFlags(request));
    std::vector<std::string> native = flags.ok()
                                          ? toolchain::NativeTargetFlags(flags->compiler_words)
                                          : std::vector<std::string>{};
    if (!native.empty()) {
      auto target = toolchain::ResolveNativeTarget(compiler->path, native);
      if (!target.ok()) return target.error();
      m.cpu_target = *target;
      const std::vector<std::string>& here = toolchain::HostCpuFeatures();
      for (const std::string& feature : toolchain::EnabledFeatures(*target)) {
        if (std::find(here.begin(), here.end(), feature) != here.end()) {
          m.cpu_features.push_back(feature);
        }
      }
    }
  }
  m.optimization_level = request.optimization_level;
  m.target_prefix = pipeline::TargetPrefix(request);
  m.vmap_method = request.vmap_method;
  m.functions = loaded->specs;
  m.created_unix = static_cast<std::int64_t>(std::time(nullptr));

  auto bytes = ReadFile(loaded->library_path);
  if (!bytes.ok()) return bytes.error();
  BundleFile library;
  library.path = "lib" + request.name + ".so";
  library.role = "library";
  library.size = static_cast<std::int64_t>(bytes->size());
  library.sha256 = Sha256Hex(*bytes);
  m.files.push_back(library);
  auto needed = ReadNeededLibraries(*bytes);
  if (!needed.ok()) return needed.error();
  m.needed_libraries = BundleDependencies(*needed);

  std::string parent = DirName(out_dir);
  JAXCC_RETURN_IF_ERROR(MakeDirs(parent));
  std::string staging = out_dir + ".tmp-" + RandomHex(12);
  JAXCC_RETURN_IF_ERROR(MakeDirs(staging));
  Status written = WriteFile(JoinPath(staging, library.path), *bytes);
  if (written.ok() && ::chmod(JoinPath(staging, library.path).c_str(), 0755) != 0) {
    written = MakeError(ErrorKind::kIo, "cannot make the bundle's library executable");
  }
  if (written.ok()) written = WriteFile(JoinPath(staging, kManifestName), BundleManifestToJson(m));
  if (written.ok() && StatPath(out_dir).exists) written = RemoveTree(out_dir);
  if (written.ok() && ::rename(staging.c_str(), out_dir.c_str()) != 0) {
    written = MakeError(ErrorKind::kIo, "cannot move the bundle into " + out_dir);
  }
  if (!written.ok()) {
    (void)RemoveTree(staging);
    return written.error();
  }
  return m;
}

}  // namespace jaxcc::bundle
