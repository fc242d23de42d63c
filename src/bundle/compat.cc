#include "bundle/compat.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "toolchain/cuda_arch.h"
#include "toolchain/native_target.h"
#include "util/fs.h"

namespace jaxcc::bundle {
namespace {

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

struct Arch {
  int number = 0;  ///< 90 for "90a"
  bool specific = false;
};

bool ParseArch(const std::string& normalized, Arch* arch) {
  std::string digits = normalized;
  arch->specific = !digits.empty() && digits.back() == 'a';
  if (arch->specific) digits.pop_back();
  if (digits.empty() || digits.size() > 4) return false;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  arch->number = std::stoi(digits);
  return true;
}

std::string Spell(const FfiApiVersion& v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

std::string Join(const std::vector<std::string>& items, const std::string& prefix) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + prefix + item;
  return out.empty() ? "none" : out;
}

// The number in `#define NAME <digits>`, or nothing. A plain scan rather than std::regex: the
// regex compiler reads the global locale's facets, and in a process whose libstdc++ differs from
// the one jaxcc was built against (seen with the CUDA jaxlib's Python) it crashed (decision 81).
std::optional<int> DefinedNumber(const std::string& text, const std::string& name) {
  const std::string directive = "#define";
  for (size_t at = text.find(directive); at != std::string::npos;
       at = text.find(directive, at + 1)) {
    size_t i = at + directive.size();
    auto skip_blanks = [&] {
      size_t start = i;
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
      return i > start;
    };
    if (!skip_blanks() || text.compare(i, name.size(), name) != 0) continue;
    i += name.size();
    if (!skip_blanks()) continue;
    size_t digits = i;
    int value = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - digits < 9) {
      value = value * 10 + (text[i++] - '0');
    }
    if (i > digits) return value;
  }
  return std::nullopt;
}

}  // namespace

Result<FfiApiVersion> ReadFfiApiVersion(const std::string& ffi_include_dir) {
  std::string header = JoinPath(ffi_include_dir, "xla/ffi/api/c_api.h");
  auto text = ReadFile(header);
  if (!text.ok()) {
    return MakeError(ErrorKind::kToolchain,
                     "cannot read the XLA FFI header " + header + " (" + text.error().message +
                         "); reinstall jaxlib, whose wheel ships it (jax.ffi.include_dir())");
  }
  std::optional<int> major = DefinedNumber(*text, "XLA_FFI_API_MAJOR");
  std::optional<int> minor = DefinedNumber(*text, "XLA_FFI_API_MINOR");
  if (!major || !minor) {
    return MakeError(ErrorKind::kToolchain,
                     header +
                         " defines no XLA_FFI_API_MAJOR/XLA_FFI_API_MINOR; this jaxlib is "
                         "not one jaxcc knows: install a jaxlib jaxcc supports");
  }
  return FfiApiVersion{*major, *minor};
}

std::string HostPlatform() {
  struct utsname names {};
  if (::uname(&names) != 0) return "unknown";
  return Lower(names.sysname) + "-" + Lower(names.machine);
}

std::vector<std::string> UncoveredGpus(const std::vector<std::string>& sass_archs,
                                       const std::string& ptx_arch,
                                       const std::vector<std::string>& gpu_archs) {
  std::vector<std::string> uncovered;
  Arch ptx;
  bool has_ptx = !ptx_arch.empty() && ParseArch(ptx_arch, &ptx);
  for (const std::string& gpu_text : gpu_archs) {
    auto normalized = toolchain::NormalizeArch(gpu_text);
    Arch gpu;
    if (!normalized.ok() || !ParseArch(*normalized, &gpu)) {
      uncovered.push_back(gpu_text);
      continue;
    }
    bool covered = has_ptx && ptx.number <= gpu.number;
    for (const std::string& sass_text : sass_archs) {
      Arch sass;
      if (covered || !ParseArch(sass_text, &sass)) continue;
      if (sass.specific) {
        covered = sass.number == gpu.number;
      } else {
        covered = sass.number / 10 == gpu.number / 10 && sass.number <= gpu.number;
      }
    }
    if (!covered) uncovered.push_back(*normalized);
  }
  return uncovered;
}

Status CheckCompatible(const BundleManifest& m, const Runtime& runtime) {
  std::string bundle = "bundle '" + m.module_name + "'";
  if (m.host != runtime.host) {
    return MakeError(ErrorKind::kBundle, bundle + " was built for " + m.host +
                                             ", and this machine is " + runtime.host +
                                             ". Build the bundle on (or for) " + runtime.host +
                                             " with `jaxcc build`, or ship one per platform.");
  }
  if (!m.cpu_features.empty()) {
    // Built with -march=native (or -mcpu=native): code for the builder's CPU, which dies with
    // SIGILL on a CPU without one of its features. Refused here, naming both sides.
    const std::vector<std::string>& here =
        runtime.cpu_features.empty() ? toolchain::HostCpuFeatures() : runtime.cpu_features;
    std::vector<std::string> lacking;
    for (const std::string& feature : m.cpu_features) {
      if (std::find(here.begin(), here.end(), feature) == here.end()) lacking.push_back(feature);
    }
    if (!lacking.empty()) {
      std::string names;
      for (const std::string& feature : lacking) names += (names.empty() ? "" : ", ") + feature;
      return MakeError(ErrorKind::kBundle,
                       bundle + " was built with a native CPU target (" + m.cpu_target +
                           ") for a CPU with " + names +
                           ", which this CPU lacks. Rebuild it "
                           "with a target every machine it goes to has (e.g. -march=x86-64-v2 "
                           "instead of -march=native), or on this machine.");
    }
  }
  bool same_major = m.ffi_api.major == runtime.ffi_api.major;
  if (!same_major || m.ffi_api.minor > runtime.ffi_api.minor) {
    return MakeError(
        ErrorKind::kBundle,
        bundle + " was built against XLA FFI API " + Spell(m.ffi_api) +
            ", and this jaxlib provides XLA FFI API " + Spell(runtime.ffi_api) +
            " (a bundle needs the same major version and a minor version no newer than the "
            "runtime's). " +
            (same_major ? "Upgrade jax/jaxlib here, or rebuild the bundle with `jaxcc build` "
                          "against this jaxlib."
                        : "Rebuild the bundle with `jaxcc build` against a jaxlib with XLA FFI "
                          "API " +
                              std::to_string(runtime.ffi_api.major) + ".x."));
  }
  if (m.platform == "cuda") {
    auto uncovered = UncoveredGpus(m.cuda_archs, m.ptx_arch, runtime.gpu_archs);
    if (!uncovered.empty()) {
      return MakeError(ErrorKind::kBundle,
                       bundle + " has code for " + Join(m.cuda_archs, "sm_") + " (PTX " +
                           (m.ptx_arch.empty() ? "none" : "compute_" + m.ptx_arch) +
                           "), which cannot run on this machine's GPU " + Join(uncovered, "sm_") +
                           ". Rebuild it with `jaxcc build --cuda-arch` " + "naming sm_" +
                           uncovered.front() + " too.");
    }
  }
  return OkStatus();
}

}  // namespace jaxcc::bundle
