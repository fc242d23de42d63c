// The frame runtime's feature set (decision 161c): a CPU module's runtime instantiates the decoder
// with only the FFI lifecycle features its functions take; CUDA's carries every one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/ffi_wrapper.h"
#include "codegen/golden_for_test.h"

namespace jaxcc::codegen {
namespace {

using argspec::FunctionSpec;
using argspec::ParamKind;

FunctionSpec Taking(const std::string& name, ParamKind extra) {
  FunctionSpec spec;
  spec.name = name;
  spec.params = {{ParamKind::kArg, "x", {}}, {ParamKind::kRet, "y", {}}};
  if (extra != ParamKind::kArg) spec.params.push_back({extra, "extra", {}});
  return spec;
}

// The line of the runtime that names the feature set.
std::string RunFrameLine(const std::string& runtime) {
  const auto at = runtime.find("  return RunFrameWith<");
  return runtime.substr(at, runtime.find('\n', at) - at);
}

TEST(FrameFeatures, FollowTheFunctionsThatTakeThem) {
  const FrameFeatures none = FrameFeaturesOf({Taking("plain", ParamKind::kArg)});
  EXPECT_FALSE(none.async || none.state || none.pool || none.scratch_alloc);
  const FrameFeatures some =
      FrameFeaturesOf({Taking("plain", ParamKind::kArg), Taking("threaded", ParamKind::kPool),
                       Taking("later", ParamKind::kAsync)});
  EXPECT_TRUE(some.async && some.pool);
  EXPECT_FALSE(some.state || some.scratch_alloc);
  const FrameFeatures all =
      FrameFeaturesOf({Taking("a", ParamKind::kAsync), Taking("s", ParamKind::kState),
                       Taking("p", ParamKind::kPool), Taking("m", ParamKind::kScratchAlloc)});
  EXPECT_TRUE(all.async && all.state && all.pool && all.scratch_alloc);
  // A workspace (jaxcc::Scratch) is a hidden result buffer: no lifecycle feature.
  const FrameFeatures workspace = FrameFeaturesOf({Taking("w", ParamKind::kScratch)});
  EXPECT_FALSE(workspace.async || workspace.state || workspace.pool || workspace.scratch_alloc);
}

TEST(FrameFeatures, CpuRuntimeNamesExactlyTheCarriedSet) {
  EXPECT_EQ(RunFrameLine(FrameRuntimeSource("cpu", FrameFeatures{false, false, false, false})),
            "  return RunFrameWith<NoCallScope, 0u>(frame, spec, body, instantiate, slots);");
  EXPECT_EQ(RunFrameLine(FrameRuntimeSource("cpu", FrameFeatures{false, true, true, false})),
            "  return RunFrameWith<NoCallScope, kFrameState | kFramePool>(frame, spec, body, "
            "instantiate, slots);");
  EXPECT_EQ(RunFrameLine(FrameRuntimeSource("cpu", FrameFeatures{true, false, false, true})),
            "  return RunFrameWith<NoCallScope, kFrameAsync | kFrameScratchAllocator>(frame, "
            "spec, body, instantiate, slots);");
  // Every feature: RunFrameWith's default, the text the runtime had before feature sets.
  EXPECT_EQ(RunFrameLine(FrameRuntimeSource("cpu")),
            "  return RunFrameWith<NoCallScope>(frame, spec, body, instantiate, slots);");
}

TEST(FrameFeatures, DifferentSetsAreDifferentTextsAndOneSetOneText) {
  // The object cache keys the runtime by its text: each set is its own cached object, shared by
  // every module with that set.
  const FrameFeatures lean{false, false, false, false};
  const FrameFeatures async{true, false, false, false};
  EXPECT_NE(FrameRuntimeSource("cpu", lean), FrameRuntimeSource("cpu", async));
  EXPECT_NE(FrameRuntimeSource("cpu", lean), FrameRuntimeSource("cpu"));
  EXPECT_EQ(FrameRuntimeSource("cpu", FrameFeaturesOf({Taking("f", ParamKind::kArg)})),
            FrameRuntimeSource("cpu", FrameFeaturesOf({Taking("g", ParamKind::kScratch)})));
}

TEST(FrameFeatures, CudaRuntimeCarriesEveryFeature) {
  EXPECT_EQ(FrameRuntimeSource("cuda", FrameFeatures{false, false, false, false}),
            FrameRuntimeSource("cuda"));
}

TEST(FrameFeatures, LeanCpuRuntimeGolden) {
  ExpectGolden("cpu_frame_runtime_lean.golden.cc",
               FrameRuntimeSource("cpu", FrameFeatures{false, false, false, false}));
}

}  // namespace
}  // namespace jaxcc::codegen
