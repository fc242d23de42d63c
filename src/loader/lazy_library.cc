#include "loader/lazy_library.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

#include "loader/library.h"
#include "loader/xla_ffi_abi.h"

namespace jaxcc::loader {
namespace {

using xla_abi::CallFrame;
using xla_abi::Handler;

// Enough for every function of brainevent's 60 CUDA modules (728) five times over; a process
// that loads more functions than this loads the rest eagerly.
constexpr std::size_t kStubCount = 4096;

struct Slot {
  std::atomic<Handler*> handler{nullptr};      // the real handler, once the library is mapped
  std::atomic<LazyLibrary*> library{nullptr};  // set before the stub's address is handed out
  std::uint32_t traits = 0;
  bool stateful = false;
};

Slot g_slots[kStubCount];
std::atomic<std::size_t> g_taken{0};

// Pins are descriptors the process did not ask for: a quarter of its soft limit at most (and
// never more than 1024), so that a program opening many files of its own is not starved by
// modules it loaded and has not called yet. Past the limit a load maps at once, as before.
std::atomic<std::size_t> g_pinned{0};

std::size_t ComputePinLimit() {
  struct rlimit limit {};
  std::size_t soft = 1024;
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    soft = static_cast<std::size_t>(limit.rlim_cur);
  }
  return std::min<std::size_t>(soft / 4, 1024);
}

// Two stats name the same file, unchanged: a write, rename, unlink or chmod moves the ctime.
bool SameFile(const FileInfo& a, const FileInfo& b) {
  return a.exists && b.exists && a.inode == b.inode && a.device == b.device &&
         a.ctime_ns == b.ctime_ns;
}

// A descriptor still on the file it was opened for (deleting the file moves its ctime, not this).
bool SameInode(const FileInfo& a, const FileInfo& b) {
  return a.exists && b.exists && a.inode == b.inode && a.device == b.device;
}

// Descriptors stay open after a mapping made through them (see Load): they are the loader's
// names for those libraries.
std::string DescriptorPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

xla_abi::Error* ErrorFor(CallFrame* frame, const std::string& message) {
  const xla_abi::Api* api = frame != nullptr ? frame->api : nullptr;
  if (api == nullptr || api->struct_size < JAXCC_XLA_ABI_SIZE_TO(xla_abi::Api, error_create) ||
      api->error_create == nullptr) {
    // No way to hand XLA an error through this frame: say it where a person can read it.
    std::fprintf(stderr, "jaxcc: %s\n", message.c_str());
    return nullptr;
  }
  xla_abi::ErrorCreateArgs args;
  args.struct_size = JAXCC_XLA_ABI_SIZE_TO(xla_abi::ErrorCreateArgs, errc);
  args.extension_start = nullptr;
  args.message = message.c_str();
  args.errc = xla_abi::kErrorFailedPrecondition;
  return api->error_create(&args);  // XLA copies the message
}

bool IsMetadataQuery(const CallFrame* frame) {
  return frame->extension_start != nullptr &&
         frame->extension_start->type == xla_abi::kExtensionMetadata;
}

// What the generated handler reports (include/jaxcc/detail/ffi_frame.h, PopulateFrameMetadata):
// its traits and the API version of the headers it was built with, which are the running
// jaxlib's own (the warm record watches XLA's header directory), so XLA's version is the answer.
xla_abi::Error* AnswerMetadata(CallFrame* frame, std::uint32_t traits) {
  auto* extension = reinterpret_cast<xla_abi::MetadataExtension*>(frame->extension_start);
  const xla_abi::Api* api = frame->api;
  if (extension->extension_base.struct_size <
          JAXCC_XLA_ABI_SIZE_TO(xla_abi::MetadataExtension, metadata) ||
      extension->metadata == nullptr ||
      extension->metadata->struct_size < JAXCC_XLA_ABI_SIZE_TO(xla_abi::Metadata, traits) ||
      api == nullptr || api->struct_size < JAXCC_XLA_ABI_SIZE_TO(xla_abi::Api, api_version)) {
    return ErrorFor(frame, "Unexpected XLA_FFI_Metadata struct size");
  }
  xla_abi::Metadata* metadata = extension->metadata;
  metadata->api_version =
      xla_abi::ApiVersion{JAXCC_XLA_ABI_SIZE_TO(xla_abi::ApiVersion, minor_version), nullptr,
                          api->api_version.major_version, api->api_version.minor_version};
  metadata->traits = traits;
  if (metadata->struct_size >= JAXCC_XLA_ABI_SIZE_TO(xla_abi::Metadata, state_type)) {
    metadata->state_type = 0;  // XLA_FFI_UNKNOWN_TYPE_ID: stateful stubs never get here
  }
  return nullptr;
}

xla_abi::Error* ColdCall(std::size_t index, CallFrame* frame) {
  Slot& slot = g_slots[index];
  LazyLibrary* library = slot.library.load(std::memory_order_acquire);
  if (library == nullptr) {
    return ErrorFor(frame,
                    "jaxcc: a lazy handler stub was called before it was bound (a bug in "
                    "jaxcc; set JAXCC_LAZY_LOAD=0 to load libraries eagerly)");
  }
  if (IsMetadataQuery(frame) && !slot.stateful) return AnswerMetadata(frame, slot.traits);
  Status loaded = library->Load();
  if (!loaded.ok()) {
    return ErrorFor(frame,
                    "jaxcc: module '" + library->module_name() +
                        "' could not be mapped at its first call: " + loaded.error().message +
                        "\n(A warm load maps a module's library at its first call; call "
                        "module.load_library() after loading, or set JAXCC_LAZY_LOAD=0, "
                        "to get this as a LoadError from the load itself.)");
  }
  return slot.handler.load(std::memory_order_acquire)(frame);
}

// One function per slot: XLA's handler type carries no user data, so the address is the slot.
template <std::size_t N>
xla_abi::Error* Stub(CallFrame* frame) {
  Handler* handler = g_slots[N].handler.load(std::memory_order_acquire);
  if (__builtin_expect(handler != nullptr, 1)) return handler(frame);
  return ColdCall(N, frame);
}

template <std::size_t... I>
constexpr std::array<Handler*, sizeof...(I)> MakeStubs(std::index_sequence<I...>) {
  return {&Stub<I>...};
}

constexpr std::array<Handler*, kStubCount> kStubs =
    MakeStubs(std::make_index_sequence<kStubCount>());

}  // namespace

PinnedFile PinLibraryFile(const std::string& path) {
  if (g_pinned.fetch_add(1, std::memory_order_relaxed) >= PinnedFileLimit()) {
    g_pinned.fetch_sub(1, std::memory_order_relaxed);
    return {};
  }
  PinnedFile pin;
  pin.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (pin.fd < 0) {
    g_pinned.fetch_sub(1, std::memory_order_relaxed);
    return {};
  }
  pin.info = StatOpenFile(pin.fd);
  return pin;
}

void ReleasePin(PinnedFile& pin) {
  if (pin.fd < 0) return;
  ::close(pin.fd);
  g_pinned.fetch_sub(1, std::memory_order_relaxed);
  pin = {};
}

std::size_t PinnedFiles() { return g_pinned.load(std::memory_order_relaxed); }
std::size_t PinnedFileLimit() {
  static const std::size_t limit = ComputePinLimit();
  return limit;
}

LazyLibrary::LazyLibrary(std::string module_name, std::string path, PinnedFile pin)
    : module_name_(std::move(module_name)), path_(std::move(path)), pin_(pin) {}

LazyLibrary::~LazyLibrary() { ReleasePin(pin_); }

Status LazyLibrary::Load() {
  std::call_once(once_, [this] {
    std::vector<std::string> symbols;
    symbols.reserve(stubs_.size());
    for (const auto& stub : stubs_) symbols.push_back(stub.second);
    // The path still names the pinned file: map it by path, so debuggers and dladdr see the
    // entry's real name. Otherwise the entry was deleted or replaced since the load, and the
    // file the load verified is mapped through its descriptor, which then stays open: the
    // loader knows the library by that name and must never meet it naming another file.
    const FileInfo verified = pin_.info;
    FileInfo held;
    if (pin_.fd >= 0) held = StatOpenFile(pin_.fd);
    if (pin_.fd >= 0 && !SameInode(held, verified)) {
      // Other code closed the descriptor (os.closerange, a daemonising library) and the number
      // may name another file now: it is not ours to map or to close.
      g_pinned.fetch_sub(1, std::memory_order_relaxed);
      pin_.fd = -1;
    }
    std::string map_path = path_;
    bool through_descriptor = false;
    if (verified.exists && !SameFile(StatPath(path_), verified)) {
      if (pin_.fd >= 0 && (held.size != verified.size || held.mtime_ns != verified.mtime_ns)) {
        failure_ = MakeError(ErrorKind::kLoad, "its library " + path_ +
                                                   " was written to since the load verified it; "
                                                   "load the module again");
        return;
      }
      if (pin_.fd < 0) {
        failure_ = MakeError(ErrorKind::kLoad,
                             "its cache entry " + path_ +
                                 " was deleted or replaced since the load, and the descriptor "
                                 "jaxcc held for it was closed by other code; load the module "
                                 "again");
        return;
      }
      through_descriptor = true;
      map_path = DescriptorPath(pin_.fd);
    }
    auto library = LoadLibrary(map_path, symbols);
    if (!through_descriptor) ReleasePin(pin_);
    if (!library.ok()) {
      failure_ = library.error();
      if (through_descriptor) {
        failure_->message += " (its cache entry " + path_ +
                             " was deleted or replaced since the load; the file the load "
                             "verified was mapped through the descriptor held since then)";
      }
      return;
    }
    for (const auto& [index, symbol] : stubs_) {
      g_slots[index].handler.store(reinterpret_cast<Handler*>(library->symbols.at(symbol)),
                                   std::memory_order_release);
    }
    loaded_.store(true, std::memory_order_release);
  });
  if (failure_) return *failure_;
  return OkStatus();
}

std::optional<std::vector<void*>> AssignLazyStubs(LazyLibrary* library,
                                                  const std::vector<LazyFunction>& functions) {
  std::size_t first = g_taken.load(std::memory_order_relaxed);
  do {
    if (kStubCount - first < functions.size()) return std::nullopt;
  } while (
      !g_taken.compare_exchange_weak(first, first + functions.size(), std::memory_order_relaxed));
  std::vector<void*> handlers;
  handlers.reserve(functions.size());
  for (std::size_t i = 0; i < functions.size(); ++i) {
    Slot& slot = g_slots[first + i];
    slot.traits = functions[i].traits;
    slot.stateful = functions[i].stateful;
    library->stubs_.emplace_back(first + i, functions[i].symbol);
    handlers.push_back(reinterpret_cast<void*>(kStubs[first + i]));
  }
  for (std::size_t i = 0; i < functions.size(); ++i) {
    g_slots[first + i].library.store(library, std::memory_order_release);
  }
  return handlers;
}

std::size_t LazyStubCapacity() { return kStubCount; }
std::size_t LazyStubsTaken() { return g_taken.load(std::memory_order_relaxed); }

}  // namespace jaxcc::loader
