"""Test-only: brainevent's CUDA kernels built by BOTH kernel layers in one process, so a benchmark
can time the same operator through brainevent's own loader and through jaxcc side by side
(benchmarks/bench_brainevent_ops_gpu_paired.py), where separate processes differ by up to 30% on
identical programs (RESULTS.md, seventh session).

`install()` (before brainevent is imported) makes brainevent's `load_cuda_file` a tee: it loads
the file with brainevent's loader as usual, then with `jaxcc.load_cuda_file` under the target
prefix `jx_<module>` (same flags, brainevent's `include/` on the include path, as the shim does).
`jax.ffi.ffi_call` is wrapped so that inside `with jaxcc_targets():` a call of a teed module's
target `<module>.<fn>` lowers to `jx_<module>.<fn>`; outside it, to brainevent's own. A function
jitted and lowered inside the block therefore runs jaxcc's handler for the same kernel source,
everything else in the program being equal.
"""

from __future__ import annotations

import contextlib
import functools
import threading

from brainevent_on_jaxcc.hooks import patch_after_import, with_brainevent_include

PREFIX = "jx_"
teed_modules: set[str] = set()
_state = threading.local()


def _tee(original):
    @functools.wraps(original)
    def load_cuda_file(path, *args, name=None, **kwargs):
        import jaxcc

        module = original(path, *args, name=name, **kwargs)
        twin = with_brainevent_include(jaxcc.load_cuda_file)
        twin(path, *args, name=name, target_prefix=PREFIX + name, **kwargs)
        teed_modules.add(name)
        return module

    return load_cuda_file


def _remapping(ffi_call):
    @functools.wraps(ffi_call)
    def remapped(target_name, *args, **kwargs):
        module = target_name.split(".", 1)[0]
        if getattr(_state, "jaxcc", False) and module in teed_modules:
            target_name = PREFIX + target_name
        return ffi_call(target_name, *args, **kwargs)

    return remapped


@contextlib.contextmanager
def jaxcc_targets():
    """Inside: brainevent's ffi_calls of teed modules lower to jaxcc's twin targets."""
    previous = getattr(_state, "jaxcc", False)
    _state.jaxcc = True
    try:
        yield
    finally:
        _state.jaxcc = previous


def _tee_loaders(module) -> None:
    module.load_cuda_file = _tee(module.load_cuda_file)


def install() -> None:
    """Before brainevent is imported: its operator modules then import the tee by name."""
    patch_after_import(("brainevent._op",), _tee_loaders, "brainevent_on_jaxcc.twin")
    import jax

    jax.ffi.ffi_call = _remapping(jax.ffi.ffi_call)
