"""Typed exceptions. Every jaxcc failure is a JaxccError; the subclass says which stage failed."""

from __future__ import annotations


class JaxccError(Exception):
    """Base class of every error jaxcc raises. `log_path` points at a full log when one exists."""

    def __init__(self, message: str, *, log_path: str | None = None):
        if log_path:
            message = f"{message}\nFull log: {log_path}"
        super().__init__(message)
        self.log_path = log_path


class SpecError(JaxccError, ValueError):
    """A malformed arg_spec, module name, target prefix or `functions` argument, or a wrong value
    given to an XLACustomKernel registration method."""


class SpecTypeError(SpecError, TypeError):
    """An argument of the wrong type given to a registration method (`def_kernel` and its
    shorthands, `def_call`, rule setters): a `TypeError`, and a `SpecError` as before."""


class SignatureError(JaxccError, ValueError):
    """The C++ source cannot be read, or its signature disagrees with the spec."""


class CompileError(JaxccError, RuntimeError):
    """The compiler or linker rejected the code; the message starts at the first error."""


class ToolchainError(JaxccError, RuntimeError):
    """No usable compiler, ninja or header directory."""


class LoadError(JaxccError, RuntimeError):
    """A compiled library could not be loaded or lacks a handler symbol."""


class BundleError(LoadError):
    """A prebuilt bundle (`jaxcc build`) was refused by `load_library`: a missing, altered or
    truncated file, a manifest from a newer jaxcc, or a bundle built for another host, XLA FFI API
    version or GPU. Nothing from such a bundle is loaded; the message names both sides."""


class RegistrationError(JaxccError, RuntimeError):
    """brainevent's error for an FFI target name registered with different code. jaxcc registers
    changed code under versioned names instead (decision 155), so it raises none; the class stays
    for code that catches it (brainevent's `KernelRegistrationError` is this class)."""


class CacheError(JaxccError, OSError):
    """The cache directory cannot be used (permissions, disk full, lock timeout)."""


class CallError(JaxccError, TypeError):
    """A kernel was called with the wrong number of arrays, attributes or outputs."""


class CallValueError(CallError, ValueError):
    """A wrong value given to a kernel wrapper (`numba_cuda_kernel`'s launch configuration, a
    dtype its compiler lacks): a `ValueError`, as brainevent raises there, and a `CallError` as
    before."""


class DTypeMismatchError(CallError):
    """An input array, or an entry of `outs=`, has another dtype than the arg_spec declares for
    it (`arg:float32`, `ret:int32`; decision 158). Raised before the call is staged, so the
    traceback shows the caller's line; a `CallError`, hence a `TypeError` as JAX's own dtype
    errors are."""


class DeviceError(JaxccError, RuntimeError):
    """A kernel was called on a platform this process has no device for (a CUDA kernel without a
    GPU backend)."""


class CacheWarning(UserWarning):
    """The module loaded, but the cache could not keep it (read-only or full cache directory) or
    its housekeeping failed; the message says what to fix."""


class BackendError(JaxccError, ValueError):
    """An XLACustomKernel has no kernel for the requested backend or platform."""


class BackendWarning(UserWarning):
    """A `jaxcc.set_backend` choice does not apply to a primitive that lacks that backend; the
    primitive uses its default (warned once per primitive, platform and backend)."""


class ReloadWarning(UserWarning):
    """A module was loaded again in this process with changed code: its functions run under new,
    versioned FFI target names, and the raw target names (and jitted functions traced before)
    still mean the first version. Warned once per module."""


class ShardingWarning(UserWarning):
    """A kernel without a sharding rule was called on sharded inputs: XLA gathers them to every
    device and runs the whole kernel there (warned once per function; docs/sharding.md)."""


class ShardingError(JaxccError, ValueError):
    """The same finding as ShardingWarning, raised when JAXCC_SHARDING_CHECK=error."""


class AutotuneError(JaxccError, RuntimeError):
    """Tuning found no trustworthy variant: every configuration's outputs disagree with the
    reference configuration's (decision 156b)."""


class AutotuneWarning(UserWarning):
    """Tuning left something out: a configuration that did not compile, a variant whose outputs
    disagree with the reference, a parameter the source never uses, or a spent time budget."""


class KernelError(JaxccError, RuntimeError):
    """A kernel reported a failure: a compiled kernel's JAXCC_CHECK/BE_CHECK, unsupported dtype or
    C++ exception during an eager call (`__cause__` is JAX's original error; under `jax.jit` JAX
    raises its own `JaxRuntimeError` with the same message), or an XLACustomKernel backend's
    generator or kernel failing (the message then names the other backends)."""


class KernelCheckError(JaxccError, AssertionError):
    """`jaxcc.assert_kernel_ok` found failed checks: the message lists every failed row and the
    whole table; `report` is the `KernelReport`. An AssertionError, so pytest shows it as a
    failed assertion."""

    def __init__(self, message: str, report=None):
        super().__init__(message)
        self.report = report


class NotDifferentiableError(JaxccError, ValueError, NotImplementedError):
    """`jax.grad`, `jax.jvp`, `jax.vjp` or `jax.linear_transpose` reached a compiled kernel
    function, for which JAX has no derivative rule (an FFI call has none): the message says how to
    give it one (`jax.custom_vjp`, or an XLACustomKernel with a JVP rule; a transpose rule only
    where the JVP's tangents come from a kernel call). A `ValueError`, as JAX's own error is, and
    a `NotImplementedError`, as it was in older JAX."""

    @classmethod
    def from_jax(cls, function: str, target: str, error: Exception):
        """The error for JAX's refusal to differentiate `target`'s FFI call, or None when `error`
        is another one. (JAX 0.10-0.11 raise a ValueError "The FFI call to `t` cannot be
        differentiated"; older ones a NotImplementedError "Differentiation rule for 'ffi_call'
        not implemented".)"""
        text = str(error)
        if "cannot be differentiated" not in text and "rule for 'ffi_call'" not in text:
            return None
        return cls(
            f"{function}: JAX cannot differentiate the compiled kernel '{target}' (an FFI call "
            f"has no derivative rule; JAX said: {text.splitlines()[0] if text else error!r}). "
            "Give it one: wrap the call in jax.custom_vjp (or jax.custom_jvp) with the backward "
            "pass as JAX code or another kernel, or make it a jaxcc.XLACustomKernel with a JVP "
            "rule (def_jvp_rule2): one JVP rule whose tangents are JAX code is enough for "
            "jax.jvp and jax.grad alike; def_transpose_rule is needed only when the tangents "
            "are computed by a kernel call, which JAX cannot transpose (docs/custom_kernel.md, "
            "'Autodiff'). Where no gradient need flow through it, pass its inputs through "
            "jax.lax.stop_gradient."
        )


class KernelLoweringError(KernelError, CompileError):
    """An XLACustomKernel backend's kernel generator, or its kernel, raised while the call was
    traced (the original is `__cause__`): a `KernelError` as before, and a `CompileError`, which
    is brainevent's `KernelCompilationError`, the class brainevent raises there."""


class BenchmarkDataFnNotProvidedError(JaxccError, LookupError):
    """benchmark() was called on a primitive without def_benchmark_data()."""


class ExportError(JaxccError, ValueError):
    """jaxcc.export or jaxcc.deserialize was given something it cannot export or read (a kernel
    that only runs in the process that traced it, a foreign custom call, a blob that is not a
    jax.export artefact)."""


class MissingTargetError(LoadError):
    """A deserialized artefact calls FFI targets that nobody registered in this process;
    `missing` lists them. Load the modules (or bundles) that define them first."""

    def __init__(self, message: str, missing: list[str] | None = None):
        super().__init__(message)
        self.missing = list(missing or [])


# brainevent 0.3's names, so code written against it runs with `import jaxcc as brainevent`.
# Each is the jaxcc class raised where brainevent raised its namesake (docs/custom_kernel.md,
# "brainevent's exception names"). brainevent's KernelError is the base of all its kernel errors;
# jaxcc's KernelError keeps its own meaning (a kernel that failed), and JaxccError is the base.
KernelCompilationError = CompileError  # the compiler or linker rejected the code
KernelRegistrationError = RegistrationError  # a target name is live with different code
KernelLoadError = LoadError  # a compiled library could not be loaded
KernelFallbackExhaustedError = BackendError  # no kernel for the requested backend or platform

__all__ = [
    "BackendError",
    "BackendWarning",
    "BenchmarkDataFnNotProvidedError",
    "BundleError",
    "CacheError",
    "CacheWarning",
    "CallError",
    "CallValueError",
    "CompileError",
    "DTypeMismatchError",
    "DeviceError",
    "ExportError",
    "JaxccError",
    "KernelCheckError",
    "KernelCompilationError",
    "KernelError",
    "KernelFallbackExhaustedError",
    "KernelLoadError",
    "KernelLoweringError",
    "KernelRegistrationError",
    "LoadError",
    "MissingTargetError",
    "RegistrationError",
    "SignatureError",
    "ShardingError",
    "ShardingWarning",
    "SpecError",
    "SpecTypeError",
    "ToolchainError",
]
