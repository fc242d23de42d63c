// Portability macros shared by the jaxcc kernel headers (host compilers and nvcc alike).
#pragma once

/// Marks a function callable from host and device code under nvcc; empty for host compilers.
#if defined(__CUDACC__)
#define JAXCC_HOST_DEVICE __host__ __device__
#else
#define JAXCC_HOST_DEVICE
#endif

/// 1 while nvcc compiles the device side of a translation unit, where exceptions do not exist.
#if defined(__CUDA_ARCH__)
#define JAXCC_DEVICE_CODE 1
#else
#define JAXCC_DEVICE_CODE 0
#endif

/// 1 when the CUDA runtime API is visible: compiled by nvcc, or <cuda_runtime.h> already included.
#if defined(__CUDACC__) || defined(CUDART_VERSION)
#define JAXCC_HAS_CUDA_RUNTIME 1
#else
#define JAXCC_HAS_CUDA_RUNTIME 0
#endif

/// Branch hint for checks that almost never fail.
#if defined(__GNUC__) || defined(__clang__)
#define JAXCC_PREDICT_TRUE(x) (__builtin_expect(static_cast<bool>(x), 1))
#else
#define JAXCC_PREDICT_TRUE(x) (static_cast<bool>(x))
#endif
