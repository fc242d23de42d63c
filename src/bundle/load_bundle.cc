#include "bundle/bundle.h"
#include "bundle/needed_libraries.h"
#include "pipeline/cache_access.h"
#include "pipeline/sharding_rules.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::bundle {
namespace {

Error Refused(const std::string& dir, const std::string& what, const std::string& fix) {
  return MakeError(ErrorKind::kBundle, "bundle " + dir + ": " + what + ". " + fix +
                                           " Nothing was loaded from this bundle.");
}

const char* kRebuild = "Rebuild it with `jaxcc build` (or reinstall the package that ships it).";

// Size first (a truncated or grown file is named as such), then the SHA-256 of every byte.
Status VerifyFile(const std::string& dir, const BundleFile& file) {
  std::string path = JoinPath(dir, file.path);
  FileInfo info = StatPath(path);
  if (!info.exists) return Refused(dir, "file " + file.path + " is missing", kRebuild);
  if (info.size != file.size) {
    return Refused(dir,
                   "file " + file.path + " has " + std::to_string(info.size) +
                       " bytes and the manifest says " + std::to_string(file.size) +
                       (info.size < file.size ? " (truncated)" : " (altered)"),
                   kRebuild);
  }
  auto digest = Sha256FileHex(path);
  if (!digest.ok()) return Refused(dir, "cannot read " + file.path, digest.error().message);
  if (*digest != file.sha256) {
    return Refused(dir,
                   "file " + file.path + " has SHA-256 " + digest->substr(0, 16) +
                       "..., and the manifest says " + file.sha256.substr(0, 16) + "... (altered)",
                   kRebuild);
  }
  return OkStatus();
}

// After the library's dlopen failed: the recorded libraries this machine's loader cannot find, each
// with where it usually comes from (the loader's own message names only the first). Checked only
// on failure, so a library found through the module's own RUNPATH is never reported.
Error NameMissingLibraries(const std::string& dir, const BundleManifest& manifest,
                           const Error& load_error) {
  std::vector<MissingLibrary> missing = FindMissingLibraries(manifest.needed_libraries);
  if (missing.empty()) return load_error;
  std::string what = "its library needs ";
  std::string fix;
  for (std::size_t i = 0; i < missing.size(); ++i) {
    what += (i == 0 ? "" : ", ") + missing[i].soname;
    fix += "Install " + missing[i].soname + ", " + ProviderHint(missing[i].soname) + ". ";
  }
  what += ", which this machine's dynamic loader cannot find (" + missing[0].loader_message + ")";
  return Refused(dir, what,
                 fix +
                     "A library installed outside the loader's search path needs its folder "
                     "on LD_LIBRARY_PATH.");
}

}  // namespace

Result<BundleManifest> ReadBundleManifest(const std::string& dir) {
  std::string path = JoinPath(dir, kManifestName);
  if (!StatPath(dir).is_dir) {
    return MakeError(ErrorKind::kBundle, "bundle " + dir +
                                             " is not a directory. Give the directory that "
                                             "`jaxcc build --out` wrote.");
  }
  auto text = ReadFile(path);
  if (!text.ok()) {
    return MakeError(ErrorKind::kBundle, std::string("bundle ") + dir + " has no readable " +
                                             kManifestName +
                                             ", so it is not a jaxcc bundle. Give the "
                                             "directory that `jaxcc build --out` wrote.");
  }
  return BundleManifestFromJson(*text, path);
}

Result<LoadedBundle> LoadBundle(const std::string& dir_text, const Runtime& runtime,
                                const std::map<std::string, std::string>& sharding) {
  std::string dir = AbsolutePath(dir_text);
  auto manifest = ReadBundleManifest(dir);
  if (!manifest.ok()) return manifest.error();
  JAXCC_RETURN_IF_ERROR(pipeline::ApplyShardingRules(sharding, &manifest->functions));
  if (manifest->platform != "cpu" && manifest->platform != "cuda") {
    return Refused(dir, "platform '" + manifest->platform + "' is not one this jaxcc loads",
                   "Build the bundle for cpu or cuda.");
  }
  JAXCC_RETURN_IF_ERROR(CheckCompatible(*manifest, runtime));
  const BundleFile* library = nullptr;
  for (const BundleFile& file : manifest->files) {
    JAXCC_RETURN_IF_ERROR(VerifyFile(dir, file));
    if (file.role == "library") library = &file;
  }
  if (library == nullptr) return Refused(dir, "the manifest lists no library", kRebuild);
  auto module = pipeline::LoadPrivateLibrary(JoinPath(dir, library->path), manifest->functions,
                                             manifest->key);
  if (!module.ok()) {
    // A handler the manifest names and the library lacks: the two disagree (an edited
    // manifest, files of two builds). The loader's own words are about a cache entry.
    const std::string& message = module.error().message;
    std::size_t at = message.find("has no symbol '");
    if (module.error().kind == ErrorKind::kLoad && at != std::string::npos) {
      std::size_t end = message.find('\'', at + 15);
      return Refused(dir,
                     "its library has no handler " + message.substr(at + 15, end - at - 15) +
                         " that the manifest names",
                     kRebuild);
    }
    return NameMissingLibraries(dir, *manifest, module.error());
  }
  module->entry_dir = dir;
  module->miss_reason = "bundle";
  module->cuda_archs = manifest->cuda_archs;
  module->cuda_archs_source = "the bundle's manifest";
  return LoadedBundle{std::move(*manifest), std::move(*module)};
}

}  // namespace jaxcc::bundle
