#include "pipeline/flag_files.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>

#include "util/fs.h"
#include "util/temp_dir_for_test.h"

namespace jaxcc::pipeline {
namespace {

std::string TempDir() { return testing_util::MakeTestTempDir("jaxcc-flagfiles"); }

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(FlagFiles, SplitsResponseFilesByGccsRules) {
  EXPECT_EQ(SplitResponseFile("-DA=1  '-DB=two words'\n\"-DC\" -DD=a\\ b\n"),
            (std::vector<std::string>{"-DA=1", "-DB=two words", "-DC", "-DD=a b"}));
}

TEST(FlagFiles, ResponseFilesAreExpandedRecursivelyAndKeyedByTheirBytes) {
  const std::string dir = TempDir();
  ASSERT_TRUE(WriteFile(dir + "/inner.rsp", "-DVALUE=1 -include " + dir + "/pre.h\n").ok());
  ASSERT_TRUE(WriteFile(dir + "/outer.rsp", "-O2 @" + dir + "/inner.rsp\n").ok());
  ASSERT_TRUE(WriteFile(dir + "/pre.h", "#define P 1\n").ok());
  auto first = FilesNamedByFlags({"@" + dir + "/outer.rsp"});
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(Has(first->files, dir + "/outer.rsp"));
  EXPECT_TRUE(Has(first->files, dir + "/inner.rsp"));
  EXPECT_TRUE(Has(first->files, dir + "/pre.h"));
  EXPECT_TRUE(Has(first->compiler_words, "-DVALUE=1"));
  ASSERT_TRUE(WriteFile(dir + "/inner.rsp", "-DVALUE=2 -include " + dir + "/pre.h\n").ok());
  auto second = FilesNamedByFlags({"@" + dir + "/outer.rsp"});
  ASSERT_TRUE(second.ok());
  EXPECT_NE(first->key, second->key);
}

TEST(FlagFiles, ACyclicResponseFileIsATypedError) {
  const std::string dir = TempDir();
  ASSERT_TRUE(WriteFile(dir + "/self.rsp", "@" + dir + "/self.rsp\n").ok());
  auto files = FilesNamedByFlags({"@" + dir + "/self.rsp"});
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.error().kind, ErrorKind::kSpec);
  EXPECT_NE(files.error().message.find("self.rsp"), std::string::npos);
}

TEST(FlagFiles, FilesNamedByCompilerAndLinkerFlags) {
  const std::string dir = TempDir();
  for (const char* name :
       {"plugin.so", "my.specs", "ignore.txt", "link.ld", "exports.map", "libk.a", "linker.rsp"}) {
    ASSERT_TRUE(WriteFile(dir + "/" + name, name).ok());
  }
  ASSERT_TRUE(WriteFile(dir + "/linker.rsp", "--version-script=" + dir + "/exports.map").ok());
  auto files = FilesNamedByFlags({"-fplugin=" + dir + "/plugin.so", "-specs=" + dir + "/my.specs",
                                  "-fsanitize-ignorelist=" + dir + "/ignore.txt",
                                  "-Wl,-T," + dir + "/link.ld", "-Wl,@" + dir + "/linker.rsp",
                                  dir + "/libk.a", "-L" + dir, "-Wl,-rpath," + dir + "/rt",
                                  "-fprofile-use=" + dir + "/missing.gcda", "-DX=" + dir});
  ASSERT_TRUE(files.ok()) << files.error().message;
  for (const char* name :
       {"plugin.so", "my.specs", "ignore.txt", "link.ld", "exports.map", "libk.a", "linker.rsp"}) {
    EXPECT_TRUE(Has(files->files, dir + "/" + name)) << name;
  }
  EXPECT_TRUE(Has(files->directories, dir));               // -L: a library search directory
  EXPECT_TRUE(Has(files->absent, dir + "/missing.gcda"));  // read once it exists
  EXPECT_FALSE(Has(files->directories, dir + "/rt"));      // a run-time path, not an input
}

}  // namespace
}  // namespace jaxcc::pipeline
