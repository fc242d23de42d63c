"""Where the build cache lives. Nothing here touches the disk: the core creates directories
lazily, with mode 0700, the first time it builds something."""

from __future__ import annotations

import os

from jaxcc.errors import SpecError

_explicit_cache_dir: str | None = None


def set_cache_dir(path: str | os.PathLike) -> None:
    """Use `path` for every later load in this process (existing entries are not moved)."""
    global _explicit_cache_dir
    try:
        path = os.fspath(path)
    except TypeError:
        raise SpecError(
            f"set_cache_dir: path must be a str or os.PathLike, got {type(path).__name__}"
        ) from None
    path = os.fsdecode(path)
    if "\0" in path:
        # The core's open(2)/mkdir(2) would stop at the NUL: another directory than the one named.
        raise SpecError(f"set_cache_dir: the path {path!r} contains a NUL character; remove it")
    _explicit_cache_dir = os.path.abspath(path)


def get_cache_dir() -> str:
    """set_cache_dir() > $JAXCC_CACHE_DIR > $XDG_CACHE_HOME/jaxcc > ~/.cache/jaxcc."""
    if _explicit_cache_dir is not None:
        return _explicit_cache_dir
    env = os.environ.get("JAXCC_CACHE_DIR")
    if env:
        return os.path.abspath(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxcc")
