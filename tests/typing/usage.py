"""Typed use of jaxcc's public API: type-checked by mypy (tests/test_typing.py), never run.

Each line states a type the annotations and stubs must give; a wrong annotation makes mypy fail."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import assert_type

import jax

import jaxcc
from jaxcc import _core
from jaxcc.custom_kernel import XLACustomKernel

SOURCE = '#include "jaxcc/jaxcc.h"\nvoid add_one(const jaxcc::Tensor x, jaxcc::Tensor y) {}'


def load() -> jaxcc.CompiledModule:
    mod = jaxcc.load_cpp_inline("ops", SOURCE, ["add_one"], extra_cflags=["-O2"])
    assert_type(mod, jaxcc.CompiledModule)
    assert_type(mod.add_one, jaxcc.KernelFunction)  # functions are attributes
    assert_type(mod["add_one"], jaxcc.KernelFunction)
    assert_type(mod.targets, dict[str, str])
    assert_type(mod.function_names, list[str])
    jaxcc.load_cpp_inline("ops2", [SOURCE], {"add_one": ["arg", "ret"]}, target_prefix="v2")
    jaxcc.load_cuda_inline("gops", SOURCE, {"add_one": "arg ret"}, compute_capability=["8.0"])
    return mod


def export(mod: jaxcc.CompiledModule) -> bytes:
    shape = jax.ShapeDtypeStruct((4,), jax.numpy.float32)
    exported = jaxcc.export(mod.add_one, shape, platforms=["cpu"])
    blob = exported.serialize()
    jaxcc.deserialize(blob, modules=[mod], platform="cpu")
    return bytes(blob)


def deploy() -> None:
    # The deployment functions and print_diagnostics are imported on first use (jaxcc's
    # __getattr__); these lines fail if mypy sees them as Any.
    assert_type(jaxcc.load_library("dist/ops"), jaxcc.CompiledModule)
    assert_type(jaxcc.load_library(Path("dist/ops")), jaxcc.CompiledModule)
    assert_type(jaxcc.load_library(resources.files("pkg") / "kernels"), jaxcc.CompiledModule)
    # An unused ignore is an error (warn_unused_ignores): this line checks `path` is annotated.
    jaxcc.load_library(42)  # type: ignore[arg-type]
    assert_type(jaxcc.print_diagnostics, Callable[[], None])
    assert_type(jaxcc.list_registered_targets(), list[str])


def custom_kernel() -> None:
    # Also reached only through __getattr__ at run time.
    assert_type(jaxcc.XLACustomKernel, type[XLACustomKernel])
    assert_type(jaxcc.get_backend("cpu"), str | None)


def core() -> None:
    # _core comes from _core.pyi, which nanobind's stubgen writes at build time.
    assert_type(_core.version(), str)
    assert_type(_core.MAX_RANK, int)
    assert_type(jaxcc.get_cache_dir(), str)


def errors(e: jaxcc.MissingTargetError) -> list[str]:
    assert isinstance(e, jaxcc.LoadError) and isinstance(e, jaxcc.JaxccError)
    return e.missing
