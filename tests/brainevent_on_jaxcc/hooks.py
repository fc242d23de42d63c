"""Test-only: the two mechanisms the shim (plugin.py) and the twin (twin.py) share for putting
jaxcc under brainevent 0.3.0's operators without changing a line of brainevent: patching a
brainevent module as soon as it has executed (before the operator modules import names from it),
and loading brainevent's .cu files the way its own loader does."""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys


def brainevent_include() -> str:
    """brainevent's package `include/`: its private `cuda_common.h`, which its loader puts on
    every build's include path."""
    return os.path.join(os.path.dirname(importlib.util.find_spec("brainevent").origin), "include")


def with_brainevent_include(load):
    """`load` (a jaxcc loader) with brainevent's `include/` last on `extra_include_paths`, as
    brainevent's loader builds its own files; jaxcc's own `brainevent/*.h` still come first
    (issue 21's corpus builds the same way)."""
    include = brainevent_include()

    @functools.wraps(load)
    def loader(*args, extra_include_paths=None, **kwargs):
        paths = [*(extra_include_paths or []), include]
        return load(*args, extra_include_paths=paths, **kwargs)

    return loader


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, inner, patch):
        self.inner = inner
        self.patch = patch

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        self.patch(module)

    def __getattr__(self, name):  # get_source, is_package, resource readers: the file loader's
        return getattr(self.inner, name)


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    def __init__(self, modules, patch):
        self.modules = frozenset(modules)
        self.patch = patch

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader, self.patch)
        return spec


def patch_after_import(modules, patch, who: str) -> None:
    """Calls `patch(module)` as soon as each of `modules` (brainevent module names) has executed.
    Must run before brainevent is imported: names already imported from a module keep the old
    objects."""
    if any(n == "brainevent" or n.startswith("brainevent.") for n in sys.modules):
        raise RuntimeError(f"{who}: brainevent was imported before it was installed")
    sys.meta_path.insert(0, _PatchAfterImport(modules, patch))
