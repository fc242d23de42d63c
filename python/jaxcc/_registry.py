"""Registering compiled handlers as JAX FFI targets, idempotently and without silent clashes.

XLA keeps the first handler registered under a (name, platform) and cannot unregister it, so a
name can only ever point at one build. jaxcc remembers which cache key each of its targets came
from: the same key again is a no-op, a different key is a RegistrationError with the fix."""

from __future__ import annotations

import threading

from .errors import RegistrationError

_lock = threading.Lock()
_registered: dict[tuple[str, str], str] = {}  # (target, platform) -> cache key


def register_module(module, loaded, *, replace: bool = False) -> None:
    """Registers every function of a loaded module as `<target_prefix>.<function>` on its
    platform, under one hold of the lock (a warm load of a large module is mostly this loop).

    `replace` is brainevent's flag: it changes only the wording of the refusal, because no flag
    can make XLA swap a handler that compiled programs may already point at. A `stateful`
    function (a `jaxcc::State<T>&` parameter) has its one handler registered for XLA's
    instantiate stage too, where it builds the state (decision 96: the handler reads the stage
    from the call frame)."""
    import jax

    register = jax.ffi.register_ffi_target
    platform = "cpu" if module.platform == "cpu" else "CUDA"
    prefix, key = module.target_prefix, loaded.key
    with _lock:
        for name, spec in module.specs.items():
            target = f"{prefix}.{name}"
            previous = _registered.get((target, platform))
            if previous == key:
                continue
            if previous is not None:
                raise _clash(target, platform, module.name, replace)
            capsule = loaded.handler(name)
            handler = {"instantiate": capsule, "execute": capsule} if spec.has_state else capsule
            register(target, handler, platform=platform)
            _registered[(target, platform)] = key


def _clash(target: str, platform: str, module_name: str, replace: bool) -> RegistrationError:
    reason = "XLA cannot replace a registered handler"
    if replace:
        reason += ", so replace=True cannot either"
    return RegistrationError(
        f"FFI target '{target}' ({platform}) is already registered with different code in this "
        f"process, and {reason}. Load the changed module under another name (e.g. "
        f"name='{module_name}_v2') or pass target_prefix='...' to register its functions under "
        f"new target names."
    )


def registered_targets() -> list[str]:
    """Names of the targets jaxcc registered in this process, sorted."""
    with _lock:
        return sorted({target for target, _ in _registered})


def registered_targets_on(platform: str) -> set[str]:
    """Names of the targets jaxcc registered in this process for `platform` ("cpu" or "CUDA")."""
    with _lock:
        return {target for target, where in _registered if where == platform}
