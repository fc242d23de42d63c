#include "pipeline/build_plan.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>

#include "util/fs.h"
#include "util/temp_dir_for_test.h"

namespace jaxcc::pipeline {
namespace {

bool Has(const std::vector<std::string>& flags, const std::string& flag) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

LoadRequest CpuRequest(int optimization_level) {
  LoadRequest request;
  request.name = "plan_test";
  request.platform = "cpu";
  request.optimization_level = optimization_level;
  request.sources.push_back({"<inline>", "void f() {}"});
  return request;
}

BuildEnvironment Env() {
  BuildEnvironment env;
  env.jaxcc_include_dir = "/jaxcc/include";
  env.ffi_include_dir = "/jaxlib/include";
  return env;
}

toolchain::HostCompiler FakeCompiler() { return {{"/usr/bin/g++"}, "/usr/bin/g++", "g++ 12"}; }

toolchain::HostCompiler CompilerWithGold() {
  toolchain::HostCompiler compiler = FakeCompiler();
  compiler.linker = {{"-fuse-ld=gold"}, "gold", "GNU gold 1.16", "ld.gold on PATH"};
  return compiler;
}

TEST(BuildPlanTest, CpuLinksAskForTheChosenLinkerUnlessTheUserDecides) {
  EXPECT_TRUE(Has(MakeBuildPlan(CpuRequest(3), Env(), CompilerWithGold()).graph.link_command,
                  "-fuse-ld=gold"));
  EXPECT_FALSE(
      Has(MakeBuildPlan(CpuRequest(3), Env(), FakeCompiler()).graph.link_command, "-fuse-ld=gold"));
  for (const char* flag : {"-fuse-ld=bfd", "-flto", "-flto=auto"}) {
    LoadRequest request = CpuRequest(3);
    request.extra_ldflags = {flag};
    BuildPlan plan = MakeBuildPlan(request, Env(), CompilerWithGold());
    EXPECT_FALSE(Has(plan.graph.link_command, "-fuse-ld=gold")) << flag;
  }
  LoadRequest lto = CpuRequest(3);
  lto.extra_cflags = {"-flto"};
  EXPECT_FALSE(
      Has(MakeBuildPlan(lto, Env(), CompilerWithGold()).graph.link_command, "-fuse-ld=gold"));
}

TEST(BuildPlanTest, UserCodeFollowsTheRequestedLevelTheWrapperIsBuiltLight) {
  BuildPlan plan = MakeBuildPlan(CpuRequest(3), Env(), FakeCompiler());
  EXPECT_TRUE(Has(plan.user_flags, "-O3"));
  EXPECT_TRUE(Has(plan.wrapper_flags, "-O1"));
  EXPECT_FALSE(Has(plan.wrapper_flags, "-O3"));
  // The wrapper's flags reach its compile command (and so the cache key); the frame runtime's
  // command is the same whatever the user's level above zero, so every module shares its object.
  const build::CompileStep& wrapper = plan.graph.compiles[plan.graph.compiles.size() - 2];
  EXPECT_EQ(wrapper.source, "ffi_wrapper.cc");
  EXPECT_TRUE(Has(wrapper.command, "-O1"));
  const build::CompileStep& runtime = plan.graph.compiles.back();
  EXPECT_EQ(runtime.source, "ffi_frame_runtime.cc");
  EXPECT_TRUE(Has(runtime.command, "-O1"));
  EXPECT_EQ(MakeBuildPlan(CpuRequest(1), Env(), FakeCompiler()).graph.compiles.back().command,
            runtime.command);
}

TEST(BuildPlanTest, OpenMpAndPthreadInTheCompileFlagsReachTheLinkOnce) {
  LoadRequest request = CpuRequest(3);
  request.extra_cflags = {"-fopenmp", "-DN=4", "-pthread", "-fopenmp"};
  BuildPlan plan = MakeBuildPlan(request, Env(), FakeCompiler());
  EXPECT_EQ(std::count(plan.graph.link_flags.begin(), plan.graph.link_flags.end(), "-fopenmp"), 1);
  EXPECT_TRUE(Has(plan.graph.link_flags, "-pthread"));
  EXPECT_FALSE(Has(plan.graph.link_flags, "-DN=4"));
  // Given in both lists, it is linked once, where the user put it.
  request.extra_ldflags = {"-fopenmp=libgomp", "-fopenmp"};
  plan = MakeBuildPlan(request, Env(), FakeCompiler());
  EXPECT_EQ(std::count(plan.graph.link_flags.begin(), plan.graph.link_flags.end(), "-fopenmp"), 1);
  EXPECT_EQ(plan.graph.link_flags.back(), "-fopenmp");
}

TEST(BuildPlanTest, TheCompileDatabaseDescribesEachSourceFileAndNoInlineSource) {
  const std::string dir = testing_util::MakeTestTempDir("jaxcc-compile-db");
  ASSERT_FALSE(dir.empty());
  std::string file = dir + "/ops.cc";
  ASSERT_TRUE(WriteFile(file, "void f() {}\n").ok());
  LoadRequest request = CpuRequest(2);
  EXPECT_EQ(MakeBuildPlan(request, Env(), FakeCompiler()).graph.compile_database, "");
  request.sources = {{"<inline>", "void f() {}"}, {file, "void f() {}\n"}};
  BuildPlan plan = MakeBuildPlan(request, Env(), FakeCompiler());
  const std::string& db = plan.graph.compile_database;
  EXPECT_NE(db.find("\"file\": \"" + file + "\""), std::string::npos) << db;
  EXPECT_NE(db.find("\"directory\": \"" + dir + "\""), std::string::npos) << db;
  EXPECT_NE(db.find("\"jaxcc/jaxcc.h\""), std::string::npos) << db;
  EXPECT_NE(db.find("\"-O2\""), std::string::npos) << db;  // the unit's own flags
  EXPECT_EQ(db.find("<inline>"), std::string::npos) << db;
  (void)RemoveTree(dir);
}

TEST(BuildPlanTest, OptimisedKernelUnitsAlignLoopsWhereTheCompilerTakesIt) {
  auto flags = [](int level, const std::string& version) {
    toolchain::HostCompiler compiler{{"/usr/bin/cxx"}, "/usr/bin/cxx", version};
    return MakeBuildPlan(CpuRequest(level), Env(), compiler).user_flags;
  };
  for (const char* version : {"g++ (Debian 12.2.0-14) 12.2.0", "c++ (GCC) 11.4.1",
                              "Ubuntu clang version 16.0.6", "clang version 13.0.0"}) {
    EXPECT_TRUE(Has(flags(3, version), "-falign-loops=32")) << version;
    EXPECT_TRUE(Has(flags(2, version), "-falign-loops=32")) << version;
    EXPECT_FALSE(Has(flags(1, version), "-falign-loops=32")) << version;
  }
  for (const char* version : {"clang version 12.0.1", "icpx 2024.1", ""}) {
    EXPECT_FALSE(Has(flags(3, version), "-falign-loops=32")) << version;
  }
  // User code only: the wrapper and the frame runtime keep one command for every module.
  BuildPlan plan = MakeBuildPlan(CpuRequest(3), Env(), FakeCompiler());
  EXPECT_FALSE(Has(plan.wrapper_flags, "-falign-loops=32"));
  EXPECT_FALSE(Has(plan.runtime_flags, "-falign-loops=32"));
}

TEST(BuildPlanTest, LevelZeroKeepsEverythingUnoptimisedForDebugging) {
  BuildPlan plan = MakeBuildPlan(CpuRequest(0), Env(), FakeCompiler());
  EXPECT_TRUE(Has(plan.user_flags, "-O0"));
  EXPECT_TRUE(Has(plan.wrapper_flags, "-O0"));
  EXPECT_FALSE(Has(plan.wrapper_flags, "-O1"));
  EXPECT_TRUE(Has(plan.runtime_flags, "-O0"));
}

// Index of `flag` followed by `value` in `flags`, or -1.
long IndexOfPair(const std::vector<std::string>& flags, const std::string& flag,
                 const std::string& value) {
  for (size_t i = 0; i + 1 < flags.size(); ++i) {
    if (flags[i] == flag && flags[i + 1] == value) return static_cast<long>(i);
  }
  return -1;
}

// User code includes no XLA header unless it asks for one (decision 2), but one that does (as
// some of brainevent 0.3's sources do) finds XLA's FFI headers after every directory of the
// user's own; jaxcc's kernel headers come before them all (decision 89).
void ExpectKernelIncludeOrder(const std::vector<std::string>& flags) {
  const long jaxcc = IndexOfPair(flags, "-I", "/jaxcc/include");
  const long user = IndexOfPair(flags, "-I", "/user/include");
  const long xla = IndexOfPair(flags, "-isystem", "/jaxlib/include");
  ASSERT_GE(jaxcc, 0);
  ASSERT_GE(user, 0);
  ASSERT_GE(xla, 0);
  EXPECT_LT(jaxcc, user);
  EXPECT_LT(user, xla);
  EXPECT_EQ(IndexOfPair(flags, "-isystem", "/jaxcc/include"), -1)
      << "a -isystem copy would make gcc drop the -I one";
}

TEST(BuildPlanTest, KernelHeadersFirstXlaHeadersLast) {
  LoadRequest request = CpuRequest(2);
  request.extra_include_paths.push_back("/user/include");
  BuildPlan plan = MakeBuildPlan(request, Env(), FakeCompiler());
  EXPECT_TRUE(Has(plan.wrapper_flags, "/jaxlib/include"));
  ExpectKernelIncludeOrder(plan.user_flags);
  EXPECT_TRUE(Has(plan.user_flags, "-O2"));
}

TEST(BuildPlanTest, NvccGetsTheSameIncludeOrder) {
  LoadRequest request = CpuRequest(3);
  request.platform = "cuda";
  request.sources[0].label = "k.cu";
  request.extra_include_paths.push_back("/user/include");
  CudaToolchain cuda{{"/cuda/bin/nvcc", "release 13.0", "/cuda", "test"}, {"80"}};
  BuildPlan plan = MakeBuildPlan(request, Env(), FakeCompiler(), &cuda);
  ExpectKernelIncludeOrder(plan.cuda_flags);
  ExpectKernelIncludeOrder(plan.graph.compiles.front().command);
}

TEST(BuildPlanTest, CudaLinksKeepTheDriversLinker) {
  LoadRequest request = CpuRequest(3);
  request.platform = "cuda";
  request.sources[0].label = "k.cu";
  CudaToolchain cuda{{"/cuda/bin/nvcc", "release 13.0", "/cuda", "test"}, {"80"}};
  BuildPlan plan = MakeBuildPlan(request, Env(), CompilerWithGold(), &cuda);
  EXPECT_FALSE(Has(plan.graph.link_command, "-fuse-ld=gold"));
}

LoadRequest CudaRequest(size_t cuda_files) {
  LoadRequest request = CpuRequest(3);
  request.platform = "cuda";
  request.sources.clear();
  for (size_t i = 0; i < cuda_files; ++i) request.sources.push_back({"k.cu", "void f() {}"});
  request.sources.push_back({"host.cc", "void g() {}"});
  return request;
}

// The scheduling flags of every nvcc step ("" when none), in order.
std::vector<std::string> NvccThreadsOf(const LoadRequest& request, std::vector<std::string> archs,
                                       int workers, const std::string& release = "release 13.0") {
  CudaToolchain cuda{{"/cuda/bin/nvcc", release, "/cuda", "test"}, std::move(archs)};
  BuildEnvironment env = Env();
  env.ninja_workers = workers;
  BuildPlan plan = MakeBuildPlan(request, env, FakeCompiler(), &cuda);
  std::vector<std::string> found;
  for (const build::CompileStep& step : plan.graph.compiles) {
    if (step.command.front() != "/cuda/bin/nvcc") {
      EXPECT_TRUE(step.scheduling_flags.empty()) << step.source;
      continue;
    }
    // Never in the command: that is what the object cache and the module's key are made of.
    EXPECT_FALSE(Has(step.command, "--threads")) << step.source;
    EXPECT_FALSE(Has(plan.cuda_flags, "--threads"));
    std::string joined;
    for (const std::string& flag : step.scheduling_flags)
      joined += (joined.empty() ? "" : " ") + flag;
    found.push_back(joined);
  }
  return found;
}

TEST(BuildPlanTest, NvccBuildsSeveralArchitecturesOnTheWorkersTheBuildHas) {
  using Flags = std::vector<std::string>;
  EXPECT_EQ(NvccThreadsOf(CudaRequest(1), {"80", "90"}, 2,
                          "Cuda compilation tools, release 13.0, V13.0.88"),
            Flags({"--threads 2"}));
  EXPECT_EQ(NvccThreadsOf(CudaRequest(1), {"70", "80", "90"}, 16), Flags({"--threads 3"}));
  EXPECT_EQ(NvccThreadsOf(CudaRequest(1), {"70", "80", "90"}, 2), Flags({"--threads 2"}));
  // One architecture, one worker, or the workers already shared out among the units: nothing.
  EXPECT_EQ(NvccThreadsOf(CudaRequest(1), {"90"}, 16), Flags({""}));
  EXPECT_EQ(NvccThreadsOf(CudaRequest(1), {"80", "90"}, 1), Flags({""}));
  EXPECT_EQ(NvccThreadsOf(CudaRequest(2), {"80", "90"}, 2), Flags({"", ""}));
  EXPECT_EQ(NvccThreadsOf(CudaRequest(2), {"80", "90"}, 4), Flags({"--threads 2", "--threads 2"}));
  // nvcc before 11.2 has no --threads.
  EXPECT_EQ(NvccThreadsOf(CudaRequest(1), {"80", "90"}, 4, "release 11.1"), Flags({""}));
  EXPECT_EQ(NvccThreadsOf(CudaRequest(1), {"80", "90"}, 4, "release 11.2"), Flags({"--threads 2"}));
  EXPECT_EQ(NvccThreadsOf(CudaRequest(1), {"80", "90"}, 4, "garbled"), Flags({""}));
}

}  // namespace
}  // namespace jaxcc::pipeline
