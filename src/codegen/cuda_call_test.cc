// jaxcc/detail/cuda_call.h, the scope every generated CUDA handler puts around the user's
// function, against a fake CUDA runtime defined below (no GPU, no CUDA toolkit needed): the
// device of XLA's stream is made current and restored, a stale error is not blamed on the
// function, and an error the function left is raised with its name.
#include "jaxcc/detail/cuda_call.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

struct FakeRuntime {
  int current_device = 0;
  int stream_device = 0;
  int last_error = 0;
  int capture_status = 0;  // cudaStreamCaptureStatusNone
  int stream_device_queries = 0;
  std::vector<int> set_device_calls;
};
FakeRuntime fake;

cudaStream_t StreamOn(int device) {
  fake.stream_device = device;
  return reinterpret_cast<cudaStream_t>(0x1000);
}

}  // namespace

extern "C" {
int cudaGetLastError(void) {
  int error = fake.last_error;
  fake.last_error = 0;
  return error;
}
int cudaGetDevice(int* device) {
  *device = fake.current_device;
  return 0;
}
int cudaSetDevice(int device) {
  fake.set_device_calls.push_back(device);
  fake.current_device = device;
  return 0;
}
const char* cudaGetErrorName(int error) {
  return error == 9 ? "cudaErrorInvalidConfiguration" : "cudaErrorLaunchFailure";
}
const char* cudaGetErrorString(int error) {
  return error == 9 ? "invalid configuration argument" : "unspecified launch failure";
}
int cudaStreamIsCapturing(cudaStream_t, int* status) {
  *status = fake.capture_status;
  return 0;
}
int cudaStreamGetDevice(cudaStream_t, int* device) {
  ++fake.stream_device_queries;
  if (fake.capture_status != 0) {
    fake.last_error = 900;  // cudaErrorStreamCaptureUnsupported: and the capture is invalidated
    return 900;
  }
  *device = fake.stream_device;
  return 0;
}
}

namespace jaxcc::detail {
namespace {

TEST(CudaCallScope, RunsOnTheDeviceOfXlasStreamAndRestoresTheCurrentOne) {
  fake = FakeRuntime{};
  fake.current_device = 0;
  {
    CudaCallScope scope(StreamOn(1), "vector_add");
    EXPECT_EQ(fake.current_device, 1);
    scope.Check();
  }
  EXPECT_EQ(fake.current_device, 0);
  EXPECT_EQ(fake.set_device_calls, (std::vector<int>{1, 0}));
}

TEST(CudaCallScope, LeavesTheDeviceAloneWhenItIsAlreadyTheStreams) {
  fake = FakeRuntime{};
  fake.current_device = 2;
  { CudaCallScope scope(StreamOn(2), "vector_add"); }
  EXPECT_TRUE(fake.set_device_calls.empty());
}

TEST(CudaCallScope, NeverAsksACapturingStreamForItsDevice) {
  // The runtime rejects cudaStreamGetDevice during a capture, and the rejection invalidates
  // XLA's CUDA graph: while capturing, the scope must not ask (nor switch devices).
  fake = FakeRuntime{};
  fake.capture_status = 1;  // cudaStreamCaptureStatusActive
  fake.current_device = 0;
  {
    CudaCallScope scope(StreamOn(1), "vector_add");
    EXPECT_NO_THROW(scope.Check());
  }
  EXPECT_EQ(fake.stream_device_queries, 0);
  EXPECT_TRUE(fake.set_device_calls.empty());
}

TEST(CudaCallScope, AnErrorTheFunctionLeftIsRaisedWithItsName) {
  fake = FakeRuntime{};
  CudaCallScope scope(StreamOn(0), "vector_add");
  fake.last_error = 9;  // what a <<<0, 256>>> launch leaves behind
  try {
    scope.Check();
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("in vector_add"), std::string::npos) << message;
    EXPECT_NE(message.find("cudaErrorInvalidConfiguration"), std::string::npos) << message;
    EXPECT_NE(message.find("skip the launch when numel() == 0"), std::string::npos) << message;
    EXPECT_EQ(e.code(), 9);
  }
  EXPECT_EQ(fake.last_error, 0);  // reset, so the next call starts clean
}

TEST(CudaCallScope, AnErrorLeftBeforeTheCallIsNotBlamedOnTheFunction) {
  fake = FakeRuntime{};
  fake.last_error = 4;
  CudaCallScope scope(StreamOn(0), "vector_add");
  EXPECT_NO_THROW(scope.Check());
}

TEST(CudaCallScope, AFunctionThatThrowsLeavesNoErrorBehindForXla) {
  // BE_CUDA_CHECK(cudaMemcpyAsync(...)) throws before Check() runs; the failed call's error is
  // still pending on the thread. With the shared runtime that is XLA's runtime, whose next
  // kernel load would fail on it, so the scope clears it on the way out.
  fake = FakeRuntime{};
  try {
    CudaCallScope scope(StreamOn(0), "bad_memcpy");
    fake.last_error = 1;  // cudaErrorInvalidValue, recorded by the failed memcpy
    throw CudaError("cudaMemcpyAsync failed", 1);
  } catch (const CudaError&) {
  }
  EXPECT_EQ(fake.last_error, 0);
}

TEST(CudaCallScope, AfterTheCheckTheDestructorAsksTheRuntimeNothing) {
  // Once Check() has read (and reset) the error, the destructor makes no second runtime call:
  // the common path of a handler call costs one cudaGetLastError after the function, not two.
  fake = FakeRuntime{};
  {
    CudaCallScope scope(StreamOn(0), "vector_add");
    scope.Check();
    fake.last_error = 7;  // a probe: a second cudaGetLastError would reset it
  }
  EXPECT_EQ(fake.last_error, 7);
}

}  // namespace
}  // namespace jaxcc::detail
