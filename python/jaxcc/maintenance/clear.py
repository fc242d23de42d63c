"""`clear_cache`: a cache entry is more than its directory. Clearing one also forgets the
in-process table's record of it, the tuning decisions made with its builds and the notes on
Numba kernels that were not kept; so it sits above every stage that keeps such state."""

from __future__ import annotations

from jaxcc import _core
from jaxcc.build import loaded_table
from jaxcc.environment.cache_dir import get_cache_dir
from jaxcc.errors import SpecError
from jaxcc.tune import store as tune_store


def clear_cache(name: str | None = None) -> int:
    """Delete cache entries (all, or those of module `name`); returns how many were removed.

    Entries that another process is building right now are skipped, so its build survives.
    Modules already loaded in this process stay usable (their code is mapped in memory).
    """
    if name is not None and not isinstance(name, str):
        raise SpecError(
            f"clear_cache: name must be a module name (str) or None for every entry, "
            f"got {type(name).__name__}"
        )
    loaded_table.map_libraries(name)
    removed = _core.clear_cache(get_cache_dir(), name)
    loaded_table.forget(name)
    # Imported here: jaxcc.custom_kernel is not imported by `import jaxcc` (tests/test_import_time).
    from jaxcc.custom_kernel.bridges import numba_cpu_cache_notes

    # Why Numba kernels were not kept: stale with the entries.
    numba_cpu_cache_notes.forget(get_cache_dir(), name)
    tune_store.forget(get_cache_dir(), name)  # tuning decisions go with their builds
    return removed
