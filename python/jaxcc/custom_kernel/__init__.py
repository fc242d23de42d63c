"""XLACustomKernel: one JAX primitive over many kernel backends (jaxcc C++, Numba, Pallas, Warp,
Triton, Numba-CUDA), with vmap, autodiff, a registry and benchmarking."""

from jaxcc.custom_kernel.autodiff import defjvp
from jaxcc.custom_kernel.batching import general_batching_rule, vectorized_batching_rule
from jaxcc.custom_kernel.benchmark.config import BenchmarkConfig, BenchmarkRecord
from jaxcc.custom_kernel.benchmark.result import BenchmarkResult
from jaxcc.custom_kernel.benchmark.timing import benchmark_function
from jaxcc.custom_kernel.bridges.numba_cpu import numba_kernel
from jaxcc.custom_kernel.bridges.numba_cuda import numba_cuda_kernel
from jaxcc.custom_kernel.bridges.triton import triton_kernel
from jaxcc.custom_kernel.kernel_entry import KernelEntry
from jaxcc.custom_kernel.primitive import XLACustomKernel
from jaxcc.custom_kernel.registry import (
    get_all_primitive_names,
    get_primitives_by_tags,
    get_registry,
)
from jaxcc.custom_kernel.selection import clear_backends, get_backend, set_backend

__all__ = [
    "BenchmarkConfig",
    "BenchmarkRecord",
    "BenchmarkResult",
    "KernelEntry",
    "XLACustomKernel",
    "benchmark_function",
    "clear_backends",
    "defjvp",
    "general_batching_rule",
    "get_all_primitive_names",
    "get_backend",
    "get_primitives_by_tags",
    "get_registry",
    "numba_cuda_kernel",
    "triton_kernel",
    "numba_kernel",
    "set_backend",
    "vectorized_batching_rule",
]
