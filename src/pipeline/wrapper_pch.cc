#include "pipeline/wrapper_pch.h"

#include <sys/stat.h>

#include <cstdio>

#include "cache/file_lock.h"
#include "cache/ownership.h"
#include "codegen/ffi_wrapper.h"
#include "util/fs.h"
#include "util/sha256.h"
#include "util/subprocess.h"

namespace jaxcc::pipeline {
namespace {

constexpr char kPrelude[] = "wrapper_prelude.h";
// Left when GCC could not build the prelude with these flags, so later builds do not try again
// (the fingerprint changes with the compiler, the flags or the headers; cache clear removes it).
constexpr char kFailed[] = "wrapper_prelude.failed";

std::string Fingerprint(const std::vector<std::string>& command, const std::string& toolchain,
                        const std::string& header_digest) {
  Sha256Builder hash;
  hash.UpdateField("jaxcc-wrapper-pch-1");
  hash.UpdateField(JAXCC_VERSION);
  hash.UpdateField(codegen::WrapperPrelude());
  hash.UpdateField(toolchain);
  hash.UpdateField(header_digest);
  hash.UpdateField(std::to_string(command.size()));
  for (const std::string& arg : command) hash.UpdateField(arg);
  return hash.FinishHex().substr(0, 32);
}

bool Trusted(const std::string& path) {
  return cache::CheckPrivatePath(path, "precompiled wrapper prelude", "").ok();
}

// GCC checks a PCH's compiler and options but not its bytes: a damaged file could fail or
// miscompile every wrapper. So its SHA-256, written once it was built, is checked before each use
// (about 20 ms for its 38 MB, against the ~0.35 s of parsing it saves).
bool Usable(const std::string& dir) {
  std::string gch = JoinPath(dir, std::string(kPrelude) + ".gch");
  if (!StatPath(gch).exists || !Trusted(dir) || !Trusted(gch) ||
      !Trusted(JoinPath(dir, kPrelude)) || !Trusted(gch + ".sha256")) {
    return false;
  }
  auto header = ReadFile(JoinPath(dir, kPrelude));
  auto recorded = ReadFile(gch + ".sha256");
  if (!header.ok() || *header != codegen::WrapperPrelude() || !recorded.ok()) return false;
  auto digest = Sha256FileHex(gch);
  return digest.ok() && *recorded == *digest;
}

// Under the lock: the header, then GCC's PCH of it written to a temporary name and renamed, so a
// reader sees a whole .gch or none.
bool Build(const std::string& dir, const std::vector<std::string>& command, double timeout) {
  if (!MakeDirs(dir, 0755).ok()) return false;
  // Temporary files of a builder that died before its rename (killed with its load): under the
  // lock no live builder writes here, and a compiler the dead one left running writes on into
  // the removed file.
  for (const std::string& name : ListDir(dir)) {
    if (name.find(".tmp-") != std::string::npos) std::remove(JoinPath(dir, name).c_str());
  }
  std::string header = JoinPath(dir, kPrelude);
  if (!WriteFileAtomic(header, codegen::WrapperPrelude()).ok()) return false;
  std::string gch = header + ".gch";
  std::string temp = gch + ".tmp-" + RandomHex(12);
  std::vector<std::string> argv = command;
  for (const char* arg : {"-x", "c++-header", header.c_str(), "-o", temp.c_str()}) {
    argv.push_back(arg);
  }
  ProcessOptions options;
  options.timeout_seconds = timeout;
  auto run = RunProcess(argv, options);
  // The trust check refuses a file others can write, whatever the umask made of it.
  if (!run.ok() || run->exit_code != 0 || ::chmod(temp.c_str(), 0644) != 0 ||
      std::rename(temp.c_str(), gch.c_str()) != 0) {
    std::remove(temp.c_str());
    if (run.ok() && !run->timed_out) (void)WriteFile(JoinPath(dir, kFailed), run->output);
    return false;
  }
  auto digest = Sha256FileHex(gch);
  return digest.ok() && WriteFileAtomic(gch + ".sha256", *digest).ok();
}

}  // namespace

bool IsGccVersion(const std::string& version) {
  if (version.find("clang") != std::string::npos) return false;
  return version.rfind("g++", 0) == 0 || version.rfind("c++", 0) == 0 ||
         version.find("(GCC)") != std::string::npos;
}

namespace {

std::string PchDir(const std::string& cache_dir, const std::vector<std::string>& command,
                   const std::string& toolchain_version, const std::string& header_digest) {
  return JoinPath(JoinPath(cache_dir, ".pch"),
                  Fingerprint(command, toolchain_version, header_digest));
}

}  // namespace

std::vector<std::string> WrapperPchFlags(const std::string& cache_dir,
                                         const std::vector<std::string>& wrapper_command,
                                         const std::string& compiler_version,
                                         const std::string& toolchain_version,
                                         const std::string& header_digest) {
  if (!IsGccVersion(compiler_version) || cache_dir.empty()) return {};
  std::string dir = PchDir(cache_dir, wrapper_command, toolchain_version, header_digest);
  if (!Usable(dir)) return {};
  return {"-isystem", dir, "-include", kPrelude};
}

bool BuildWrapperPch(const std::string& cache_dir, const std::vector<std::string>& wrapper_command,
                     const std::string& compiler_version, const std::string& toolchain_version,
                     const std::string& header_digest, double timeout_seconds) {
  if (!IsGccVersion(compiler_version) || cache_dir.empty()) return false;
  std::string dir = PchDir(cache_dir, wrapper_command, toolchain_version, header_digest);
  if (Usable(dir)) return true;
  if (StatPath(JoinPath(dir, kFailed)).exists) return false;
  if (!MakeDirs(JoinPath(cache_dir, ".pch"), 0755).ok()) return false;
  auto lock = cache::FileLock::Acquire(dir + ".lock", timeout_seconds + 60);
  if (!lock.ok()) return false;
  if (Usable(dir)) return true;  // another process built it while this one waited
  if (StatPath(JoinPath(dir, kFailed)).exists) return false;
  return Build(dir, wrapper_command, timeout_seconds) && Usable(dir);
}

}  // namespace jaxcc::pipeline
