// brainevent compatibility: BE_CHECK, and the CUDA checks BE_CUDA_CHECK,
// BE_CHECK_KERNEL_LAUNCH(_SYNC).
//
// No #pragma once: see jaxcc/jaxcc.h. The aliases expand lazily, so the CUDA ones work wherever
// the JAXCC_ macros they name are defined (any nvcc-compiled source).
#include "brainevent/tensor.h"
#include "jaxcc/check.h"
#include "jaxcc/cuda_check.h"

#ifndef BE_CHECK
/// Same as JAXCC_CHECK: throws jaxcc::CheckError (BE::CheckError) on the host; note the message
/// text is "CHECK failed at file:line: cond: msg", not brainevent's "[be] CHECK FAILED ... - msg".
#define BE_CHECK(condition) JAXCC_CHECK(condition)
#define BE_CUDA_CHECK(expr) JAXCC_CUDA_CHECK(expr)
#define BE_CHECK_KERNEL_LAUNCH() JAXCC_CHECK_KERNEL_LAUNCH()
#define BE_CHECK_KERNEL_LAUNCH_SYNC() JAXCC_CHECK_KERNEL_LAUNCH_SYNC()
#endif
