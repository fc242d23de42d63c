"""The in-process table of loaded modules: loading the same request again in one process returns
the same CompiledModule after one hash lookup (the request is frozen and hashable)."""

from __future__ import annotations

import threading

from jaxcc.errors import LoadError

_lock = threading.Lock()
_loaded: dict = {}  # _core.LoadRequest -> CompiledModule


def get(request):
    with _lock:
        return _loaded.get(request)


def put(request, module) -> None:
    with _lock:
        _loaded[request] = module


def map_libraries(name: str | None) -> None:
    """Maps the libraries a warm load deferred (decision 137) of the modules named `name` (every
    module for None), before their cache entries are deleted: a loaded module stays usable."""
    with _lock:
        modules = [m for r, m in _loaded.items() if name is None or r.name == name]
    for module in modules:
        try:
            module.load_library()
        except LoadError:
            pass  # it could not be mapped anyway; its first call says why


def forget(name: str | None) -> None:
    """Drops the modules named `name` (every module for None), e.g. after their cache entries
    were cleared, so the next load rebuilds instead of returning a module whose files are gone."""
    with _lock:
        for request in [r for r in _loaded if name is None or r.name == name]:
            del _loaded[request]
