"""jaxcc: inline C++/CUDA kernels as JAX FFI targets, with one call.

import jaxcc
mod = jaxcc.load_cpp_inline("ops", SRC, ["add_one"])
y = jax.jit(mod.add_one)(x)
"""

from typing import TYPE_CHECKING

from jaxcc import _jax_compat  # noqa: F401  # isort: skip  (first: warns if JAX is older than tested)
from jaxcc import _core
from jaxcc._jax_compat import JaxVersionWarning
from jaxcc.call.compiled_module import CompiledModule
from jaxcc.call.ffi_targets import registered_targets as list_registered_targets
from jaxcc.call.kernel_function import KernelFunction
from jaxcc.call.scratch import MAX_SCRATCH_BYTES
from jaxcc.environment.cache_dir import get_cache_dir, set_cache_dir
from jaxcc.environment.discovery import include_dir
from jaxcc.errors import (
    AutotuneError,
    AutotuneWarning,
    BackendError,
    BackendWarning,
    BenchmarkDataFnNotProvidedError,
    BundleError,
    CacheError,
    CacheWarning,
    CallError,
    CallValueError,
    CompileError,
    DeviceError,
    DTypeMismatchError,
    ExportError,
    JaxccError,
    KernelCheckError,
    KernelCompilationError,
    KernelError,
    KernelFallbackExhaustedError,
    KernelLoadError,
    KernelLoweringError,
    KernelRegistrationError,
    LoadError,
    MissingTargetError,
    NotDifferentiableError,
    RegistrationError,
    ReloadWarning,
    ShardingError,
    ShardingWarning,
    SignatureError,
    SpecError,
    SpecTypeError,
    ToolchainError,
)
from jaxcc.load.loaders import (
    load_cpp_dir,
    load_cpp_file,
    load_cpp_inline,
    load_cuda_dir,
    load_cuda_file,
    load_cuda_inline,
)
from jaxcc.maintenance.clear import clear_cache
from jaxcc.sharding.gather_check import set_sharding_check
from jaxcc.sharding.rule import ShardingRule
from jaxcc.tune.spec import Autotune

if TYPE_CHECKING:  # imported on first use at run time (below); type checkers see them here
    from jaxcc import custom_kernel as custom_kernel  # `as`: re-exported, not in __all__
    from jaxcc.check.check_kernel import KernelReport, assert_kernel_ok, check_kernel
    from jaxcc.cli.doctor import print_diagnostics
    from jaxcc.custom_kernel import (
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
    from jaxcc.deploy.bundle import load_library
    from jaxcc.deploy.export import deserialize, export

__version__ = _core.version()

# XLACustomKernel and its helpers (with the bridges, benchmarking and plotting behind them) are
# imported on first use, not by `import jaxcc` (PEP 562): they cost more than the rest of the
# package together, and a user who only loads C++ kernels never needs them. The deployment
# functions (load_library, export, deserialize) and check_kernel are deferred the same way.
# Every name stays reachable as `jaxcc.X` and `from jaxcc import X`, and is listed by `dir(jaxcc)`.
_CUSTOM_KERNEL_NAMES = frozenset(
    {
        "BenchmarkConfig", "BenchmarkRecord", "BenchmarkResult", "KernelEntry", "XLACustomKernel",
        "benchmark_function", "clear_backends", "defjvp", "general_batching_rule",
        "get_all_primitive_names", "get_backend", "get_primitives_by_tags", "get_registry",
        "numba_cuda_kernel", "numba_kernel", "set_backend", "triton_kernel",
        "vectorized_batching_rule",
    }
)  # fmt: skip


def __getattr__(name: str):
    # import_module with literal names: `from . import custom_kernel` would ask this very
    # function for the attribute first (recursion), and computed names are refused
    # (tests/test_no_eval.py).
    import importlib

    if name == "custom_kernel" or name in _CUSTOM_KERNEL_NAMES:
        custom_kernel = importlib.import_module("jaxcc.custom_kernel")
        value = custom_kernel if name == "custom_kernel" else getattr(custom_kernel, name)
    elif name == "print_diagnostics":  # `jaxcc doctor`'s report; probes tools when called
        value = importlib.import_module("jaxcc.cli.doctor").print_diagnostics
    elif name == "load_library":  # deployment: loading prebuilt bundles
        value = importlib.import_module("jaxcc.deploy.bundle").load_library
    elif name in ("export", "deserialize"):  # deployment: jax.export round trips
        value = getattr(importlib.import_module("jaxcc.deploy.export"), name)
    elif name in ("check_kernel", "assert_kernel_ok", "KernelReport"):  # a development tool
        value = getattr(importlib.import_module("jaxcc.check.check_kernel"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "Autotune",
    "AutotuneError",
    "AutotuneWarning",
    "BackendError",
    "BackendWarning",
    "BenchmarkConfig",
    "BenchmarkDataFnNotProvidedError",
    "BenchmarkRecord",
    "BenchmarkResult",
    "BundleError",
    "CacheError",
    "CacheWarning",
    "CallError",
    "CallValueError",
    "DTypeMismatchError",
    "CompileError",
    "CompiledModule",
    "MAX_SCRATCH_BYTES",
    "DeviceError",
    "ExportError",
    "JaxVersionWarning",
    "JaxccError",
    "KernelEntry",
    "KernelCheckError",
    "KernelCompilationError",
    "KernelError",
    "KernelFallbackExhaustedError",
    "KernelFunction",
    "KernelReport",
    "KernelLoadError",
    "KernelLoweringError",
    "KernelRegistrationError",
    "LoadError",
    "MissingTargetError",
    "NotDifferentiableError",
    "RegistrationError",
    "ReloadWarning",
    "ShardingError",
    "ShardingRule",
    "ShardingWarning",
    "SignatureError",
    "SpecError",
    "SpecTypeError",
    "ToolchainError",
    "XLACustomKernel",
    "__version__",
    "assert_kernel_ok",
    "benchmark_function",
    "check_kernel",
    "clear_backends",
    "clear_cache",
    "defjvp",
    "deserialize",
    "export",
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
    "load_library",
    "numba_cuda_kernel",
    "print_diagnostics",
    "triton_kernel",
    "numba_kernel",
    "set_backend",
    "set_cache_dir",
    "set_sharding_check",
    "vectorized_batching_rule",
]
