#include "pipeline/source_text.h"

#include <gtest/gtest.h>

#include <string>

#include "cache/test_scratch_dir.h"
#include "util/fs.h"

namespace jaxcc::pipeline {
namespace {

using cache::testing_util::ScratchDir;

TEST(ReadSourceFile, ReadsTheBytesAndLabelsThemWithThePath) {
  ScratchDir dir;
  std::string path = dir / "k.cc";
  // Longer than one read chunk's guess would matter for, and not ASCII throughout.
  std::string text = "// caf\xc3\xa9\n" + std::string(100000, 'x') + "\nint f();\n";
  ASSERT_TRUE(WriteFileAtomic(path, text).ok());
  auto source = ReadSourceFile(path);
  ASSERT_TRUE(source.ok()) << source.error().message;
  EXPECT_EQ(source->label, path);
  EXPECT_EQ(source->text, text);
}

TEST(ReadSourceFile, ABadByteIsASpecErrorAtItsLineAndColumn) {
  ScratchDir dir;
  std::string path = dir / "latin1.cc";
  ASSERT_TRUE(WriteFileAtomic(path, "int a;\n// caf\xe9\n").ok());
  auto source = ReadSourceFile(path);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().kind, ErrorKind::kSpec);
  EXPECT_EQ(source.error().message, path +
                                        " is not valid UTF-8 (byte 0xe9 at line 2, column 7 "
                                        "starts no UTF-8 character); save it as UTF-8");
}

TEST(ReadSourceFile, AMissingFileOrADirectoryIsASpecErrorNamingIt) {
  ScratchDir dir;
  auto missing = ReadSourceFile(dir / "absent.cu");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kSpec);
  EXPECT_EQ(missing.error().message, "cannot read " + (dir / "absent.cu") +
                                         ": No such file or directory; pass the path of a "
                                         "readable source file");
  auto directory = ReadSourceFile(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().message.find("Is a directory"), std::string::npos);
}

TEST(ReadSourceFile, APathWithANulIsRefusedNotCutShort) {
  ScratchDir dir;
  std::string path = dir / "k.cc";
  ASSERT_TRUE(WriteFileAtomic(path, "int f();\n").ok());
  auto source = ReadSourceFile(path + std::string("\0.bak", 5));
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().kind, ErrorKind::kSpec);
  EXPECT_NE(source.error().message.find("contains a NUL character"), std::string::npos);
}

TEST(ValidateSources, ANulIsReportedByLineAndColumn) {
  Status status = ValidateSources({{"<m>", "int a;\nint b;\0"}});
  EXPECT_TRUE(status.ok());  // a C string literal stops at the NUL: nothing to report
  status = ValidateSources({{"<m>", std::string("int a;\nint\0 b;", 14)}});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().kind, ErrorKind::kSpec);
  EXPECT_EQ(status.error().message,
            "source <m> contains a NUL character at line 2, column 4; C++ sources are text (a "
            "binary file or a bad concatenation?): remove the NUL");
}

TEST(ValidateSources, AllBlankSourcesAreRefusedOneWithTextIsEnough) {
  EXPECT_FALSE(ValidateSources({}).ok());
  Status blank = ValidateSources({{"a", " \n\t"}, {"b", ""}});
  ASSERT_FALSE(blank.ok());
  EXPECT_NE(blank.error().message.find("the C++ source is empty"), std::string::npos);
  EXPECT_TRUE(ValidateSources({{"a", "\n"}, {"b", "int f();"}}).ok());
}

}  // namespace
}  // namespace jaxcc::pipeline
