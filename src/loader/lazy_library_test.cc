#include "loader/lazy_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "loader/xla_ffi_abi.h"
#include "util/fs.h"
#include "util/temp_dir_for_test.h"

namespace jaxcc::loader {
namespace {

using xla_abi::CallFrame;
using xla_abi::Handler;

// The real handlers: `jaxcc_ffi_f` returns its frame's ctx as the "error" so a test can tell it
// ran, and counts its calls; `jaxcc_ffi_meta` fills the metadata query like a stateful handler.
constexpr char kLibrary[] = R"(
#include <cstdint>
#include <cstddef>
struct Ext { std::size_t size; int type; void* next; };
struct Version { std::size_t size; void* ext; int major, minor; };
struct Meta { std::size_t size; Version version; std::uint32_t traits; std::int64_t state; };
struct MetaExt { Ext base; Meta* meta; };
struct Frame { std::size_t size; Ext* ext; const void* api; void* ctx; int stage; };
extern "C" { int jaxcc_ffi_calls = 0; }
extern "C" void* jaxcc_ffi_f(Frame* frame) {
  __atomic_add_fetch(&jaxcc_ffi_calls, 1, __ATOMIC_SEQ_CST);
  return frame->ctx;
}
extern "C" void* jaxcc_ffi_meta(Frame* frame) {
  if (frame->ext != nullptr) reinterpret_cast<MetaExt*>(frame->ext)->meta->state = 77;
  return nullptr;
}
)";

// The same library with a handler that answers nullptr: tells which of two files was mapped.
std::string Impostor() {
  std::string text = kLibrary;
  text.replace(text.find("return frame->ctx;"), 18, "return nullptr;   ");
  return text;
}

std::string BuildLibrary(const std::string& source = kLibrary) {
  std::string dir = testing_util::MakeTestTempDir("jaxcc-lazy");
  std::ofstream(dir + "/lib.cc") << source;
  std::string command = "g++ -shared -fPIC -o " + dir + "/lib.so " + dir + "/lib.cc";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return dir + "/lib.so";
}

bool Mapped(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle != nullptr) ::dlclose(handle);  // drops only the reference NOLOAD took
  return handle != nullptr;
}

// A stand-in for XLA's API table: records the message of the error a stub creates.
std::string g_last_error;
xla_abi::Error* RecordError(xla_abi::ErrorCreateArgs* args) {
  g_last_error = args->message;
  return reinterpret_cast<xla_abi::Error*>(0x1);
}
xla_abi::Api MakeApi() {
  xla_abi::Api api{};
  api.struct_size = sizeof(api);
  api.api_version = {sizeof(xla_abi::ApiVersion), nullptr, 0, 3};
  api.error_create = &RecordError;
  return api;
}
const xla_abi::Api kApi = MakeApi();

struct MetadataFrame {
  xla_abi::Metadata metadata{};
  xla_abi::MetadataExtension extension{};
  CallFrame frame{};
  MetadataFrame() {
    metadata.struct_size = sizeof(metadata);
    extension.extension_base = {sizeof(extension), xla_abi::kExtensionMetadata, nullptr};
    extension.metadata = &metadata;
    frame = {sizeof(CallFrame), &extension.extension_base, &kApi, nullptr, 0};
  }
};

CallFrame ExecuteFrame(void* ctx) { return CallFrame{sizeof(CallFrame), nullptr, &kApi, ctx, 3}; }

Handler* AsHandler(void* address) { return reinterpret_cast<Handler*>(address); }

TEST(LazyLibrary, MetadataIsAnsweredWithoutMappingAndTheFirstCallMaps) {
  std::string path = BuildLibrary();
  auto* library = new LazyLibrary("lazy_meta", path);
  auto stubs = AssignLazyStubs(library, {{"jaxcc_ffi_f", 1u, false}});
  ASSERT_TRUE(stubs.has_value());
  MetadataFrame query;
  EXPECT_EQ(AsHandler((*stubs)[0])(&query.frame), nullptr);
  EXPECT_EQ(query.metadata.traits, 1u);
  EXPECT_EQ(query.metadata.api_version.major_version, 0);
  EXPECT_EQ(query.metadata.api_version.minor_version, 3);
  EXPECT_FALSE(Mapped(path));
  EXPECT_FALSE(library->loaded());

  int marker = 0;
  CallFrame call = ExecuteFrame(&marker);
  EXPECT_EQ(reinterpret_cast<void*>(AsHandler((*stubs)[0])(&call)), &marker);
  EXPECT_TRUE(Mapped(path));
  EXPECT_TRUE(library->loaded());
  // From now on the stub forwards straight to the real handler, metadata queries included.
  EXPECT_EQ(reinterpret_cast<void*>(AsHandler((*stubs)[0])(&call)), &marker);
}

TEST(LazyLibrary, AStatefulHandlersMetadataMapsTheLibrary) {
  std::string path = BuildLibrary();
  auto* library = new LazyLibrary("lazy_state", path);
  auto stubs = AssignLazyStubs(library, {{"jaxcc_ffi_meta", 0u, true}});
  ASSERT_TRUE(stubs.has_value());
  MetadataFrame query;
  EXPECT_EQ(AsHandler((*stubs)[0])(&query.frame), nullptr);
  EXPECT_EQ(query.metadata.state_type, 77);  // the library's own answer
  EXPECT_TRUE(library->loaded());
}

TEST(LazyLibrary, ALibraryThatCannotLoadFailsEveryCallWithTheReasonAndTheFix) {
  auto* library = new LazyLibrary("lazy_gone", "/nonexistent/jaxcc/lib.so");
  auto stubs = AssignLazyStubs(library, {{"jaxcc_ffi_f", 0u, false}});
  ASSERT_TRUE(stubs.has_value());
  CallFrame call = ExecuteFrame(nullptr);
  for (int attempt = 0; attempt < 2; ++attempt) {
    g_last_error.clear();
    EXPECT_EQ(AsHandler((*stubs)[0])(&call), reinterpret_cast<xla_abi::Error*>(0x1));
    EXPECT_NE(g_last_error.find("module 'lazy_gone'"), std::string::npos) << g_last_error;
    EXPECT_NE(g_last_error.find("/nonexistent/jaxcc/lib.so"), std::string::npos);
    EXPECT_NE(g_last_error.find("JAXCC_LAZY_LOAD=0"), std::string::npos);
  }
  EXPECT_FALSE(library->Load().ok());
  EXPECT_FALSE(library->loaded());
}

TEST(LazyLibrary, ThreadsCallingFirstAllReachTheHandlerOfOneMapping) {
  std::string path = BuildLibrary();
  auto* library = new LazyLibrary("lazy_race", path);
  auto stubs = AssignLazyStubs(library, {{"jaxcc_ffi_f", 0u, false}, {"jaxcc_ffi_f", 0u, false}});
  ASSERT_TRUE(stubs.has_value());
  ASSERT_NE((*stubs)[0], (*stubs)[1]);
  constexpr int kThreads = 8;
  std::vector<void*> results(kThreads);
  std::vector<std::thread> threads;
  int marker = 0;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      CallFrame call = ExecuteFrame(&marker);
      results[t] = reinterpret_cast<void*>(AsHandler((*stubs)[t % 2])(&call));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (void* result : results) EXPECT_EQ(result, &marker);
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(*static_cast<int*>(::dlsym(handle, "jaxcc_ffi_calls")), kThreads);
  ::dlclose(handle);
}

// A stub's first call, and whether it ran the real handler of the original library.
bool FirstCallRanTheOriginal(const std::vector<void*>& stubs) {
  int marker = 0;
  CallFrame call = ExecuteFrame(&marker);
  return reinterpret_cast<void*>(AsHandler(stubs[0])(&call)) == &marker;
}

TEST(LazyLibrary, AnUnchangedPinnedFileIsMappedByItsPathAndThePinReleased) {
  std::string path = BuildLibrary();
  std::size_t before = PinnedFiles();
  PinnedFile pin = PinLibraryFile(path);
  ASSERT_GE(pin.fd, 0);
  EXPECT_EQ(pin.info.inode, StatPath(path).inode);
  EXPECT_EQ(PinnedFiles(), before + 1);
  auto* library = new LazyLibrary("lazy_pinned", path, pin);
  auto stubs = AssignLazyStubs(library, {{"jaxcc_ffi_f", 0u, false}});
  ASSERT_TRUE(stubs.has_value());
  EXPECT_TRUE(FirstCallRanTheOriginal(*stubs));
  EXPECT_TRUE(Mapped(path));  // known to the loader by its own name
  EXPECT_EQ(PinnedFiles(), before);
}

TEST(LazyLibrary, AFileDeletedBeforeTheFirstCallIsMappedThroughItsPin) {
  std::string path = BuildLibrary();
  auto* library = new LazyLibrary("lazy_deleted", path, PinLibraryFile(path));
  auto stubs = AssignLazyStubs(library, {{"jaxcc_ffi_f", 0u, false}});
  ASSERT_TRUE(stubs.has_value());
  ASSERT_EQ(::unlink(path.c_str()), 0);  // clear_cache in another process
  EXPECT_TRUE(FirstCallRanTheOriginal(*stubs));
  EXPECT_TRUE(library->loaded());
}

TEST(LazyLibrary, AFileReplacedBeforeTheFirstCallStillMapsTheOneThatWasPinned) {
  std::string path = BuildLibrary();
  std::string impostor = BuildLibrary(Impostor());
  auto* library = new LazyLibrary("lazy_replaced", path, PinLibraryFile(path));
  auto stubs = AssignLazyStubs(library, {{"jaxcc_ffi_f", 0u, false}});
  ASSERT_TRUE(stubs.has_value());
  ASSERT_EQ(::rename(impostor.c_str(), path.c_str()), 0);  // a rebuild published over it
  EXPECT_TRUE(FirstCallRanTheOriginal(*stubs));
  EXPECT_FALSE(Mapped(path));  // the file now at the path was never mapped
}

// Other code closing every descriptor (os.closerange) must not make a stub map or close a
// descriptor that now names another file.
TEST(LazyLibrary, APinClosedByOtherCodeIsNeitherMappedNorClosed) {
  std::string path = BuildLibrary();
  PinnedFile pin = PinLibraryFile(path);
  ASSERT_GE(pin.fd, 0);
  std::size_t before = PinnedFiles();
  auto* library = new LazyLibrary("lazy_closed", path, pin);
  auto stubs = AssignLazyStubs(library, {{"jaxcc_ffi_f", 0u, false}});
  ASSERT_TRUE(stubs.has_value());
  ASSERT_EQ(::close(pin.fd), 0);
  int other = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // takes the lowest free number
  ASSERT_EQ(other, pin.fd);
  EXPECT_TRUE(FirstCallRanTheOriginal(*stubs));  // the path still names the verified file
  EXPECT_NE(::fcntl(other, F_GETFD), -1) << "the stub closed a descriptor it no longer owned";
  EXPECT_EQ(PinnedFiles(), before - 1);
  ::close(other);
}

TEST(LazyLibrary, ADeletedEntryWhosePinWasClosedByOtherCodeFailsWithTheReason) {
  std::string path = BuildLibrary();
  PinnedFile pin = PinLibraryFile(path);
  auto* library = new LazyLibrary("lazy_lost", path, pin);
  auto stubs = AssignLazyStubs(library, {{"jaxcc_ffi_f", 0u, false}});
  ASSERT_TRUE(stubs.has_value());
  ASSERT_EQ(::close(pin.fd), 0);
  ASSERT_EQ(::unlink(path.c_str()), 0);
  g_last_error.clear();
  CallFrame call = ExecuteFrame(nullptr);
  EXPECT_EQ(AsHandler((*stubs)[0])(&call), reinterpret_cast<xla_abi::Error*>(0x1));
  EXPECT_NE(g_last_error.find("closed by other code"), std::string::npos) << g_last_error;
  EXPECT_NE(g_last_error.find("module 'lazy_lost'"), std::string::npos) << g_last_error;
}

TEST(LazyLibrary, ALibraryWrittenToAfterTheLoadIsNotMapped) {
  std::string path = BuildLibrary();
  auto* library = new LazyLibrary("lazy_written", path, PinLibraryFile(path));
  auto stubs = AssignLazyStubs(library, {{"jaxcc_ffi_f", 0u, false}});
  ASSERT_TRUE(stubs.has_value());
  std::ofstream(path, std::ios::app) << "tampered";
  g_last_error.clear();
  CallFrame call = ExecuteFrame(nullptr);
  EXPECT_EQ(AsHandler((*stubs)[0])(&call), reinterpret_cast<xla_abi::Error*>(0x1));
  EXPECT_NE(g_last_error.find("written to since the load"), std::string::npos) << g_last_error;
  EXPECT_FALSE(Mapped(path));
}

TEST(LazyLibrary, PinsStopAtTheirLimitAndAFailedOpenHoldsNone) {
  std::size_t before = PinnedFiles();
  EXPECT_EQ(PinLibraryFile("/nonexistent/jaxcc/lib.so").fd, -1);
  EXPECT_EQ(PinnedFiles(), before);
  std::string path = BuildLibrary();
  std::vector<PinnedFile> pins;
  while (PinnedFiles() < PinnedFileLimit()) {
    pins.push_back(PinLibraryFile(path));
    ASSERT_GE(pins.back().fd, 0);
  }
  EXPECT_EQ(PinLibraryFile(path).fd, -1);  // over the limit: the caller maps at once
  EXPECT_LE(PinnedFileLimit(), 1024u);
  for (PinnedFile& pin : pins) ReleasePin(pin);
  EXPECT_EQ(PinnedFiles(), before);
}

TEST(LazyLibrary, AnExhaustedPoolSaysSoAndTakesNothing) {
  LazyLibrary library("lazy_full", "/nonexistent/lib.so");  // no stub keeps it
  std::size_t taken = LazyStubsTaken();
  std::vector<LazyFunction> too_many(LazyStubCapacity() - taken + 1, {"f", 0u, false});
  EXPECT_FALSE(AssignLazyStubs(&library, too_many).has_value());
  EXPECT_EQ(LazyStubsTaken(), taken);
}

}  // namespace
}  // namespace jaxcc::loader
