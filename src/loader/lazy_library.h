// Lazy handlers (decision 137): a warm load registers, for each function, a stub from a fixed
// pool compiled into _core instead of the library's own handler, and the library is mapped
// (dlopen + dlsym, library.h) the first time XLA really calls one of its handlers. A process that
// loads many modules and calls a few pays the dynamic loader only for those; in a JAX GPU process
// dlopen was 40% of a warm load (static CUDA runtime).
//
// A stub answers XLA's metadata query at registration itself (the traits the generated handler
// would give, XLA's own API version; codegen/ffi_wrapper.h owns the traits), since that query comes
// when JAX registers the target, long before a call. A stateful handler's metadata names the
// library's own state type, so its query maps the library. Every other call maps the library once
// (whichever thread comes first; the rest wait) and from then on is one atomic load and a tail
// call to the real handler. A library that fails to load makes every call of its stubs return an
// XLA error that says why and how to see it at load time instead.
//
// Between the load and the first call the library's file is held open (a pin, decision 138): the
// cache entry may be deleted or replaced meanwhile by another process (clear_cache, the size cap,
// a rebuild), and the file the load verified is still the one that gets mapped.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "util/fs.h"
#include "util/result.h"

namespace jaxcc::loader {

struct LazyFunction {
  std::string symbol;        ///< the handler's symbol in the library
  std::uint32_t traits = 0;  ///< XLA_FFI_Handler_Traits the generated handler reports
  bool stateful = false;     ///< its metadata names the library's state type: map at the query
};

/// The library file a load verified, held open until its first call maps it.
struct PinnedFile {
  int fd = -1;    ///< read-only, close-on-exec; -1: none (the library is mapped by path)
  FileInfo info;  ///< the open file's status, for the caller to compare with what it verified
};

/// Opens `path` for a pin; fd -1 when the open fails or the process already holds as many pins
/// as it may (a share of its descriptor limit): the caller then maps the library at once. The
/// LazyLibrary constructed with the pin owns the descriptor; a pin not handed to one must be
/// released with ReleasePin.
PinnedFile PinLibraryFile(const std::string& path);
void ReleasePin(PinnedFile& pin);

/// How many pins the process holds now, and may hold at most.
std::size_t PinnedFiles();
std::size_t PinnedFileLimit();

/// One library, mapped on first need and never unmapped (XLA keeps the stubs for good).
class LazyLibrary {
 public:
  LazyLibrary(std::string module_name, std::string path, PinnedFile pin = {});
  ~LazyLibrary();  ///< releases a pin still held (a library never handed to XLA)
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  /// Maps the library and points its stubs at the real handlers, once per process; every caller
  /// gets the same outcome (ErrorKind::kLoad with dlerror()'s text).
  Status Load();
  bool loaded() const { return loaded_.load(std::memory_order_acquire); }
  const std::string& path() const { return path_; }
  const std::string& module_name() const { return module_name_; }

 private:
  friend std::optional<std::vector<void*>> AssignLazyStubs(LazyLibrary*,
                                                           const std::vector<LazyFunction>&);
  std::string module_name_;
  std::string path_;
  std::vector<std::pair<std::size_t, std::string>> stubs_;  ///< pool slot -> symbol
  PinnedFile pin_;
  std::once_flag once_;
  std::optional<Error> failure_;
  std::atomic<bool> loaded_{false};
};

/// Takes one stub from the process's pool for each of `functions` (in order) and binds it to
/// `library`; the XLA_FFI_Handler addresses to register. nullopt when the pool has too few left:
/// the caller loads the library eagerly instead. `library` must outlive the process (leak it).
std::optional<std::vector<void*>> AssignLazyStubs(LazyLibrary* library,
                                                  const std::vector<LazyFunction>& functions);

/// The pool: how many stubs it has, how many are taken.
std::size_t LazyStubCapacity();
std::size_t LazyStubsTaken();

}  // namespace jaxcc::loader
