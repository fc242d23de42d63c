"""Registering compiled handlers as JAX FFI targets, idempotently, and new code under new names.

XLA keeps the first handler registered under a (name, platform) and cannot unregister it, so a
name can only ever point at one build. jaxcc remembers which cache key each of its targets came
from: the same key again is a no-op. A module loaded again with changed code (an edit rerun in a
notebook) registers its functions under versioned names, `<prefix>@<key>.<function>`, and its
callables use those; the plain names keep meaning the first version, for programs compiled
against them, raw `jax.ffi.ffi_call`s and `jax.export` artefacts (decision 155)."""

from __future__ import annotations

import threading
import warnings

from jaxcc.errors import ReloadWarning

_lock = threading.Lock()
_registered: dict[tuple[str, str], str] = {}  # (target, platform) -> cache key
_warned_modules: set[str] = set()  # modules whose reload with changed code was warned about

# Characters of the cache key that name a version: 48 bits, so two edits of one module in one
# process never share a name in practice, and the name stays readable in HLO dumps.
_VERSION_CHARS = 12


def versioned_prefix(prefix: str, key: str) -> str:
    """The target prefix of a later version of a module: `<prefix>@<first 12 chars of key>`."""
    return f"{prefix}@{key[:_VERSION_CHARS]}"


def register_module(module, loaded, *, replace: bool = False) -> None:
    """Registers every function of a loaded module as `<target_prefix>.<function>` on its
    platform, under one hold of the lock (a warm load of a large module is mostly this loop).

    When one of those names already holds another build's handler (the module's code changed
    since it was first loaded in this process), every function of this build is registered under
    `versioned_prefix(...)` instead and `module.target_prefix` becomes that prefix, so the
    module's callables (made on first use) call the new code. Loading that same code again finds
    its versioned targets registered and is a no-op. `replace` (brainevent's flag) is accepted
    and changes nothing: no flag can make XLA swap a handler compiled programs may point at.

    A `stateful` function (a `jaxcc::State<T>&` parameter) has its one handler registered for
    XLA's instantiate stage too, where it builds the state (decision 96: the handler reads the
    stage from the call frame)."""
    import jax

    del replace
    register = jax.ffi.register_ffi_target
    platform = "cpu" if module.platform == "cpu" else "CUDA"
    prefix, key = module.target_prefix, loaded.key
    with _lock:
        first_version = prefix
        if _holds_other_code(prefix, module.specs, platform, key):
            prefix = versioned_prefix(prefix, key)
            module.target_prefix = prefix
        for name, spec in module.specs.items():
            target = f"{prefix}.{name}"
            if _registered.get((target, platform)) == key:
                continue
            capsule = loaded.handler(name)
            handler = {"instantiate": capsule, "execute": capsule} if spec.has_state else capsule
            register(target, handler, platform=platform)
            _registered[(target, platform)] = key
        warn = prefix != first_version and module.name not in _warned_modules
        if warn:
            _warned_modules.add(module.name)
    if warn:
        _warn_reload(module, first_version, prefix)


def _holds_other_code(prefix: str, specs, platform: str, key: str) -> bool:
    """Whether any `<prefix>.<function>` of these specs is registered from another build."""
    for name in specs:
        previous = _registered.get((f"{prefix}.{name}", platform))
        if previous is not None and previous != key:
            return True
    return False


def _warn_reload(module, first_prefix: str, prefix: str) -> None:
    names = sorted(module.specs)
    old = ", ".join(f"'{first_prefix}.{n}'" for n in names[:3]) + (
        ", ..." if len(names) > 3 else ""
    )
    # stacklevel: _warn_reload (1) -> register_module (2) -> load_request.load (3) -> the loader's
    # request function (4) -> the public loader (5) -> the user's line (6).
    warnings.warn(
        f"jaxcc: module '{module.name}' was loaded again with changed code. Its functions now run "
        f"as FFI targets '{prefix}.<function>' (the module returned here and jax.jit traces made "
        f"from now on use them). XLA cannot replace a registered handler, so the raw target "
        f"names {old} still run the first version, and so do jitted functions traced before "
        "(call them again after re-tracing, e.g. jax.jit(f) anew). Warned once per module.",
        ReloadWarning,
        stacklevel=6,
    )


def registered_targets() -> list[str]:
    """Names of the targets jaxcc registered in this process, sorted."""
    with _lock:
        return sorted({target for target, _ in _registered})


def registered_targets_on(platform: str) -> set[str]:
    """Names of the targets jaxcc registered in this process for `platform` ("cpu" or "CUDA")."""
    with _lock:
        return {target for target, where in _registered if where == platform}
