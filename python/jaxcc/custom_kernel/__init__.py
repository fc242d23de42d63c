"""XLACustomKernel: one JAX primitive over many kernel backends (jaxcc C++, Numba, Pallas, Warp,
Triton, Numba-CUDA), with vmap, autodiff, a registry and benchmarking."""

from .autodiff import defjvp
from .batching import general_batching_rule, vectorized_batching_rule
from .benchmark_config import BenchmarkConfig, BenchmarkRecord
from .benchmark_result import BenchmarkResult
from .benchmark_timing import benchmark_function
from .kernel_entry import KernelEntry
from .numba_bridge import numba_kernel
from .numba_cuda_bridge import numba_cuda_kernel
from .primitive import XLACustomKernel
from .registry import get_all_primitive_names, get_primitives_by_tags, get_registry
from .selection import clear_backends, get_backend, set_backend
from .triton_bridge import triton_kernel

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
