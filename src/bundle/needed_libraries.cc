#include "bundle/needed_libraries.h"

#include <dlfcn.h>
#include <elf.h>

#include <cstdint>
#include <cstring>
#include <utility>

namespace jaxcc::bundle {
namespace {

// Read when a bundle is written, from the module's library in the cache (write_bundle.cc): a
// damaged cache entry, which a second `jaxcc build` would only meet again (decision 254).
Error NotElf(const std::string& what) {
  return MakeError(
      ErrorKind::kBundle,
      "the module's library in the cache is not a readable 64-bit ELF shared "
      "object: " +
          what +
          ". The cache entry is damaged: clear it with `jaxcc cache clear <module>` (or "
          "jaxcc.clear_cache()) and build the bundle again.");
}

// A struct of type T at byte `offset` of `elf`, copied out (the bytes need not be aligned), or
// false when it would run past the end.
template <typename T>
bool ReadAt(std::string_view elf, std::uint64_t offset, T* out) {
  if (offset > elf.size() || elf.size() - offset < sizeof(T)) return false;
  std::memcpy(out, elf.data() + offset, sizeof(T));
  return true;
}

bool StartsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

Result<std::vector<std::string>> ReadNeededLibraries(std::string_view elf) {
  Elf64_Ehdr header;
  if (!ReadAt(elf, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    return NotElf("no ELF header");
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    return NotElf("not 64-bit little-endian");
  }
  if (header.e_shentsize != sizeof(Elf64_Shdr)) return NotElf("unexpected section header size");
  std::vector<std::string> needed;
  for (std::uint64_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    if (!ReadAt(elf, header.e_shoff + i * sizeof(Elf64_Shdr), &section)) {
      return NotElf("a section header lies past the end of the file");
    }
    if (section.sh_type != SHT_DYNAMIC) continue;
    Elf64_Shdr strings;
    if (section.sh_link >= header.e_shnum ||
        !ReadAt(elf, header.e_shoff + section.sh_link * sizeof(Elf64_Shdr), &strings)) {
      return NotElf("the dynamic section names no string table");
    }
    if (strings.sh_offset > elf.size() || elf.size() - strings.sh_offset < strings.sh_size) {
      return NotElf("the dynamic string table lies past the end of the file");
    }
    std::string_view table = elf.substr(strings.sh_offset, strings.sh_size);
    for (std::uint64_t at = 0; at + sizeof(Elf64_Dyn) <= section.sh_size; at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn entry;
      if (!ReadAt(elf, section.sh_offset + at, &entry)) {
        return NotElf("the dynamic section lies past the end of the file");
      }
      if (entry.d_tag == DT_NULL) break;
      if (entry.d_tag != DT_NEEDED) continue;
      if (entry.d_un.d_val >= table.size())
        return NotElf("a DT_NEEDED name lies outside its table");
      std::string_view rest = table.substr(entry.d_un.d_val);
      needed.emplace_back(rest.substr(0, rest.find('\0')));
    }
  }
  return needed;
}

bool IsSystemRuntimeLibrary(const std::string& soname) {
  for (const char* prefix : {"libc.so", "libm.so", "libstdc++.so", "libgcc_s.so", "ld-linux",
                             "libpthread.so", "libdl.so", "librt.so", "linux-vdso.so"}) {
    if (StartsWith(soname, prefix)) return true;
  }
  return false;
}

std::vector<std::string> BundleDependencies(const std::vector<std::string>& needed) {
  std::vector<std::string> kept;
  for (const std::string& soname : needed) {
    if (!IsSystemRuntimeLibrary(soname)) kept.push_back(soname);
  }
  return kept;
}

std::string ProviderHint(const std::string& soname) {
  // The libraries kernels link most often; pip wheels first where the CUDA world ships them.
  static const std::pair<const char*, const char*> kProviders[] = {
      {"libopenblas", "Debian/Ubuntu package libopenblas0 (or your distribution's OpenBLAS)"},
      {"libblas", "Debian/Ubuntu package libblas3"},
      {"liblapack", "Debian/Ubuntu package liblapack3"},
      {"libgomp", "Debian/Ubuntu package libgomp1 (GCC's OpenMP runtime)"},
      {"libomp", "Debian/Ubuntu package libomp5 (LLVM's OpenMP runtime)"},
      {"libtbb", "Debian/Ubuntu package libtbb12 (oneTBB)"},
      {"libcublasLt", "pip package nvidia-cublas (JAX's CUDA wheels bring it)"},
      {"libcublas", "pip package nvidia-cublas (JAX's CUDA wheels bring it)"},
      {"libcusparse", "pip package nvidia-cusparse (JAX's CUDA wheels bring it)"},
      {"libcufft", "pip package nvidia-cufft (JAX's CUDA wheels bring it)"},
      {"libcusolver", "pip package nvidia-cusolver (JAX's CUDA wheels bring it)"},
      {"libcurand", "pip package nvidia-curand"},
      {"libcudart", "pip package nvidia-cuda-runtime (JAX's CUDA wheels bring it)"},
      {"libnccl", "pip package nvidia-nccl (JAX's CUDA wheels bring it)"},
      {"libz.so", "Debian/Ubuntu package zlib1g"},
  };
  for (const auto& [prefix, provider] : kProviders) {
    if (StartsWith(soname, prefix)) return "usually provided by the " + std::string(provider);
  }
  return "find the package that provides it (Debian/Ubuntu: `apt-file search " + soname +
         "`), or build the bundle without it";
}

std::vector<MissingLibrary> FindMissingLibraries(const std::vector<std::string>& sonames) {
  std::vector<MissingLibrary> missing;
  for (const std::string& soname : sonames) {
    void* handle = ::dlopen(soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (handle != nullptr) {
      ::dlclose(handle);
      continue;
    }
    const char* message = ::dlerror();
    missing.push_back({soname, message != nullptr ? message : "not found"});
  }
  return missing;
}

}  // namespace jaxcc::bundle
