// brainevent compatibility: kernel sources written for brainevent's "brainevent/common.h" compile
// unchanged against jaxcc. BE:: is jaxcc::, and the BE_* macros forward to the JAXCC_* ones.
//
// No #pragma once: see jaxcc/jaxcc.h (the CUDA macros appear once <cuda_runtime.h> is included).

#include "brainevent/check.h"
#include "brainevent/dispatch.h"
#include "brainevent/tensor.h"
#include "jaxcc/jaxcc.h"
