// Golden-file tests: the generated text is part of jaxcc's contract (it is what users see in a
// kept build directory). Run with JAXCC_UPDATE_GOLDEN=1 to rewrite the expected files.
#include <gtest/gtest.h>

#include "codegen/ffi_wrapper.h"
#include "codegen/golden_for_test.h"
#include "codegen/kernel_unit.h"

namespace jaxcc::codegen {
namespace {

using argspec::AttrType;
using argspec::FunctionSpec;
using argspec::Param;
using argspec::ParamKind;

FunctionSpec ScaleBy() {
  FunctionSpec spec;
  spec.name = "scale_by";
  spec.params = {{ParamKind::kArg, "x", {}},
                 {ParamKind::kRet, "out", {}},
                 {ParamKind::kAttr, "scale_factor", AttrType::kFloat32},
                 {ParamKind::kStream, "stream", {}}};
  return spec;
}

FunctionSpec Mixed() {
  FunctionSpec spec;
  spec.name = "mixed";
  spec.namespaces = {"ops", "detail"};
  spec.params = {{ParamKind::kAttr, "flag", AttrType::kBool},
                 {ParamKind::kRet, "first", {}},
                 {ParamKind::kArg, "a", {}},
                 {ParamKind::kAttr, "half", AttrType::kBFloat16},
                 {ParamKind::kArg, "b", {}},
                 {ParamKind::kRet, "second", {}},
                 {ParamKind::kAttr, "count", AttrType::kUInt64}};
  spec.params[2].dtype = argspec::ElementType::kFloat32;  // `arg:float32`: checked at the call
  spec.params[5].dtype = argspec::ElementType::kInt32;    // `ret:int32`
  return spec;
}

FunctionSpec NoInputs() {
  FunctionSpec spec;
  spec.name = "fill";
  spec.params = {{ParamKind::kRet, "out", {}}, {ParamKind::kAttr, "value", AttrType::kFloat64}};
  return spec;
}

TEST(CodegenGolden, CpuWrapper) {
  WrapperOptions options;
  options.module_name = "golden";
  ExpectGolden("cpu_wrapper.golden.cc",
               GenerateFfiWrapper({ScaleBy(), Mixed(), NoInputs()}, options));
}

TEST(CodegenGolden, CudaWrapperBindsStreamAndGraphTrait) {
  WrapperOptions options;
  options.module_name = "golden";
  options.platform = "cuda";
  std::string text = GenerateFfiWrapper({ScaleBy()}, options);
  // The spec asks the decoder for XLA's stream and reports the command-buffer trait.
  EXPECT_NE(text.find("kAttrs_scale_by, true, ::jaxcc::detail::kFrameCommandBufferCompatible}"),
            std::string::npos);
  ExpectGolden("cuda_wrapper.golden.cc", text);
  options.allow_cuda_graph = false;
  EXPECT_EQ(GenerateFfiWrapper({ScaleBy()}, options).find("CommandBufferCompatible"),
            std::string::npos);
}

TEST(CodegenGolden, CudaRuntimeRunsOnTheStreamsDeviceAndChecksTheLaunch) {
  // The CUDA frame runtime wraps each body that takes a stream in CudaCallScope (the stream's
  // device current, a launch error the function left raised with its name); the CPU one has no
  // CUDA at all, and neither wrapper mentions it.
  std::string cuda = FrameRuntimeSource("cuda");
  EXPECT_NE(cuda.find("#include \"jaxcc/detail/cuda_call.h\""), std::string::npos);
  EXPECT_NE(cuda.find("return RunFrameWith<CudaCallScope>(frame, spec, body, instantiate, slots);"),
            std::string::npos);
  std::string cpu = FrameRuntimeSource("cpu");
  EXPECT_NE(cpu.find("return RunFrameWith<NoCallScope>("), std::string::npos);
  EXPECT_EQ(cpu.find("cuda"), std::string::npos);
  ExpectGolden("cuda_frame_runtime.golden.cc", cuda);
  WrapperOptions options;
  options.platform = "cuda";
  std::string text = GenerateFfiWrapper({ScaleBy()}, options);
  EXPECT_NE(text.find("jaxcc_bridge_scale_by(call.args, call.rets, "
                      "reinterpret_cast<std::int64_t>(call.stream), call.attr<float>(0));"),
            std::string::npos);
  EXPECT_EQ(text.find("Cuda"), std::string::npos);
  EXPECT_EQ(GenerateFfiWrapper({ScaleBy()}, WrapperOptions{}).find("cuda"), std::string::npos);
}

TEST(CodegenGolden, CpuWrapperPassesZeroForStream) {
  WrapperOptions options;
  std::string text = GenerateFfiWrapper({ScaleBy()}, options);
  EXPECT_NE(text.find("kAttrs_scale_by, false, 0}"), std::string::npos);
  EXPECT_NE(text.find("jaxcc_bridge_scale_by(call.args, call.rets, 0, call.attr<float>(0))"),
            std::string::npos);
}

TEST(CodegenGolden, OnlyTheFrameRuntimeReadsXlasHeader) {
  // The typed C++ API (ffi.h) took most of a cold build, and the C API's header with jaxcc's
  // decoder most of what was left: each module's wrapper includes frame_entry.h alone, and the
  // runtime, whose text is the same for every module, reads c_api.h (decision 128).
  for (const char* platform : {"cpu", "cuda"}) {
    WrapperOptions options;
    options.platform = platform;
    std::string text = GenerateFfiWrapper({ScaleBy(), Mixed(), NoInputs()}, options);
    EXPECT_EQ(text.find("xla/ffi/api/"), std::string::npos) << platform;
    EXPECT_NE(text.find("#include \"jaxcc/detail/frame_entry.h\""), std::string::npos);
    EXPECT_EQ(text.find("jaxcc/tensor.h"), std::string::npos) << platform;
    std::string runtime = FrameRuntimeSource(platform);
    EXPECT_EQ(runtime.find("xla/ffi/api/ffi.h"), std::string::npos) << platform;
    EXPECT_NE(runtime.find("#include \"jaxcc/detail/ffi_frame.h\""), std::string::npos);
  }
  EXPECT_EQ(FrameRuntimeSource("cpu"), FrameRuntimeSource("cpu"));
}

TEST(CodegenGolden, AttributesRecordTheirPlaceInXlasSortedOrder) {
  // Mixed declares flag, half, count; XLA passes them sorted: count, flag, half.
  std::string text = GenerateFfiWrapper({Mixed()}, WrapperOptions{});
  EXPECT_NE(text.find("{\"flag\", ::jaxcc::detail::FrameScalar::kPred, 1}"), std::string::npos);
  EXPECT_NE(text.find("{\"half\", ::jaxcc::detail::FrameScalar::kU16, 2}"), std::string::npos);
  EXPECT_NE(text.find("{\"count\", ::jaxcc::detail::FrameScalar::kU64, 0}"), std::string::npos);
}

TEST(CodegenGolden, KernelUnitKeepsUserLinesAndOrder) {
  std::string user =
      "// @BE scale_by\nvoid scale_by(const BE::Tensor x, BE::Tensor out,\n"
      "              float scale_factor, int64_t stream) {}\n";
  // As inference leaves it: the types read (the compiler proves them) and the stated line.
  FunctionSpec proven = ScaleBy();
  proven.params[0].cpp_type = "const ::jaxcc::Tensor";
  proven.params[1].cpp_type = "::jaxcc::Tensor";
  proven.params[2].cpp_type = "float";
  proven.line = 1;
  proven.column = 8;  // `scale_by` in `// @BE scale_by`: the proof's operand starts there
  ExpectGolden("kernel_unit.golden.cc", GenerateKernelUnit("<golden>", user, {proven, Mixed()}));
}

TEST(CodegenGolden, LabelsAreEscapedInLineDirectives) {
  std::string text = GenerateKernelUnit("/tmp/we\"ird\\dir/k.cc", "int x;", {});
  EXPECT_NE(text.find("#line 1 \"/tmp/we\\\"ird\\\\dir/k.cc\"\n"), std::string::npos);
}

FunctionSpec WholeMachine() {
  FunctionSpec spec;
  spec.name = "whole";
  spec.namespaces = {"ops"};
  spec.params = {{ParamKind::kArg, "x", {}},
                 {ParamKind::kRet, "y", {}},
                 {ParamKind::kPool, "pool", {}},
                 {ParamKind::kState, "table", {}},
                 {ParamKind::kAttr, "n", AttrType::kInt64}};
  return spec;
}

TEST(CodegenGolden, PoolStateAndAsyncAreAskedForOnlyWhereUsed) {
  FunctionSpec async_spec = NoInputs();
  async_spec.name = "later";
  async_spec.params.push_back({ParamKind::kAsync, "", {}});
  std::string wrapper = GenerateFfiWrapper({WholeMachine(), async_spec, ScaleBy()}, {});
  ExpectGolden("whole_machine_wrapper.golden.cc", wrapper);
  EXPECT_NE(wrapper.find("kAttrs_whole, false, 0, true, &kState_whole, false}"), std::string::npos);
  EXPECT_NE(wrapper.find("kAttrs_later, false, 0, false, nullptr, true}"), std::string::npos);
  EXPECT_NE(wrapper.find("kAttrs_scale_by, false, 0}"), std::string::npos);  // unchanged
  EXPECT_NE(wrapper.find("jaxcc_state_new_whole(call.attr<std::int64_t>(0))"), std::string::npos);
  EXPECT_NE(wrapper.find("RunFrame(frame, kSpec_whole, &Body_whole, &State_whole, "),
            std::string::npos);
  EXPECT_NE(wrapper.find("RunFrame(frame, kSpec_later, &Body_later, nullptr, "), std::string::npos);
  std::string unit = GenerateKernelUnit("<golden>", "", {WholeMachine(), async_spec});
  ExpectGolden("whole_machine_kernel_unit.golden.cc", unit);
  EXPECT_NE(unit.find("jaxcc_fn_whole(args[0], rets[0], *context.pool, "
                      "::jaxcc::detail::StateSlot{context.state}, attr0_n)"),
            std::string::npos);
  EXPECT_NE(unit.find("::jaxcc::detail::FunctionState<decltype(&::ops::whole)>::type"),
            std::string::npos);
  // Units without such functions do not include the context header.
  EXPECT_EQ(GenerateKernelUnit("<g>", "", {ScaleBy()}).find("call_context.h"), std::string::npos);
}

TEST(CodegenGolden, ScratchIsTheHiddenLastResultAndKeepsTheGraphTrait) {
  FunctionSpec spec = ScaleBy();
  spec.params.insert(spec.params.begin() + 2, {ParamKind::kScratch, "work", {}});
  WrapperOptions options;
  options.platform = "cuda";
  std::string wrapper = GenerateFfiWrapper({spec}, options);
  EXPECT_NE(wrapper.find("kRets_scale_by[] = {\"out\", \"work\"}"), std::string::npos);
  EXPECT_NE(wrapper.find("{\"scale_by\", 1, 2, 1,"), std::string::npos);
  EXPECT_NE(wrapper.find("::jaxcc::detail::kFrameCommandBufferCompatible}"), std::string::npos);
  std::string unit = GenerateKernelUnit("<g>", "", {spec});
  EXPECT_NE(unit.find("::jaxcc::Scratch{rets[1].data_ptr(), rets[1].nbytes()}"), std::string::npos);
}

// Run-time scratch asks XLA's allocator, which command buffers forbid: the CUDA handler drops
// the graph trait (decision 105); the CPU one allocates host memory.
TEST(CodegenGolden, ScratchAllocatorDropsTheGraphTrait) {
  FunctionSpec spec = ScaleBy();
  spec.params.insert(spec.params.begin() + 2, {ParamKind::kScratchAlloc, "alloc", {}});
  WrapperOptions options;
  options.platform = "cuda";
  std::string wrapper = GenerateFfiWrapper({spec}, options);
  EXPECT_NE(wrapper.find("kAttrs_scale_by, true, 0, false, nullptr, false, "
                         "::jaxcc::detail::FrameScratch::kDevice}"),
            std::string::npos)
      << wrapper;
  EXPECT_EQ(wrapper.find("CommandBufferCompatible"), std::string::npos);
  // The same function without the allocator keeps the trait.
  EXPECT_NE(GenerateFfiWrapper({ScaleBy()}, options).find("CommandBufferCompatible"),
            std::string::npos);
  options.platform = "cpu";
  EXPECT_NE(GenerateFfiWrapper({spec}, options).find("::jaxcc::detail::FrameScratch::kHost}"),
            std::string::npos);
  std::string unit = GenerateKernelUnit("<g>", "", {spec});
  EXPECT_NE(unit.find("jaxcc_fn_scale_by(args[0], rets[0], *context.allocator, attr0_scale_factor"),
            std::string::npos)
      << unit;
  EXPECT_NE(unit.find("call_context.h"), std::string::npos);
}

}  // namespace
}  // namespace jaxcc::codegen
