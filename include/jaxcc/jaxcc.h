// Umbrella header for kernel sources: Tensor, DType, JAXCC_CHECK, dispatch macros, streams, and
// (when the CUDA runtime is visible) JAXCC_CUDA_CHECK and the kernel-launch checks.
//
// No #pragma once on purpose: every header below has its own guard, and cuda_check.h re-tests
// for the CUDA runtime on each inclusion, so including this header again after <cuda_runtime.h>
// (as brainevent-style sources do) still defines the CUDA macros.

#include "jaxcc/async.h"
#include "jaxcc/check.h"
#include "jaxcc/cuda_check.h"
#include "jaxcc/dispatch.h"
#include "jaxcc/dtype.h"
#include "jaxcc/macros.h"
#include "jaxcc/scalar_types.h"
#include "jaxcc/scratch.h"
#include "jaxcc/stream.h"
#include "jaxcc/tensor.h"
