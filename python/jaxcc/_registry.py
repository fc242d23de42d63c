"""Registering compiled handlers as JAX FFI targets, idempotently and without silent clashes.

XLA keeps the first handler registered under a (name, platform) and cannot unregister it, so a
name can only ever point at one build. jaxcc remembers which cache key each of its targets came
from: the same key again is a no-op, a different key is a RegistrationError with the fix."""

from __future__ import annotations

import threading

from .errors import RegistrationError

_lock = threading.Lock()
_registered: dict[tuple[str, str], str] = {}  # (target, platform) -> cache key


def register_target(
    target: str,
    capsule,
    platform: str,
    key: str,
    module_name: str,
    *,
    stateful: bool = False,
    replace: bool = False,
) -> None:
    """`replace` is brainevent's flag: it changes only the wording of the refusal, because no
    flag can make XLA swap a handler that compiled programs may already point at. A `stateful`
    function (a `jaxcc::State<T>&` parameter) has its one handler registered for XLA's
    instantiate stage too, where it builds the state."""
    import jax

    with _lock:
        previous = _registered.get((target, platform))
        if previous == key:
            return
        if previous is not None:
            reason = "XLA cannot replace a registered handler"
            if replace:
                reason += ", so replace=True cannot either"
            raise RegistrationError(
                f"FFI target '{target}' ({platform}) is already registered with different code "
                f"in this process, and {reason}. Load the changed module under another name (e.g. "
                f"name='{module_name}_v2') or pass target_prefix='...' to register its functions "
                f"under new target names."
            )
        # One handler for both stages: it reads the stage from the call frame (decision 96).
        handler = {"instantiate": capsule, "execute": capsule} if stateful else capsule
        jax.ffi.register_ffi_target(target, handler, platform=platform)
        _registered[(target, platform)] = key


def registered_targets() -> list[str]:
    """Names of the targets jaxcc registered in this process, sorted."""
    with _lock:
        return sorted({target for target, _ in _registered})


def registered_targets_on(platform: str) -> set[str]:
    """Names of the targets jaxcc registered in this process for `platform` ("cpu" or "CUDA")."""
    with _lock:
        return {target for target, where in _registered if where == platform}
