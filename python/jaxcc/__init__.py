"""jaxcc: inline C++/CUDA kernels as JAX FFI targets, with one call.

import jaxcc
mod = jaxcc.load_cpp_inline("ops", SRC, ["add_one"])
y = jax.jit(mod.add_one)(x)
"""

from . import _jax_compat  # noqa: F401  # isort: skip  (first: warns if JAX is older than tested)
from . import _core
from ._cache_dir import clear_cache, get_cache_dir, set_cache_dir
from ._loading import (
    include_dir,
    load_cpp_dir,
    load_cpp_file,
    load_cpp_inline,
    load_cuda_dir,
    load_cuda_file,
    load_cuda_inline,
)
from ._module import CompiledModule, KernelFunction
from ._registry import registered_targets as list_registered_targets
from .custom_kernel import (
    BenchmarkConfig,
    BenchmarkRecord,
    BenchmarkResult,
    KernelEntry,
    XLACustomKernel,
    benchmark_function,
    clear_backends,
    defjvp,
    general_batching_rule,
    get_all_primitive_names,
    get_backend,
    get_primitives_by_tags,
    get_registry,
    numba_cuda_kernel,
    numba_kernel,
    set_backend,
    triton_kernel,
    vectorized_batching_rule,
)
from .errors import (
    BackendError,
    BenchmarkDataFnNotProvidedError,
    CacheError,
    CacheWarning,
    CallError,
    CompileError,
    DeviceError,
    JaxccError,
    KernelError,
    LoadError,
    RegistrationError,
    SignatureError,
    SpecError,
    ToolchainError,
)

__version__ = _core.version()

__all__ = [
    "BackendError",
    "BenchmarkConfig",
    "BenchmarkDataFnNotProvidedError",
    "BenchmarkRecord",
    "BenchmarkResult",
    "CacheError",
    "CacheWarning",
    "CallError",
    "CompileError",
    "CompiledModule",
    "DeviceError",
    "JaxccError",
    "KernelEntry",
    "KernelError",
    "KernelFunction",
    "LoadError",
    "RegistrationError",
    "SignatureError",
    "SpecError",
    "ToolchainError",
    "XLACustomKernel",
    "__version__",
    "benchmark_function",
    "clear_backends",
    "clear_cache",
    "defjvp",
    "general_batching_rule",
    "get_all_primitive_names",
    "get_backend",
    "get_cache_dir",
    "get_primitives_by_tags",
    "get_registry",
    "include_dir",
    "list_registered_targets",
    "load_cpp_dir",
    "load_cpp_file",
    "load_cpp_inline",
    "load_cuda_dir",
    "load_cuda_file",
    "load_cuda_inline",
    "numba_cuda_kernel",
    "triton_kernel",
    "numba_kernel",
    "set_backend",
    "set_cache_dir",
    "vectorized_batching_rule",
]
