// brainevent compatibility: BE_DISPATCH_* macros and BE::float16_t, bfloat16_t, complex64_t, ...
#pragma once

#include "brainevent/tensor.h"
#include "jaxcc/dispatch.h"

#define BE_DISPATCH_FLOATING(...) JAXCC_DISPATCH_FLOATING(__VA_ARGS__)
#define BE_DISPATCH_INTEGRAL(...) JAXCC_DISPATCH_INTEGRAL(__VA_ARGS__)
#define BE_DISPATCH_ALL_TYPES(...) JAXCC_DISPATCH_ALL_TYPES(__VA_ARGS__)
#define BE_DISPATCH_ALL(...) JAXCC_DISPATCH_ALL(__VA_ARGS__)

#if JAXCC_HAS_CUDA_HALF
#define BE_DISPATCH_FLOATING_AND_HALF(...) JAXCC_DISPATCH_FLOATING_AND_HALF(__VA_ARGS__)
#else
// brainevent dispatched float16/bfloat16 only under CUDA and made this an alias of FLOATING
// elsewhere; keep that, so host bodies that do arithmetic on the type still compile (a half
// input now throws BE::DTypeError instead of aborting).
#define BE_DISPATCH_FLOATING_AND_HALF(...) JAXCC_DISPATCH_FLOATING(__VA_ARGS__)
#endif
