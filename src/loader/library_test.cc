#include "loader/library.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <fstream>

#include "util/temp_dir_for_test.h"

namespace jaxcc::loader {
namespace {

std::string BuildLibrary(const std::string& source, const std::string& extra = "") {
  std::string dir = testing_util::MakeTestTempDir("jaxcc-loader");
  std::ofstream(dir + "/lib.cc") << source;
  std::string command = "g++ -shared -fPIC -o " + dir + "/lib.so " + dir + "/lib.cc " + extra;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return dir + "/lib.so";
}

TEST(LoadLibrary, ResolvesRequestedSymbols) {
  std::string path = BuildLibrary("extern \"C\" int jaxcc_ffi_f() { return 7; }");
  auto library = LoadLibrary(path, {"jaxcc_ffi_f"});
  ASSERT_TRUE(library.ok()) << library.error().message;
  auto fn = reinterpret_cast<int (*)()>(library->symbols.at("jaxcc_ffi_f"));
  EXPECT_EQ(fn(), 7);
  auto again = LoadLibrary(path, {"jaxcc_ffi_f"});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->handle, library->handle);
}

TEST(LoadLibrary, MissingSymbolSaysHowToRecover) {
  std::string path = BuildLibrary("extern \"C\" int other() { return 1; }");
  auto library = LoadLibrary(path, {"jaxcc_ffi_missing"});
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.error().kind, ErrorKind::kLoad);
  EXPECT_NE(library.error().message.find("jaxcc_ffi_missing"), std::string::npos);
  EXPECT_NE(library.error().message.find("clear_cache"), std::string::npos);
}

TEST(LoadLibrary, UnresolvedSymbolFailsAtLoadWithAHint) {
  // Linked without -z defs, so the undefined reference surfaces only at dlopen(RTLD_NOW).
  std::string path = BuildLibrary("void nowhere(); extern \"C\" void f() { nowhere(); }");
  auto library = LoadLibrary(path, {"f"});
  ASSERT_FALSE(library.ok());
  EXPECT_NE(library.error().message.find("undefined symbol"), std::string::npos);
  EXPECT_NE(library.error().message.find("extra_ldflags"), std::string::npos);
}

TEST(LoadLibrary, NotALibraryIsALoadError) {
  auto library = LoadLibrary("/etc/hostname", {});
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.error().kind, ErrorKind::kLoad);
}

}  // namespace
}  // namespace jaxcc::loader
