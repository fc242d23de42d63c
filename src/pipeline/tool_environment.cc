#include "pipeline/tool_environment.h"

#include <cstdlib>

namespace jaxcc::pipeline {
namespace {

// From GCC's "Environment Variables Affecting GCC", Clang's driver documentation, GNU ld's and
// nvcc's manuals. Left out on purpose (decision 170): TMPDIR (only where temporaries go),
// LC_MESSAGES, GCC_COLORS, GCC_URLS, TERM_URLS, GCC_EXTRA_DIAGNOSTIC_OUTPUT, COLUMNS (the wording
// of diagnostics; a failed build is never cached), PATH and CXX (they choose the compiler, whose
// path, version line and content are keyed), LD_LIBRARY_PATH (the tools' own loader; what the
// link read is traced and stamped), CCACHE_*/DISTCC_* (a launcher's settings: it promises the
// compiler's own output), MOLD_JOBS and the like (parallelism), and the Darwin-only
// MACOSX_DEPLOYMENT_TARGET, SDKROOT, ZERO_AR_DATE and RC_DEBUG_OPTIONS.
constexpr const char* kHostVariables[] = {
    // The preprocessor's include search (GCC and Clang).
    "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH", "OBJCPLUS_INCLUDE_PATH",
    // The driver: where it finds its programs and the link's libraries.
    "GCC_EXEC_PREFIX", "COMPILER_PATH", "LIBRARY_PATH",
    // The preprocessor's dependency output, __DATE__/__TIME__, and a second compile's check.
    "DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES", "SOURCE_DATE_EPOCH", "GCC_COMPARE_DEBUG",
    // The locale's character classification: multibyte characters in sources and strings.
    "LANG", "LC_ALL", "LC_CTYPE",
    // Clang's driver: options edited into every command line, and its configuration files.
    "CCC_OVERRIDE_OPTIONS", "CLANG_NO_DEFAULT_CONFIG",
    // The linker: GNU ld's default emulation and BFD target, and the run path it records.
    "LDEMULATION", "GNUTARGET", "LD_RUN_PATH"};

constexpr const char* kCudaVariables[] = {
    // nvcc: flags added to every call, its default host compiler, and the toolkit it is from.
    "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN", "CUDA_HOME", "CUDA_PATH"};

}  // namespace

std::vector<const char*> ToolEnvironmentNames(const std::string& platform) {
  std::vector<const char*> names(std::begin(kHostVariables), std::end(kHostVariables));
  if (platform == "cuda")
    names.insert(names.end(), std::begin(kCudaVariables), std::end(kCudaVariables));
  return names;
}

std::vector<std::string> ToolEnvironment(const std::string& platform) {
  std::vector<std::string> values;
  for (const char* name : ToolEnvironmentNames(platform)) {
    const char* value = std::getenv(name);
    values.push_back(value == nullptr ? std::string(name) : std::string(name) + "=" + value);
  }
  return values;
}

std::vector<std::string> IncludePathVariableDirs() {
  std::vector<std::string> dirs;
  for (const char* name : {"CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    const std::string list = value;
    for (size_t start = 0; start <= list.size();) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      std::string dir = list.substr(start, end - start);
      dirs.push_back(dir.empty() ? "." : dir);
      start = end + 1;
    }
  }
  return dirs;
}

}  // namespace jaxcc::pipeline
