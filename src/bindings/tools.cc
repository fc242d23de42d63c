#include "bindings/tools.h"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bindings/raise_error.h"
#include "cache/ownership.h"
#include "toolchain/cuda_runtime.h"
#include "toolchain/host_compiler.h"
#include "toolchain/linker.h"
#include "toolchain/ninja.h"
#include "toolchain/nvcc.h"
#include "toolchain/version_memo.h"
#include "util/fs.h"

namespace nb = nanobind;

namespace jaxcc::bindings {
namespace {

/// A tool as found: where, which version, and by which rule of the search order.
struct Tool {
  std::string path;
  std::string version;
  std::string found_by;
};

}  // namespace

void BindTools(nb::module_& m) {
  nb::class_<Tool>(m, "Tool", "A tool as the core finds it.")
      .def_ro("path", &Tool::path)
      .def_ro("version", &Tool::version)
      .def_ro("found_by", &Tool::found_by);
  m.def(
      "find_host_compiler",
      [](const std::string& memo_path) {
        auto found = toolchain::FindHostCompiler(memo_path);
        if (!found.ok()) RaiseError(found.error());
        return Tool{found->path, found->version, found->found_by};
      },
      nb::arg("memo_path") = "", "The host compiler builds use ($CXX, g++, c++, clang++).");
  m.def(
      "find_linker",
      [](const std::string& memo_path) {
        // The host compiler's own choice: the linker is probed by linking with that compiler.
        auto found = toolchain::FindHostCompiler(memo_path);
        if (!found.ok()) RaiseError(found.error());
        return Tool{found->linker.name, found->linker.version, found->linker.found_by};
      },
      nb::arg("memo_path") = "",
      "The linker CPU modules' links ask the compiler for ($JAXCC_LINKER; gold, lld, mold, or "
      "the compiler's own, 'system'); `path` is its name.");
  m.def(
      "find_nvcc",
      [](const std::vector<std::string>& wheel_dirs, const std::string& memo_path) {
        auto found = toolchain::FindNvcc(wheel_dirs, memo_path);
        if (!found.ok()) RaiseError(found.error());
        return Tool{found->path, found->version, found->found_by};
      },
      nb::arg("wheel_dirs"), nb::arg("memo_path") = "", "The nvcc CUDA builds use.");
  m.def(
      "find_ninja",
      [](const std::vector<std::string>& dirs) {
        auto found = toolchain::FindNinja(dirs);
        if (!found.ok()) RaiseError(found.error());
        return *found;
      },
      nb::arg("search_dirs"), "The ninja builds run ($JAXCC_NINJA, the given dirs, PATH).");
  m.def(
      "probe_version",
      [](const std::string& path) {
        auto version = toolchain::ProbeVersion(path, "", toolchain::FirstLineOf);
        if (!version.ok()) RaiseError(version.error());
        return *version;
      },
      nb::arg("path"), "The first line of `<path> --version`.");
  m.def(
      "check_private_path",
      [](const std::string& path) {
        Status ok = cache::CheckPrivatePath(
            path, "the cache directory",
            "Use a directory of your own: jaxcc.set_cache_dir(...) or $JAXCC_CACHE_DIR.");
        if (!ok.ok()) RaiseError(ok.error());
      },
      nb::arg("path"), "CacheError unless `path` is missing or private to this user.");
  m.def(
      "cuda_runtime_choice",
      [](const std::vector<std::string>& runtime_dirs, const std::string& nvcc_version) {
        auto shared = toolchain::SharedCudaRuntimeFromEnvironment();
        if (!shared.ok()) RaiseError(shared.error());
        std::string wheel =
            *shared ? toolchain::FindWheelCudaRuntime(runtime_dirs, nvcc_version) : "";
        return std::make_pair(*shared, wheel);
      },
      nb::arg("runtime_dirs"), nb::arg("nvcc_version"),
      "(shared asked for, the wheel runtime a CUDA module would link or '') under "
      "$JAXCC_CUDA_RUNTIME (SpecError when malformed).");
  m.def(
      "mtimes_ns",
      [](const std::vector<std::string>& paths) {
        std::vector<std::int64_t> mtimes;
        mtimes.reserve(paths.size());
        for (const std::string& path : paths) {
          FileInfo info = StatPath(path);
          mtimes.push_back(info.exists ? info.mtime_ns : -1);
        }
        return mtimes;
      },
      nb::arg("paths"),
      "stat(2)'s mtime in ns of each path, -1 where there is none: a memo's validity check costs "
      "one crossing, not one os.stat object a path.");
}

}  // namespace jaxcc::bindings
