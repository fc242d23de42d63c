#include "pipeline/build_inputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "cache/test_scratch_dir.h"
#include "util/fs.h"

namespace jaxcc::pipeline {
namespace {

using cache::testing_util::Age;
using cache::testing_util::ScratchDir;

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(IncludeSearch, TakesTheDirectoriesInTheCompilersOrder) {
  LoadRequest request;
  request.source_dirs = {"/src"};
  request.sources = {{"/src/k.cu", "text"}, {"<inline>", "text"}};
  request.extra_include_paths = {"/inc"};
  request.extra_cflags = {"-I/flag", "-I", "/flag2", "-iquote", "/quote", "-DX=1", "-iquote/q2"};
  request.cuda.extra_cflags = {"--include-path=/cuda_inc", "-I/src"};
  IncludeSearch search = UserIncludeSearch(request);
  EXPECT_EQ(search.dirs,
            (std::vector<std::string>{"/src", "/inc", "/flag", "/flag2", "/cuda_inc"}));
  EXPECT_EQ(search.quote_dirs, (std::vector<std::string>{"/quote", "/q2"}));
  EXPECT_EQ(search.includer_dirs, (std::vector<std::string>{"/src"}));
  EXPECT_EQ(search.source_files, (std::vector<std::string>{"/src/k.cu"}));
}

TEST(ShadowCandidates, EveryDirectorySearchedBeforeTheOneThatHeldTheHeader) {
  IncludeSearch search;
  search.includer_dirs = {"/src"};
  search.quote_dirs = {"/quote"};
  search.dirs = {"/src", "/vendor", "/inc"};
  // /inc/lib/a.h, read as "lib/a.h" through -I /inc (or as "a.h" from a file in /inc/lib).
  auto candidates = ShadowCandidates({"/inc/lib/a.h"}, search);
  for (const char* path :
       {"/src/lib/a.h", "/quote/lib/a.h", "/vendor/lib/a.h", "/inc/lib/lib/a.h"}) {
    EXPECT_TRUE(Has(candidates, path)) << path;
  }
  EXPECT_FALSE(Has(candidates, "/inc/lib/a.h"));  // the header itself
  // Searched after /inc, or a name nobody could have used: never a candidate.
  EXPECT_FALSE(Has(candidates, "/vendor/a.h"));
  EXPECT_TRUE(std::is_sorted(candidates.begin(), candidates.end()));
}

TEST(ShadowCandidates, AHeaderBesideItsIncluderHasNothingBeforeIt) {
  IncludeSearch search;
  search.includer_dirs = {"/src"};
  search.dirs = {"/src"};
  // Found in the source's own directory, which a quoted include searches first.
  EXPECT_TRUE(ShadowCandidates({"/src/k.h"}, search).empty());
  // Two headers: neither is a candidate for the other.
  search.dirs = {"/a", "/b"};
  auto candidates = ShadowCandidates({"/a/x.h", "/b/x.h"}, search);
  EXPECT_FALSE(Has(candidates, "/a/x.h"));
  EXPECT_TRUE(Has(candidates, "/src/x.h"));
}

class StampBuildInputsTest : public testing::Test {
 protected:
  std::string Header(const std::string& name, const std::string& text, int age_seconds) {
    std::string path = scratch_ / name;
    EXPECT_TRUE(MakeDirs(DirName(path)).ok());
    EXPECT_TRUE(WriteFile(path, text).ok());
    Age(path, age_seconds);
    return path;
  }
  BuildEnvironment env_{"/jaxcc/include", "/xla/include"};
  ScratchDir scratch_;
};

TEST_F(StampBuildInputsTest, SettledHeadersAreStampedAndAbsentShadowsRecorded) {
  std::string header = Header("inc/a.h", "#define A 1\n", 100);
  IncludeSearch search;
  search.dirs = {scratch_ / "vendor", scratch_ / "inc"};
  // The build started after the header's last change (its ctime is now: start later still).
  const std::int64_t start = BuildStartNs() + 20'000'000;
  BuildInputs inputs = StampBuildInputs({header, "/jaxcc/include/jaxcc/x.h"}, scratch_ / "build",
                                        env_, "", search, start);
  EXPECT_EQ(inputs.changed, "");
  ASSERT_EQ(inputs.dependencies.size(), 1u);  // jaxcc's own headers are in the key
  EXPECT_EQ(inputs.dependencies[0].path, header);
  EXPECT_TRUE(Has(inputs.shadows, scratch_ / "vendor/a.h"));
}

// Issue 37 bug 3: a header saved while the module compiled.
TEST_F(StampBuildInputsTest, AHeaderChangedAfterTheBuildStartedIsReported) {
  const std::int64_t start = BuildStartNs();
  std::string header = Header("inc/a.h", "#define A 2\n", 100);  // mtime old, ctime new
  BuildInputs inputs = StampBuildInputs({header}, scratch_ / "build", env_, "", {}, start);
  EXPECT_NE(inputs.changed.find(header), std::string::npos) << inputs.changed;
}

TEST_F(StampBuildInputsTest, TheSourcesThemselvesAreNeverTracked) {
  // nvcc's depfile names the file of the generated unit's #line; its text is in the key, and a
  // source saved just before the load is no header that changed during the build.
  const std::int64_t start = BuildStartNs();
  std::string source = Header("src/k.cu", "__global__ void k() {}\n", 0);
  IncludeSearch search;
  search.source_files = {source};
  BuildInputs inputs = StampBuildInputs({source}, scratch_ / "build", env_, "", search, start);
  EXPECT_EQ(inputs.changed, "");
  EXPECT_TRUE(inputs.dependencies.empty());
}

TEST_F(StampBuildInputsTest, AHeaderSavedJustBeforeTheStartIsNoChange) {
  // Saved, then the build starts at once (a script that writes its header and loads): the start
  // waits for the file clock's next tick, so the two never share a timestamp.
  for (int i = 0; i < 20; ++i) {
    std::string header = Header("inc/a" + std::to_string(i) + ".h", "#define A 1\n", 100);
    const std::int64_t start = BuildStartNs();
    EXPECT_EQ(StampBuildInputs({header}, scratch_ / "build", env_, "", {}, start).changed, "");
  }
}

TEST_F(StampBuildInputsTest, AFileStatedThenSavedBeforeTheStartIsOlderThanTheStart) {
  // A file whose times were just read gets a precise timestamp at its next write on kernels with
  // multigrain timestamps (Linux 6.13+), which can be ahead of the coarse clock's next tick: the
  // start must still come after it (it did not, about 1 time in 100 on Linux 6.18, and a module
  // whose header a script had checked, then saved, built twice).
  std::string path = scratch_ / "probe.h";
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(WriteFile(path, std::string(i % 7, 'x')).ok());
    (void)StatPath(path);  // a query: the next change is stamped precisely
    ASSERT_TRUE(WriteFile(path, std::string(i % 5, 'y')).ok());
    const std::int64_t start = BuildStartNs();
    FileInfo info = StatPath(path);
    ASSERT_LT(std::max(info.mtime_ns, info.ctime_ns), start) << "round " << i;
  }
}

TEST_F(StampBuildInputsTest, AHeaderGoneAfterTheBuildIsReported) {
  BuildInputs inputs =
      StampBuildInputs({scratch_ / "gone.h"}, scratch_ / "build", env_, "", {}, WallClockNs());
  EXPECT_NE(inputs.changed, "");
}

TEST_F(StampBuildInputsTest, AShadowThatAppearedDuringTheBuildIsReported) {
  std::string header = Header("inc/a.h", "#define A 1\n", 100);
  IncludeSearch search;
  search.dirs = {scratch_ / "vendor", scratch_ / "inc"};
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::int64_t start = BuildStartNs();
  Header("vendor/a.h", "#define A 9\n", 100);  // created after the start: maybe read instead
  BuildInputs during = StampBuildInputs({header}, scratch_ / "build", env_, "", search, start);
  EXPECT_NE(during.changed.find("vendor/a.h"), std::string::npos) << during.changed;
  // The same file, there before the build: the compiler passed it over (another reading of the
  // name); not a change, and not a path that must stay absent.
  const std::int64_t later = BuildStartNs() + 20'000'000;
  BuildInputs before = StampBuildInputs({header}, scratch_ / "build", env_, "", search, later);
  EXPECT_EQ(before.changed, "");
  EXPECT_FALSE(Has(before.shadows, scratch_ / "vendor/a.h"));
}

}  // namespace
}  // namespace jaxcc::pipeline
