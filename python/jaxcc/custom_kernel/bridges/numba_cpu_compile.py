"""How the Numba CPU bridge compiles a kernel (numba_cpu.py asks): for the argument types its
buffers give, without the wrappers a Numba dispatcher adds for Python and C callers, which jaxcc
never calls (decision 127), and with the cyclic collector paused (decision 107)."""

from __future__ import annotations

import contextlib
import gc

from jaxcc.errors import CallError


def _same_array_type(wanted, given) -> bool:
    """An overload compiled for `given` takes the entry's `wanted` array unchanged when dtype,
    rank and layout agree: every layout has the same data model, but code compiled for a
    Fortran-order ('F') array indexes column-major whatever strides it is given, so it would read
    XLA's row-major buffers transposed (issue 38). 'C' and 'A' (any: it reads the strides, which
    the bridge fills in C order) fit; so does 'F' at rank 0 or 1, where the orders agree."""
    return (
        getattr(given, "ndim", None) == wanted.ndim
        and getattr(given, "dtype", None) == wanted.dtype
        and (getattr(given, "layout", "C") in ("C", "A") or wanted.ndim <= 1)
    )


def _layout_hint(kernel, arg_types) -> str:
    """Why no explicit signature fit, where one differs only in array layout."""
    for signature in kernel.overloads:
        if len(signature) == len(arg_types) and all(
            getattr(g, "ndim", None) == w.ndim and getattr(g, "dtype", None) == w.dtype
            for w, g in zip(arg_types, signature, strict=True)
        ):
            return (
                f" ({', '.join(str(t) for t in signature)} matches in dtype and rank but takes "
                "a Fortran-order array, and XLA's buffers are C-order (row-major): declare "
                "C-order arrays, e.g. float32[:, ::1], or any-layout ones, float32[:, :])"
            )
    return ""


@contextlib.contextmanager
def collector_paused():
    """Numba's compile allocates tens of thousands of short-lived container objects; with the
    cyclic collector on, they run many young-generation collections, and every tenth of those
    may start a full collection of the whole heap (JAX's and Numba's modules: ~0.1 s on the
    2-core machine) inside the compile. Paused, the churn counts as one young collection when it
    resumes, so a sweep of new kernels triggers far fewer full collections (decision 107).
    Restored only when this call paused it; callers hold `_lock`, so calls do not interleave."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def compile_kernel(kernel, arg_types):
    """(Numba's compile result for these argument types, the types it was compiled for)."""
    if kernel._can_compile:
        existing = kernel.overloads.get(arg_types)
        if existing is None:
            existing = _compile_bare(kernel, arg_types)
        if existing is not None:
            return existing, arg_types
        kernel.compile(arg_types)
        return kernel.overloads[arg_types], arg_types
    # Explicit signatures (`@njit("void(f4[:], f4[:])")`) disable compiling: use the overload
    # whose arrays match in dtype, rank and layout (`_same_array_type`).
    for signature, result in kernel.overloads.items():
        if len(signature) == len(arg_types) and all(
            _same_array_type(w, g) for w, g in zip(arg_types, signature, strict=True)
        ):
            return result, signature
    declared = ", ".join(str(s) for s in kernel.overloads) or "none"
    raise CallError(
        f"numba_kernel {kernel.__name__}: no compiled signature takes "
        f"({', '.join(str(t) for t in arg_types)}) and the kernel was given explicit signatures "
        f"({declared}){_layout_hint(kernel, arg_types)}; add one, or decorate it with plain "
        "@numba.njit"
    )


def _compile_bare(kernel, arg_types):
    """The kernel compiled as its dispatcher would, without the CPython and cfunc wrappers that
    a dispatcher's compile adds and jaxcc never calls (a third of the compile: decision 127);
    None where this Numba's dispatcher lacks the steps, and the caller compiles through it."""
    from numba.core import compiler
    from numba.core.compiler_lock import global_compiler_lock

    try:
        function_compiler = kernel._compiler
        descriptor = function_compiler.targetdescr
        flags = compiler.Flags()
        descriptor.options.parse_as_flags(flags, function_compiler.targetoptions)
        flags = function_compiler._customize_flags(flags)
        flags.no_cpython_wrapper = True
        flags.no_cfunc_wrapper = True
        implementation = function_compiler._get_implementation(arg_types, {})
        typing, target = descriptor.typing_context, descriptor.target_context
        pipeline, local_types = function_compiler.pipeline_class, function_compiler.locals
    except AttributeError:
        return None
    with global_compiler_lock:
        result = compiler.compile_extra(typing, target, implementation, args=arg_types,
                                        return_type=None, flags=flags, locals=local_types,
                                        pipeline_class=pipeline)  # fmt: skip
    if result.typing_error is not None and not flags.enable_pyobject:
        raise result.typing_error
    return result
