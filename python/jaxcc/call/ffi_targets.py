"""Registering compiled handlers as JAX FFI targets, idempotently, and new code under new names.

XLA keeps the first handler registered under a (name, platform) and cannot unregister it, so a
name can only ever point at one build. jaxcc remembers which build each of its targets came from
(the cache key and the library's file name, which carries the library's own SHA-256): the same
build again is a no-op. A module loaded again with other code (an edit rerun in a notebook, or a
header edit rebuilt under the same key) registers its functions under versioned names,
`<prefix>@<version>.<function>`, and its callables use those; the plain names keep meaning the
first version, for programs compiled against them, raw `jax.ffi.ffi_call`s and `jax.export`
artefacts (decision 155). Such a reload also clears JAX's caches of traces and executables, so
every jitted function traces again at its next call and sees the new callables, and what the
old versions compiled is let go (decision 169)."""

from __future__ import annotations

import hashlib
import threading
import warnings

from jaxcc.errors import ReloadWarning

_lock = threading.Lock()
_registered: dict[tuple[str, str], str] = {}  # (target, platform) -> build identity
_warned_modules: set[str] = set()  # modules whose reload with changed code was warned about

# Characters of a version: 48 bits, so two edits of one module in one process never share a
# name in practice, and the name stays readable in HLO dumps.
_VERSION_CHARS = 12


def versioned_prefix(prefix: str, key: str) -> str:
    """The target prefix of a later version of a module: `<prefix>@<first 12 chars of key>`."""
    return f"{prefix}@{key[:_VERSION_CHARS]}"


def build_identity(loaded) -> str:
    """What tells two builds apart: the cache key, and the library's file name, which carries
    the library's SHA-256 (`<name>.<sha>.so`), so a rebuild under the same key with other code
    (a header edit with force_rebuild) is a new build, and the same build from a copied bundle
    is not."""
    library = getattr(loaded, "library_path", "") or ""
    return f"{loaded.key}|{library.rpartition('/')[2]}"  # os.path.basename, without its calls


def register_module(module, loaded, *, replace: bool = False) -> None:
    """Registers every function of a loaded module as `<target_prefix>.<function>` on its
    platform, under one hold of the lock (a warm load of a large module is mostly this loop).

    When one of those names already holds another build's handler (the module's code changed
    since it was first loaded in this process), every function of this build is registered under
    a versioned prefix instead (`<prefix>@<key12>`, or a digest of the build identity when the
    key is the same) and `module.target_prefix` becomes that prefix, so the module's callables
    (made on first use) call the new code. Loading that same build again finds its versioned
    targets registered and is a no-op. `replace` (brainevent's flag) is accepted and changes
    nothing: no flag can make XLA swap a handler compiled programs may point at.

    A `stateful` function (a `jaxcc::State<T>&` parameter) has its one handler registered for
    XLA's instantiate stage too, where it builds the state (decision 96: the handler reads the
    stage from the call frame)."""
    import jax

    del replace
    register = jax.ffi.register_ffi_target
    platform = "cpu" if module.platform == "cpu" else "CUDA"
    first_version, key = module.target_prefix, loaded.key
    identity = build_identity(loaded)
    with _lock:
        prefix = _free_prefix(first_version, key, identity, module.specs, platform)
        module.target_prefix = prefix
        for name, spec in module.specs.items():
            target = f"{prefix}.{name}"
            if _registered.get((target, platform)) == identity:
                continue
            capsule = loaded.handler(name)
            handler = {"instantiate": capsule, "execute": capsule} if spec.has_state else capsule
            register(target, handler, platform=platform)
            _registered[(target, platform)] = identity
        reloaded = prefix != first_version
        warn = reloaded and module.name not in _warned_modules
        if warn:
            _warned_modules.add(module.name)
    if reloaded:
        _forget_old_traces()
    if warn:
        _warn_reload(module, first_version, prefix)


def _free_prefix(prefix: str, key: str, identity: str, specs, platform: str) -> str:
    """The first of the module's own prefix, `<prefix>@<key12>` and `<prefix>@<identity12>`
    whose targets are free or already hold this very build."""
    if not _holds_other_code(prefix, specs, platform, identity):
        return prefix  # every load of a module not edited in this process: no generator made
    for candidate in _versioned_prefixes(prefix, key, identity):
        if not _holds_other_code(candidate, specs, platform, identity):
            return candidate
    raise AssertionError(f"three builds of one identity under {prefix!r}")  # SHA-256 collision


def _versioned_prefixes(prefix: str, key: str, identity: str):
    """The prefixes tried after the module's own, in order. A generator: the digest is computed
    only when the first is taken too (a process's first SHA-256 costs tens of microseconds, a
    fifth of a warm load's registration)."""
    yield versioned_prefix(prefix, key)
    yield versioned_prefix(prefix, hashlib.sha256(identity.encode()).hexdigest())


def _holds_other_code(prefix: str, specs, platform: str, identity: str) -> bool:
    """Whether any `<prefix>.<function>` of these specs is registered from another build."""
    for name in specs:
        previous = _registered.get((f"{prefix}.{name}", platform))
        if previous is not None and previous != identity:
            return True
    return False


def _forget_old_traces() -> None:
    """After a reload with other code: JAX caches a jitted function's trace by the function, not
    by the module objects it reaches through globals, so `jax.jit(model)` (anew or not) would
    keep calling the old targets, and every old version's executables would stay in memory.
    JAX has no way to drop only the traces that reached the old callables; clearing its caches
    makes every jitted function trace again once (decision 169). Not while a trace is running:
    a load inside a traced function keeps the caches that trace is using."""
    import jax

    from jaxcc._jax_compat import trace_probes

    at_top_level = trace_probes[0]  # None on a JAX without the probe: clear, as documented
    if at_top_level is None or at_top_level():
        jax.clear_caches()


def _warn_reload(module, first_prefix: str, prefix: str) -> None:
    names = sorted(module.specs)
    old = ", ".join(f"'{first_prefix}.{n}'" for n in names[:3]) + (
        ", ..." if len(names) > 3 else ""
    )
    # stacklevel: _warn_reload (1) -> register_module (2) -> load_request.load (3) -> the loader's
    # request function (4) -> the public loader (5) -> the user's line (6).
    warnings.warn(
        f"jaxcc: module '{module.name}' was loaded again with changed code. Its functions now run "
        f"as FFI targets '{prefix}.<function>'. jaxcc cleared JAX's caches (jax.clear_caches()), "
        "so jitted functions trace again at their next call: those that reach the module through "
        "the name you assigned the new load to (mod = jaxcc.load_cpp_inline(...)) run the new "
        f"code. The raw target names {old} still run the first version, and callables kept from "
        "an older module object run that version: XLA cannot replace a registered handler. "
        "Warned once per module.",
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
