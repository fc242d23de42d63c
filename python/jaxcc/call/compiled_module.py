"""CompiledModule: a loaded module, one KernelFunction attribute per function."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from jaxcc import _core

from .kernel_function import KernelFunction
from .kernel_signature import LazyInstanceValue, module_doc


class CompiledModule:
    """A loaded module: one callable attribute per function, plus its targets and library path."""

    __doc__ = LazyInstanceValue(__doc__, module_doc)  # help(mod): its functions and comments

    def __init__(self, request: _core.LoadRequest, loaded: _core.LoadedModule):
        self.name = request.name
        self.platform = request.platform
        self.cuda_archs = list(loaded.cuda_archs)
        self.target_prefix = request.target_prefix
        self.path = loaded.library_path
        self.key = loaded.key
        self.cache_hit = loaded.cache_hit
        self.build_seconds = loaded.build_seconds
        # What each compile and the link of a fresh build took (ninja's log); [] on a cache hit.
        self.build_steps = list(loaded.build_steps)
        # A fresh build that linked an earlier build's FFI wrapper object (same signatures, flags
        # and headers; only kernel bodies changed) instead of compiling it again.
        self.wrapper_reused = loaded.wrapper_reused
        # How many translation units (kernel units and wrapper) a fresh build linked from the
        # shared object cache instead of compiling: the ones whose inputs did not change.
        self.objects_reused = loaded.objects_reused
        self.specs = {spec.name: spec for spec in loaded.specs}
        self._vmap_method = request.vmap_method
        self._request = request
        self._loaded = loaded

    @property
    def build_identity(self) -> str:
        """Which build this is: its cache key and its library's content-named file
        (ffi_targets.build_identity), so two builds under one key are told apart."""
        from .ffi_targets import build_identity

        return build_identity(self._loaded)

    @property
    def library_loaded(self) -> bool:
        """Whether the compiled library is mapped into this process. A warm load (an entry the
        cache loaded before) maps it at the first call of one of its functions (decision 137)."""
        return self._loaded.library_loaded

    def load_library(self) -> None:
        """Maps the compiled library now if a warm load deferred it, so that a library that can
        no longer be mapped (a library it links gone from the loader path) raises LoadError here
        rather than failing its first call. A no-op once mapped."""
        self._loaded.load_library()

    @functools.cached_property
    def functions(self) -> dict[str, KernelFunction]:
        """Function name -> its callable. Made on first use: a load (warm ones above all) only
        registers targets, and the core has already checked every spec (decision 85)."""
        functions = {}
        origin = self._request if isinstance(self._request, _core.LoadRequest) else None
        for name, spec in self.specs.items():
            fn = KernelFunction(
                self.name, f"{self.target_prefix}.{name}", spec, self._vmap_method, self.platform
            )
            # Where it came from, for check_kernel's rebuilds (debug twin, bundle): kept on the
            # function, which outlives its table entry (clear_cache() empties the table).
            fn.load_request = origin
            fn.module_key = self.key
            functions[name] = fn
        return functions

    @property
    def function_names(self) -> list[str]:
        return list(self.specs)

    @property
    def targets(self) -> dict[str, str]:
        """Function name -> registered FFI target name."""
        return {name: fn.target for name, fn in self.functions.items()}

    def target_name(self, function: str) -> str:
        return self[function].target

    def __getitem__(self, function: str) -> KernelFunction:
        try:
            return self.functions[function]
        except KeyError:
            raise KeyError(
                f"module '{self.name}' has no function '{function}'; it has: "
                f"{', '.join(self.functions)}"
            ) from None

    def __getattr__(self, name: str) -> KernelFunction:
        # Runs only when ordinary look-up failed, so a function called `path`, `key`, `name`, ...
        # never replaces the module's own attribute (a silently wrong mod.path): it stays
        # reachable as mod["path"]. A function's first look-up lands here and is then cached as an
        # attribute; anything else names the functions there are (and tells type checkers that
        # mod.<function> is one).
        specs = self.__dict__.get("specs")
        if specs is None or name.startswith("__"):
            raise AttributeError(name)
        if name in specs:
            fn = self.functions[name]
            self.__dict__[name] = fn
            return fn
        raise AttributeError(
            f"module '{self.__dict__.get('name')}' has no function or attribute '{name}'; its "
            f"functions: {', '.join(specs) or 'none'}"
        )

    def __contains__(self, function: str) -> bool:
        return function in self.specs

    def __dir__(self) -> Sequence[str]:
        return sorted(set(super().__dir__()) | set(self.specs))

    def __repr__(self) -> str:
        return (
            f"<jaxcc.CompiledModule {self.name!r} ({self.platform}) "
            f"functions={self.function_names} "
            f"path={self.path!r}>"
        )
