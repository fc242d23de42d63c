"""$JAXCC_CUDA_RUNTIME=shared (decision 136): CUDA modules link the shared runtime of pip's
nvidia-cuda-runtime wheel, the file JAX's CUDA plugin loads by path, and find it through a RUNPATH
naming that wheel's folder, so a process maps one runtime whichever loads first, jaxcc's module or
JAX's backend. Without such a wheel, and for bundles, modules keep the static runtime.

The wheel is stood in for by the toolkit's own libcudart.so.<major> copied into the wheel's layout
(<site>/nvidia/cu13/lib), which is what the wheel holds."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import run_python
from test_cuda_build import nvcc_on_path, pytestmark  # noqa: F401 (skip rule, autouse fixture)
from test_cuda_runtime_link import dynamic_section

HERE = os.path.dirname(os.path.abspath(__file__))


def toolkit_runtime() -> str:
    home = os.environ.get("CUDA_HOME") or os.path.dirname(
        os.path.dirname(os.path.realpath(shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"))
    )
    found = sorted(glob.glob(os.path.join(home, "lib*", "libcudart.so.[0-9]*")))
    if not found:
        pytest.skip(f"no shared CUDA runtime under {home}")
    return found[0]


@pytest.fixture
def wheel_site(tmp_path):
    """A sys.path entry laid out like an installed nvidia-cuda-runtime wheel."""
    runtime = toolkit_runtime()
    major = runtime.rsplit(".so.", 1)[1].split(".")[0]
    sub = "cu13" if int(major) >= 13 else "cuda_runtime"
    lib = tmp_path / "site" / "nvidia" / sub / "lib"
    lib.mkdir(parents=True)
    shutil.copy(runtime, lib / f"libcudart.so.{major}")
    return tmp_path / "site", lib / f"libcudart.so.{major}"


# Loads VECTOR_ADD in a fresh process; `order` says whether the wheel's runtime is loaded by path
# first (as JAX's plugin does when its backend starts) or after the module; prints the module's
# library, its key and every CUDA runtime file mapped.
LOAD = """
import ctypes, sys, jax, jaxcc
from cuda_sources import VECTOR_ADD
name, order, wheel = sys.argv[1:4]
if order == "jax-first":
    ctypes.cdll.LoadLibrary(wheel)
mod = jaxcc.load_cuda_inline(name, VECTOR_ADD, compute_capability="8.0")
if order == "module-first":
    ctypes.cdll.LoadLibrary(wheel)
maps = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcudart" in l})
print("RESULT", mod.path, mod.key, *maps)
"""


def load(name, site, wheel, cache, order="none", runtime="shared"):
    env = {"PYTHONPATH": os.pathsep.join([str(site), HERE]), "JAXCC_CACHE_DIR": str(cache)}
    if runtime is not None:
        env["JAXCC_CUDA_RUNTIME"] = runtime
    code = f"import sys; sys.argv = ['-', {name!r}, {order!r}, {str(wheel)!r}]\n" + LOAD
    result = run_python(code, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    line = [ln for ln in result.stdout.splitlines() if ln.startswith("RESULT")][-1].split()
    return line[1], line[2], line[3:]


def test_the_module_links_the_wheels_runtime_and_finds_it_by_its_folder(
    wheel_site, unique_name, tmp_path
):
    site, wheel = wheel_site
    path, key, mapped = load(unique_name, site, wheel, tmp_path / "cache")
    needed, runpath = dynamic_section(path)
    assert wheel.name in needed
    assert runpath == [str(wheel.parent)]
    assert mapped == [str(wheel)]
    # Unset is the same choice (decision 152): the same cache entry.
    default_path, default_key, _ = load(unique_name, site, wheel, tmp_path / "cache", runtime=None)
    assert (default_path, default_key) == (path, key)
    # The static module of the same request is another cache entry, not this one.
    static_path, static_key, static_mapped = load(
        unique_name, site, wheel, tmp_path / "cache", runtime="static"
    )
    assert static_key != key
    assert [n for n in dynamic_section(static_path)[0] if n.startswith("libcudart")] == []
    assert static_mapped == []


@pytest.mark.parametrize("order", ["jax-first", "module-first"])
def test_one_runtime_is_mapped_whichever_loads_first(wheel_site, unique_name, tmp_path, order):
    site, wheel = wheel_site
    load(unique_name, site, wheel, tmp_path / "cache")  # build
    _, _, mapped = load(unique_name, site, wheel, tmp_path / "cache", order=order)
    assert mapped == [str(wheel)]


def test_without_a_runtime_wheel_the_static_runtime_is_linked(unique_name, tmp_path):
    empty_site = tmp_path / "no-wheel"
    (empty_site / "nvidia" / "cu13" / "lib").mkdir(parents=True)  # e.g. cuBLAS only
    path, _, mapped = load(unique_name, empty_site, "", tmp_path / "cache")
    assert [n for n in dynamic_section(path)[0] if n.startswith("libcudart")] == []
    assert mapped == []


def test_a_runtime_wheel_installed_later_is_seen_by_the_next_load(
    wheel_site, unique_name, tmp_path
):
    # The first process finds no runtime in the folder and links the static one; the wheel's file
    # then appears in the same folder (pip adds a file, the folder's mtime moves): the warm index
    # record of the first load no longer holds, and the next process links the shared runtime.
    site, wheel = wheel_site
    held = tmp_path / "held"
    shutil.move(wheel, held)
    os.utime(wheel.parent, ns=(1, 10**18))  # a settled mtime, so the first load writes a record
    path, first_key, _ = load(unique_name, site, wheel, tmp_path / "cache")
    assert [n for n in dynamic_section(path)[0] if n.startswith("libcudart")] == []
    assert len(os.listdir(tmp_path / "cache" / ".index")) == 1  # the record the next load reads
    shutil.move(held, wheel)
    path, second_key, mapped = load(unique_name, site, wheel, tmp_path / "cache")
    assert second_key != first_key
    assert mapped == [str(wheel)]


def test_a_malformed_choice_is_a_spec_error_at_load(unique_name, tmp_path):
    code = textwrap.dedent(f"""
        import jaxcc
        from cuda_sources import VECTOR_ADD
        try:
            jaxcc.load_cuda_inline({unique_name!r}, VECTOR_ADD, compute_capability="8.0")
        except jaxcc.SpecError as e:
            print("SPEC", e)
    """)
    env = {"PYTHONPATH": HERE, "JAXCC_CUDA_RUNTIME": "dynamic", "JAXCC_CACHE_DIR": str(tmp_path)}
    result = run_python(code, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "SPEC JAXCC_CUDA_RUNTIME='dynamic' names no CUDA runtime" in result.stdout
    assert "'static'" in result.stdout and "'shared'" in result.stdout


def test_a_bundle_keeps_the_static_runtime(wheel_site, tmp_path):
    from cuda_sources import VECTOR_ADD

    site, _ = wheel_site
    (tmp_path / "vec.cu").write_text(VECTOR_ADD)
    out = tmp_path / "bundle"
    env = dict(os.environ, PYTHONPATH=str(site), JAXCC_CUDA_RUNTIME="shared")
    env["JAXCC_CACHE_DIR"] = str(tmp_path / "cache")
    command = [sys.executable, "-m", "jaxcc", "build", str(tmp_path / "vec.cu"), "--name", "vec"]
    command += ["--cuda-arch", "8.0", "--out", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    library = next(p for p in out.iterdir() if p.suffix == ".so")
    assert [n for n in dynamic_section(str(library))[0] if n.startswith("libcudart")] == []
