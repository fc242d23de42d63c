"""XLACustomKernel: one JAX primitive over many kernel backends (jaxcc C++, Numba, Pallas, Warp,
Triton, Numba-CUDA), with vmap, autodiff, a registry and benchmarking."""

from .autodiff import defjvp
from .batching import general_batching_rule, vectorized_batching_rule
from .benchmark.config import BenchmarkConfig, BenchmarkRecord
from .benchmark.result import BenchmarkResult
from .benchmark.timing import benchmark_function
from .bridges.numba_cpu import numba_kernel
from .bridges.numba_cuda import numba_cuda_kernel
from .bridges.triton import triton_kernel
from .kernel_entry import KernelEntry
from .primitive import XLACustomKernel
from .registry import get_all_primitive_names, get_primitives_by_tags, get_registry
from .selection import clear_backends, get_backend, set_backend

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
