// The shared libraries a bundle's module needs beyond the C and C++ runtimes (issue 39 item 4):
// read from the library's ELF dynamic section when the bundle is written, recorded in the
// manifest, and named, with the package that usually provides each, when the target machine's
// dynamic loader cannot find one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace jaxcc::bundle {

/// The DT_NEEDED names of a 64-bit little-endian ELF shared library, in order. ErrorKind::kBundle
/// when `elf` is not such a file or its dynamic section points outside it (never reads past it).
Result<std::vector<std::string>> ReadNeededLibraries(std::string_view elf);

/// Whether `soname` is part of the C/C++ runtime every Linux machine with jaxlib has (libc, libm,
/// libstdc++, libgcc_s, the loader, libpthread/libdl/librt): a bundle does not record those.
bool IsSystemRuntimeLibrary(const std::string& soname);

/// The needed libraries a bundle records: `needed` without the system runtime ones.
std::vector<std::string> BundleDependencies(const std::vector<std::string>& needed);

/// Where `soname` usually comes from ("Debian/Ubuntu package libopenblas0, or your
/// distribution's OpenBLAS"), or a generic way to find out.
std::string ProviderHint(const std::string& soname);

/// Of `sonames`, the ones this process's dynamic loader cannot open (a dlopen with RTLD_LAZY, the
/// loader's own search: LD_LIBRARY_PATH, the ld.so cache, the default directories), each with
/// the loader's message.
struct MissingLibrary {
  std::string soname;
  std::string loader_message;
};
std::vector<MissingLibrary> FindMissingLibraries(const std::vector<std::string>& sonames);

}  // namespace jaxcc::bundle
