#include "pipeline/source_text.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <variant>

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

TEST(ValidateSources, ADeferredSourceIsCheckedOnceReadNotBefore) {
  const std::vector<cache::LibraryStamp> deferred = {{true, 3, 1, 1, 1}};
  EXPECT_TRUE(ValidateSources({{"/k.cc", ""}}, deferred).ok());  // blank until read
  // The other sources are checked as ever.
  EXPECT_FALSE(
      ValidateSources({{"/k.cc", ""}, {"<m>", std::string("a\0b", 3)}}, {deferred[0], {}}).ok());
}

// One wait for the timestamps to settle serves every case that needs a settled file.
TEST(OpenSourceFile, ASettledFileIsDeferredAndReadOnlyWhenTheLoadNeedsIt) {
  ScratchDir dir;
  const std::string settled = dir / "settled.cc";
  const std::string changed = dir / "changed.cc";
  ASSERT_TRUE(WriteFileAtomic(settled, "int f();\n").ok());
  ASSERT_TRUE(WriteFileAtomic(changed, "int g();\n").ok());
  ASSERT_EQ(::mkdir((dir / "sub.cc").c_str(), 0700), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(3200));
  const std::string fresh = dir / "fresh.cc";
  ASSERT_TRUE(WriteFileAtomic(fresh, "int h();\n").ok());

  auto opened = OpenSourceFile(settled);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  const auto* deferred = std::get_if<DeferredSource>(&*opened);
  ASSERT_NE(deferred, nullptr) << "a settled file is not read";
  EXPECT_EQ(deferred->path, settled);
  EXPECT_EQ(deferred->stamp, cache::StampOf(StatPath(settled)));
  // A file written within the timestamp tick is read now: its stamp vouches for nothing yet.
  auto now = OpenSourceFile(fresh);
  ASSERT_TRUE(now.ok());
  ASSERT_TRUE(std::holds_alternative<signature::SourceFile>(*now));
  EXPECT_EQ(std::get<signature::SourceFile>(*now).text, "int h();\n");
  // What cannot be deferred fails as a read does, at once.
  for (const std::string& bad : {dir / "sub.cc", dir / "absent.cc"}) {
    auto refused = OpenSourceFile(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.error().message.find("pass the path of a readable source file"),
              std::string::npos);
  }

  // The request holds the deferred files by stamp; the full path reads them.
  auto changed_source = OpenSourceFile(changed);
  ASSERT_TRUE(changed_source.ok());
  ASSERT_TRUE(std::holds_alternative<DeferredSource>(*changed_source));
  LoadRequest request;
  SetSources(request, {*opened, signature::SourceFile{"<m>", "int i();"}, *changed_source});
  ASSERT_EQ(request.sources.size(), 3u);
  ASSERT_EQ(request.source_stamps.size(), 3u);
  EXPECT_TRUE(HasDeferredSources(request));
  EXPECT_EQ(request.sources[0].text, "");
  EXPECT_FALSE(request.source_stamps[1].known);
  ASSERT_EQ(SourceInputs(request).size(), 3u);
  EXPECT_TRUE(std::holds_alternative<DeferredSource>(SourceInputs(request)[2]));

  LoadRequest unchanged = request;
  auto same = ReadDeferredSources(unchanged);
  ASSERT_TRUE(same.ok()) << same.error().message;
  EXPECT_TRUE(*same);
  EXPECT_FALSE(HasDeferredSources(unchanged));
  EXPECT_EQ(unchanged.sources[0].text, "int f();\n");
  EXPECT_EQ(unchanged.sources[1].text, "int i();");
  EXPECT_EQ(unchanged.sources[2].text, "int g();\n");

  // Rewritten since its stamp was taken, same size: the new bytes are read, and the answer says
  // the stamp no longer stands for them.
  ASSERT_TRUE(WriteFileAtomic(changed, "int k();\n").ok());
  auto moved = ReadDeferredSources(request);
  ASSERT_TRUE(moved.ok());
  EXPECT_FALSE(*moved);
  EXPECT_EQ(request.sources[2].text, "int k();\n");

  // A deferred file that became unreadable is the read's error, at the full path.
  LoadRequest gone;
  SetSources(gone, {*opened});
  ASSERT_EQ(::unlink(settled.c_str()), 0);
  auto missing = ReadDeferredSources(gone);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kSpec);
  EXPECT_NE(missing.error().message.find("cannot read " + settled), std::string::npos);
}

}  // namespace
}  // namespace jaxcc::pipeline
