#include "pipeline/sanitizer_runtime.h"

#include <algorithm>

#include "util/fs.h"

namespace jaxcc::pipeline {
namespace {

// -fsanitize=address, -fsanitize=address,undefined, -fsanitize=undefined,address, ...
bool NamesAddress(const std::string& flag) {
  const std::string prefix = "-fsanitize=";
  if (flag.rfind(prefix, 0) != 0) return false;
  size_t begin = prefix.size();
  while (begin <= flag.size()) {
    size_t end = std::min(flag.find(',', begin), flag.size());
    if (flag.compare(begin, end - begin, "address") == 0) return true;
    begin = end + 1;
  }
  return false;
}

#if defined(__aarch64__)
constexpr const char* kClangRuntime = "libclang_rt.asan-aarch64.so";
#else
constexpr const char* kClangRuntime = "libclang_rt.asan-x86_64.so";
#endif

// The command that starts Python with a compiler's runtime first. libstdc++ is preloaded too:
// jaxlib throws C++ exceptions at start-up, which ASan's interceptor cannot forward otherwise.
std::string PreloadCommand(const std::string& driver, bool clang) {
  const std::string runtime = clang ? kClangRuntime : "libasan.so";
  return "LD_PRELOAD=\"$(" + driver + " -print-file-name=" + runtime + ") $(" + driver +
         " -print-file-name=libstdc++.so)\" ASAN_OPTIONS=detect_leaks=0 python your_script.py";
}

}  // namespace

bool AsksForAddressSanitizer(const LoadRequest& request) {
  for (const auto* flags : {&request.extra_cflags, &request.extra_ldflags}) {
    if (std::any_of(flags->begin(), flags->end(), NamesAddress)) return true;
  }
  return false;
}

std::vector<std::string> SanitizerLinkFlags(const LoadRequest& request,
                                            const toolchain::HostCompiler& compiler) {
  if (!toolchain::IsClangVersion(compiler.version)) return {};
  bool sanitized = false;
  for (const auto* flags : {&request.extra_cflags, &request.extra_ldflags}) {
    for (const std::string& flag : *flags) {
      if (flag == "-shared-libsan" || flag == "-static-libsan") return {};
      sanitized = sanitized || flag.rfind("-fsanitize=", 0) == 0;
    }
  }
  if (!sanitized) return {};
  return {"-shared-libsan"};
}

Status CheckAddressSanitizerRuntime(const LoadRequest& request, std::string_view maps,
                                    const toolchain::HostCompiler& compiler) {
  if (request.platform != "cpu" || !AsksForAddressSanitizer(request)) return OkStatus();
  const bool clang = toolchain::IsClangVersion(compiler.version);
  const bool gcc_runtime = maps.find("/libasan.so") != std::string_view::npos;
  const bool clang_runtime = maps.find("/libclang_rt.asan") != std::string_view::npos;
  if (clang ? clang_runtime : gcc_runtime) return OkStatus();
  const std::string where = "module '" + request.name + "'";
  const std::string command = "run the script as\n    " + PreloadCommand(compiler.path, clang);
  if (!gcc_runtime && !clang_runtime) {
    return MakeError(ErrorKind::kLoad,
                     where +
                         " is built with AddressSanitizer (-fsanitize=address), whose "
                         "runtime must be loaded before Python starts; this process has "
                         "none, and loading the library would end it; " +
                         command);
  }
  return MakeError(ErrorKind::kLoad,
                   where + " is built with AddressSanitizer by " + compiler.path + " (" +
                       (clang ? "Clang" : "GCC") + "), but this process preloaded " +
                       (clang ? "GCC's libasan" : "Clang's libclang_rt.asan") +
                       "; the two runtimes cannot share a process. Preload the runtime of the "
                       "compiler that builds the kernels ($CXX), or set $CXX to the other: " +
                       command);
}

std::string ReadOwnMaps() {
  auto text = ReadFile("/proc/self/maps");
  return text.ok() ? *text : std::string();
}

}  // namespace jaxcc::pipeline
