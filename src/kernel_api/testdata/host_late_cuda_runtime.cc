// A host-compiler translation unit (no nvcc) that includes jaxcc.h BEFORE <cuda_runtime.h>: the
// CUDA check macros must still appear once brainevent/common.h is included afterwards. (The
// 16-bit float types are fixed by the first inclusion and stay the raw-bits structs here.)
// Compiled with -fsyntax-only by nvcc_compile_test.cc.
#include "jaxcc/jaxcc.h"

#include <cuda_runtime.h>

#include "brainevent/common.h"

static_assert(std::is_same_v<jaxcc::float16_t, jaxcc::Float16Bits>, "decided at first include");

void HostLaunchChecks(cudaStream_t stream) {
  JAXCC_CUDA_CHECK(cudaStreamSynchronize(stream));
  BE_CUDA_CHECK(cudaGetLastError());
  JAXCC_CHECK_KERNEL_LAUNCH();
  BE_CHECK_KERNEL_LAUNCH_SYNC();
}
