"""jaxcc: inline C++/CUDA kernels as JAX FFI targets, with one call.

import jaxcc
mod = jaxcc.load_cpp_inline("ops", SRC, ["add_one"])
y = jax.jit(mod.add_one)(x)
"""

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
from .errors import (
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
    "CacheError",
    "CacheWarning",
    "CallError",
    "CompileError",
    "CompiledModule",
    "DeviceError",
    "JaxccError",
    "KernelError",
    "KernelFunction",
    "LoadError",
    "RegistrationError",
    "SignatureError",
    "SpecError",
    "ToolchainError",
    "__version__",
    "clear_cache",
    "get_cache_dir",
    "include_dir",
    "list_registered_targets",
    "load_cpp_dir",
    "load_cpp_file",
    "load_cpp_inline",
    "load_cuda_dir",
    "load_cuda_file",
    "load_cuda_inline",
    "set_cache_dir",
]
