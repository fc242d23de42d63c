"""The process-wide table of XLACustomKernel instances, for lookup by name or tags (CLI)."""

from __future__ import annotations

import threading
import warnings

from jaxcc.errors import SpecError

_lock = threading.Lock()
_primitives: dict[str, object] = {}


def register_primitive(kernel) -> None:
    with _lock:
        if kernel.name in _primitives and _primitives[kernel.name] is not kernel:
            warnings.warn(
                f"an XLACustomKernel named {kernel.name!r} already exists; the registry now "
                "points to the newer one (give each primitive a unique name)",
                UserWarning,
                stacklevel=3,
            )
        _primitives[kernel.name] = kernel


def get_registry() -> dict:
    """A copy of name -> XLACustomKernel."""
    with _lock:
        return dict(_primitives)


def get_all_primitive_names() -> list[str]:
    with _lock:
        return sorted(_primitives)


def get_primitives_by_tags(tags, match: str = "all") -> list:
    """Primitives carrying every tag (`match='all'`) or at least one (`match='any'`)."""
    if isinstance(tags, str):
        tags = [tags]
    wanted = set(tags)
    if match not in ("all", "any"):
        raise SpecError(
            f"get_primitives_by_tags: match must be 'all' (every tag) or 'any' (at least one), "
            f"got {match!r}"
        )
    with _lock:
        kernels = list(_primitives.values())
    if not wanted:
        return kernels
    if match == "all":
        return [k for k in kernels if wanted <= set(k.tags)]
    return [k for k in kernels if wanted & set(k.tags)]
