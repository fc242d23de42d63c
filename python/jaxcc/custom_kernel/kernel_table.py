"""KernelTable: an XLACustomKernel's kernels (platform -> backend -> KernelEntry), each platform's
default, and the rule that picks the backend a call uses.

The table is the only state the XLACustomKernel mixins share. `UsesKernelTable` declares it, and
the primitive's constructor passes it in, so every mixin shows where `kernel_table` comes from.
"""

from __future__ import annotations

import itertools
import threading
import warnings

from jaxcc.errors import BackendError, BackendWarning

from . import selection
from .kernel_entry import KernelEntry

_serials = itertools.count(1)


class KernelTable:
    """platform -> backend -> KernelEntry, in registration order, plus each platform's default.

    A platform's default is its first kernel, or the last one registered with `asdefault=True`,
    unless `set_default` chose another. A default other than the platform's first kernel, however
    it was chosen, is published to `selection`, where it becomes part of JAX's jit cache key: so
    already compiled functions pick it up, and a key never names two different defaults (a
    re-registration with `asdefault=True` that undid a `set_default` in the table but not in the
    key would find the executables compiled for the old default; issue 38).
    """

    def __init__(self, owner: str):
        self.owner = owner  # the primitive's name, for messages
        # Identifies this table in the jit key: names can repeat, serials cannot.
        self.key = (owner, next(_serials))
        self._lock = threading.Lock()
        self._kernels: dict[str, dict[str, KernelEntry]] = {}
        self._first: dict[str, str] = {}  # each platform's first kernel
        self._registered_defaults: dict[str, str] = {}  # first kernel, or asdefault=True
        self._chosen_defaults: dict[str, str] = {}  # set_default, where it differs
        self._warned: set[tuple[str, str]] = set()
        # Whether a call has read the selection: then something may be compiled with it.
        self._used = False

    # -- registration and defaults --------------------------------------------------------

    def add(self, entry: KernelEntry, asdefault: bool) -> None:
        """Stores `entry` (replacing the same backend on its platform); the first kernel of a
        platform, or one added with `asdefault=True`, becomes the platform's default."""
        before = self.selection(warn=False) if self._used else None
        self._store(entry, asdefault)
        # A registration that changes what a call would run now (a kernel for the backend
        # chosen with set_backend, a new platform) after calls were compiled is a switch that
        # no set of choices describes: a new epoch of the jit key (selection.py) retraces them.
        if before is not None and self.selection(warn=False) != before:
            selection.new_epoch()

    def _store(self, entry: KernelEntry, asdefault: bool) -> None:
        platform = entry.platform
        with self._lock:
            self._kernels.setdefault(platform, {})[entry.backend] = entry
            self._first.setdefault(platform, entry.backend)
            if not (asdefault or platform not in self._registered_defaults):
                return
            self._registered_defaults[platform] = entry.backend
            self._chosen_defaults.pop(platform, None)
            published = self._published(platform)
        selection.publish_default(self.key, platform, published)

    def set_default(self, platform: str, backend: str) -> None:
        kernels = self._kernels.get(platform)
        if not kernels:
            raise BackendError(
                f"{self.owner}: no kernels are registered for platform {platform!r}; register one "
                "with def_kernel first"
            )
        if backend not in kernels:
            raise BackendError(
                f"{self.owner}: backend {backend!r} is not registered for {platform}; registered: "
                f"{', '.join(kernels)}"
            )
        with self._lock:
            if backend == self._registered_defaults[platform]:
                self._chosen_defaults.pop(platform, None)
            else:
                self._chosen_defaults[platform] = backend
            published = self._published(platform)
        # Back at the first kernel, the key is the one it had before: functions compiled then
        # are reused.
        selection.publish_default(self.key, platform, published)

    def _published(self, platform: str) -> str | None:
        """What the jit key holds for `platform`: the default where it is not the first kernel."""
        default = self.default(platform)
        return None if default == self._first.get(platform) else default

    def default(self, platform: str) -> str | None:
        return self._chosen_defaults.get(platform, self._registered_defaults.get(platform))

    def defaults(self) -> dict[str, str]:
        return {p: self.default(p) for p in self._registered_defaults}

    # -- lookups --------------------------------------------------------------------------

    def backends(self, platform: str) -> list[str]:
        """Backends registered for `platform`, in registration order ([] if none)."""
        return list(self._kernels.get(platform, {}))

    def entries(self) -> dict[str, dict[str, KernelEntry]]:
        """A copy of platform -> backend -> KernelEntry."""
        return {p: dict(k) for p, k in self._kernels.items()}

    def by_platform(self) -> dict[str, list[str]]:
        """platform -> backends, for platforms with kernels (for messages and repr)."""
        return {p: list(k) for p, k in self._kernels.items() if k}

    def is_empty(self) -> bool:
        return not any(self._kernels.values())

    def has_backend(self, backend: str) -> bool:
        """Whether any platform has a kernel named `backend`."""
        return any(backend in kernels for kernels in self._kernels.values())

    # -- selection ------------------------------------------------------------------------

    def selection(
        self, warn: bool = True, explicit: str | None = None
    ) -> tuple[tuple[str, str], ...]:
        """(platform, backend) chosen now for every platform with kernels: the process-wide
        `jaxcc.set_backend` choice if this primitive has it, else the platform's default. A
        global choice this primitive lacks warns once per platform and backend (`warn`: for
        calls, which then mark the table used), unless the call names its backend (`explicit`,
        its `backend=`), which the warning gives as the fix."""
        if warn:
            self._used = True
        preferred = selection.global_backends()
        chosen = {}
        for platform, kernels in self._kernels.items():
            if not kernels:
                continue
            default = self.default(platform)
            backend = preferred.get(platform)
            if backend is not None and backend not in kernels:
                if warn and explicit is None:
                    self._warn_missing(platform, backend, default, kernels)
                backend = None
            chosen[platform] = backend or default
        return tuple(sorted(chosen.items()))

    def _warn_missing(self, platform: str, backend: str, default: str, kernels) -> None:
        with self._lock:
            if (platform, backend) in self._warned:
                return
            self._warned.add((platform, backend))
        warnings.warn(
            f"{self.owner}: jaxcc.set_backend({platform!r}, {backend!r}) does not apply to this "
            f"primitive, which has no {backend!r} kernel on {platform} (registered: "
            f"{', '.join(kernels)}); it falls back to its default {default!r}. Register a "
            f"kernel named {backend!r} for {platform}, or pass backend= on the call, to silence "
            "this warning.",
            BackendWarning,
            stacklevel=4,
        )

    def select(self, platform: str, explicit: str | None, chosen) -> KernelEntry:
        """The entry a call lowers on `platform`: `explicit` (a per-call `backend=`) when given,
        else the backend `chosen` (a `selection()` result) names for the platform."""
        available = self._kernels.get(platform, {})
        if not available:
            having = sorted(self.by_platform())
            raise BackendError(
                f"{self.owner}: no kernel is registered for platform {platform!r} (platforms "
                f"with kernels: {', '.join(having) or 'none'}). Register one with "
                f"def_kernel(backend, {platform!r}, kernel_generator), or run on a platform that "
                "has one (e.g. jax.jit(..., device=jax.devices('cpu')[0]))."
            )
        if explicit is not None:
            if explicit not in available:
                raise BackendError(
                    f"{self.owner}: backend {explicit!r} is not registered for {platform}; "
                    f"registered: {', '.join(available)}. Pass one of them as backend=..."
                )
            return available[explicit]
        backend = dict(chosen).get(platform)
        if backend not in available:  # defensive: a selection made before the platform existed
            backend = next(iter(available))
        return available[backend]

    def selected_entries(self, explicit: str | None, chosen) -> list[KernelEntry]:
        """The entries a call may lower to, one per platform (for the vmap rule's choice)."""
        if explicit is not None:
            return [k[explicit] for k in self._kernels.values() if explicit in k]
        return [self._kernels[p][b] for p, b in chosen if b in self._kernels.get(p, {})]

    def others(self, platform: str, backend: str) -> list[str]:
        """The platform's backends other than `backend` (for "switch to" hints)."""
        return [b for b in self._kernels.get(platform, {}) if b != backend]


class UsesKernelTable:
    """Base of the XLACustomKernel mixins: the one place that declares the state they share.

    `XLACustomKernel.__init__` passes in the primitive's name and its `KernelTable`; a mixin reads
    nothing else that another class creates.
    """

    name: str
    kernel_table: KernelTable

    def __init__(self, name: str, kernel_table: KernelTable):
        self.name = name
        self.kernel_table = kernel_table
