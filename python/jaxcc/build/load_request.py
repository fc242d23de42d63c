"""One load, start to finish: in-process table, the core's build-or-fetch, logging, registering
the handlers with JAX, and the CompiledModule the loaders return."""

from __future__ import annotations

import contextlib
import logging
import sys
import warnings

from jaxcc import _core
from jaxcc.call import ffi_targets
from jaxcc.call.compiled_module import CompiledModule
from jaxcc.environment import discovery
from jaxcc.environment.progress import BuildProgress
from jaxcc.errors import CacheWarning

from . import loaded_table
from .options import RunOptions

logger = logging.getLogger("jaxcc")

# `jaxcc build --module`: the requests of every load while a recording is active.
_recordings: list[list[_core.LoadRequest]] = []
# Requests whose sources declare open tune= parameters (decision 159a): nothing to load, so the
# in-process table has no module for them; remembered so a second load asks the core nothing.
_declared: dict[_core.LoadRequest, list] = {}


class TuneDeclared(Exception):  # noqa: N818
    """The request's annotations declare tune= parameters its flags leave open: the core built
    nothing, and the caller expands `declarations` (`_core.TuneDeclaration`s) into variants."""

    def __init__(self, declarations: list):
        super().__init__("tune= declared")
        self.declarations = declarations


@contextlib.contextmanager
def recording_loads():
    """Yields a list that receives the request of every load_* call made inside the block."""
    requests: list[_core.LoadRequest] = []
    _recordings.append(requests)
    try:
        yield requests
    finally:
        _recordings.remove(requests)


def load(request: _core.LoadRequest, options: RunOptions) -> CompiledModule:
    for requests in _recordings:
        requests.append(request)
    # The same request again in this process still asks the core, which re-checks what a new
    # process would (tracked headers, probed paths, the compiler) on its warm path; only when
    # that finds the very build this process loaded is the loaded module returned as it is
    # (issue 49 item 9: the table used to answer without looking at any header).
    known = None if options.force_rebuild else loaded_table.get(request)
    if request in _declared:
        raise TuneDeclared(_declared[request])
    environment = discovery.build_environment(
        request,
        verbose=options.verbose,
        force_rebuild=options.force_rebuild,
        ninja_workers=options.ninja_workers,
    )
    on_output = (lambda chunk: sys.stderr.write(chunk)) if options.verbose else None
    with BuildProgress(request.name) as progress:
        loaded = _core.load_module(request, environment, on_output, progress.start, progress.update)
    if loaded.tune:
        _declared[request] = list(loaded.tune)
        raise TuneDeclared(_declared[request])
    if known is not None and ffi_targets.build_identity(loaded) == known.build_identity:
        return known
    _log_outcome(request, loaded)
    module = CompiledModule(request, loaded)
    if request.auto_register:
        ffi_targets.register_module(module, loaded, replace=options.replace)
    loaded_table.put(request, module)
    return module


def _log_outcome(request, loaded) -> None:
    name = request.name
    warning = loaded.warning
    if warning:
        # stacklevel: _log_outcome (1) -> load (2) -> loaders._load_request (3) -> the public
        # loader (4) -> the user's line (5).
        warnings.warn(f"jaxcc: module '{name}': {warning}", CacheWarning, stacklevel=5)
    # The messages read fields of the loaded module; a warm load with logging off skips them.
    if not logger.isEnabledFor(logging.INFO):
        return
    if loaded.cache_hit:
        logger.info("cache hit: %s (%s)", name, loaded.library_path)
    else:
        logger.info(
            "cache miss (%s): built %s in %.2fs -> %s",
            loaded.miss_reason,
            name,
            loaded.build_seconds,
            loaded.library_path,
        )
        if loaded.evicted_entries:
            logger.info(
                "cache size cap: evicted %d least recently used entries", loaded.evicted_entries
            )
    if request.platform == "cuda":
        logger.info(
            "CUDA architectures for %s: %s (from %s)",
            name,
            ", ".join(f"sm_{a}" for a in loaded.cuda_archs),
            loaded.cuda_archs_source,
        )
