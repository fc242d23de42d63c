// A host-compiler translation unit (no nvcc) that includes <cuda_runtime.h> first, as CUDA host
// code built by g++ does: the CUDA half types and the CUDA check macros are available.
// Compiled with -fsyntax-only by nvcc_compile_test.cc.
#include <cuda_runtime.h>

#include "brainevent/common.h"

static_assert(std::is_same_v<jaxcc::float16_t, __half>, "CUDA half type on the host side");
static_assert(std::is_same_v<BE::bfloat16_t, __nv_bfloat16>, "CUDA bfloat16 type");
static_assert(std::is_same_v<jaxcc::complex64_t, std::complex<float>>, "std::complex off nvcc");

void HostLaunchChecks(cudaStream_t stream) {
  JAXCC_CUDA_CHECK(cudaStreamSynchronize(stream));
  BE_CUDA_CHECK(cudaGetLastError());
  JAXCC_CHECK_KERNEL_LAUNCH();
  BE_CHECK_KERNEL_LAUNCH_SYNC();
}
