#include "loader/library.h"

#include <dlfcn.h>

#include <mutex>

#include "loader/crash_report.h"

namespace jaxcc::loader {

Result<LoadedLibrary> LoadLibrary(const std::string& path,
                                  const std::vector<std::string>& symbols) {
  // dlerror() state is per thread, but keep load + error read together anyway.
  static std::mutex dl_mutex;
  std::lock_guard<std::mutex> lock(dl_mutex);
  dlerror();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    std::string message =
        "cannot load the compiled library " + path + ": " + (why ? why : "unknown dlopen error");
    if (message.find("undefined symbol") != std::string::npos) {
      // The kernel's own symbols are checked when it is linked (-z defs): what is left
      // undefined here is a library's it links, which the link does not check, and an added
      // -l alone is dropped by --as-needed since the kernel names none of its symbols.
      message +=
          "\nHow to fix: a library loaded with the kernel uses a symbol that none of the "
          "libraries loaded with it define; add the library that defines it with "
          "extra_ldflags=['-Wl,--no-as-needed', '-l<name>'] (and -L<dir>), or relink the "
          "library that uses it against that one.";
    } else if (message.find("cannot open shared object") != std::string::npos) {
      message +=
          "\nHow to fix: a library it links against is not on the loader path; add its "
          "directory with extra_ldflags=['-Wl,-rpath,<dir>'].";
    }
    return MakeError(ErrorKind::kLoad, message);
  }
  LoadedLibrary library;
  library.path = path;
  library.handle = handle;
  for (const std::string& name : symbols) {
    dlerror();
    void* address = ::dlsym(handle, name.c_str());
    if (address == nullptr) {
      // Unmapped again: glibc's dlopen matches a loaded library by its path, so a handle kept
      // here would answer the load after the fix (a rebuilt entry under the same file name)
      // with this library again, and the error again (decision 253).
      ::dlclose(handle);
      return MakeError(ErrorKind::kLoad, "the compiled library " + path + " has no symbol '" +
                                             name +
                                             "'; the cache entry is inconsistent. Clear it with "
                                             "jaxcc.clear_cache() and load again.");
    }
    library.symbols[name] = address;
  }
  // Before any handler of the library can run: its calls mark their thread from the first.
  if (Status attached = AttachCrashReport(handle); !attached.ok()) return attached.error();
  return library;
}

}  // namespace jaxcc::loader
