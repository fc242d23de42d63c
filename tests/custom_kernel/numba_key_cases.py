"""Kernel modules for the Numba cache-key tests (issue 37, item 3): each case is a set of files a
kernel reads (its module, a helper module, a package), the same files after an edit that changes
what Numba compiles, and a runner that calls the kernel in a fresh process through jaxcc and
through Numba directly (a fresh compile in that process), so a stale entry shows as a difference.

`kern.py` defines `kernel(x, out)` over float32 vectors of length 4 (x = [0.25, 1.25, 2.25, 3.25]).
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

RUNNER = """
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numba.core.compiler as compiler
compiled = []
_compile_extra = compiler.compile_extra
def counting(typingctx, targetctx, func, *args, **kwargs):
    compiled.append(func.__name__)
    return _compile_extra(typingctx, targetctx, func, *args, **kwargs)
compiler.compile_extra = counting
import jax, jax.numpy as jnp, numpy as np
import jaxcc
from kern import kernel
x = np.arange(4, dtype=np.float32) + np.float32(0.25)
via_jaxcc = jaxcc.numba_kernel(kernel, jax.ShapeDtypeStruct((4,), jnp.float32))(jnp.asarray(x))
via_jaxcc = np.asarray(via_jaxcc).tolist()
jaxcc_compiled = compiled.count("kernel")
fresh = np.zeros(4, np.float32)
kernel(x, fresh)  # Numba's own dispatcher: compiled in this process, never from jaxcc's cache
print("RESULT " + json.dumps({"jaxcc": via_jaxcc, "numba": fresh.tolist(),
                               "compiled": jaxcc_compiled}))
"""


def write_files(directory: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    # An edit within the same second keeps the .pyc's recorded mtime: never reuse bytecode.
    for pycache in directory.rglob("__pycache__"):
        for pyc in pycache.iterdir():
            pyc.unlink()


def run(directory: Path, cache: Path) -> dict:
    (directory / "runner.py").write_text(RUNNER)
    env = dict(
        os.environ, JAXCC_CACHE_DIR=str(cache), JAX_PLATFORMS="cpu", PYTHONDONTWRITEBYTECODE="1"
    )
    out = subprocess.run(
        [sys.executable, str(directory / "runner.py")], capture_output=True, text=True, env=env,
        timeout=300, check=False,
    )  # fmt: skip
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stderr[-3000:]}"
    line = next(line for line in out.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def edit_between_processes(tmp_path: Path, before: dict, after: dict) -> tuple[dict, dict]:
    """Runs the kernel in one process with `before`'s files, edits them to `after`'s, runs it
    in a second process on the same cache: (first run, second run)."""
    directory, cache = tmp_path / "src", tmp_path / "cache"
    write_files(directory, before)
    first = run(directory, cache)
    # The kernel was kept: the second process has an entry to be misled by.
    assert list(cache.glob("numba_kernel_kernel-*/manifest.json")), "nothing was cached"
    write_files(directory, after)
    second = run(directory, cache)
    return first, second


# --- The reproduced cases (issue 37, point 5): (files before, files after). -----------------

LOCALS = """
    import numba
    @numba.njit(locals={"acc": numba.int32})
    def kernel(x, out):
        for i in range(out.size):
            acc = x[i] * 2
            out[i] = acc
    """

OVERLOAD_HELPER = """
import numba
from numba.extending import overload

def scale(v):
    raise NotImplementedError("compiled only")

@overload(scale)
def _scale_impl(v):
    def impl(v):
        return v * {factor}
    return impl
"""

OVERLOAD_KERNEL = """
import numba
from helper import scale
@numba.njit
def kernel(x, out):
    for i in range(out.size):
        out[i] = scale(x[i])
"""

NESTED_GLOBAL = """
import numba
C = {value}
@numba.njit
def kernel(x, out):
    def inner(v):
        twice = lambda w: w * C
        return twice(v)
    for i in range(out.size):
        out[i] = inner(x[i])
"""

SUBMODULE_KERNEL = """
import numba
import pkg.sub
@numba.njit
def kernel(x, out):
    for i in range(out.size):
        out[i] = x[i] + pkg.sub.CONST
"""

NAMEDTUPLE = """
import collections
import numba
Pair = collections.namedtuple("Pair", "{fields}")
P = Pair(1.0, 10.0)
@numba.njit
def kernel(x, out):
    for i in range(out.size):
        out[i] = x[i] + P.a
"""

RECORD = """
import numba
import numpy as np
R = np.array([(1.0, 10.0)], dtype=[{fields}])
@numba.njit
def kernel(x, out):
    for i in range(out.size):
        out[i] = x[i] + R[0]["a"]
"""

PARALLEL = """
import numba
@numba.njit(parallel=True)
def kernel(x, out):
    for i in numba.prange(out.size):
        out[i] = x[i] * {factor}
"""

CASES = {
    "locals": ({"kern.py": LOCALS}, {"kern.py": LOCALS.replace("int32", "float32")}),
    "overload_in_another_file": (
        {"kern.py": OVERLOAD_KERNEL, "helper.py": OVERLOAD_HELPER.format(factor=2.0)},
        {"kern.py": OVERLOAD_KERNEL, "helper.py": OVERLOAD_HELPER.format(factor=3.0)},
    ),
    "nested_function_global": (
        {"kern.py": NESTED_GLOBAL.format(value=2.0)},
        {"kern.py": NESTED_GLOBAL.format(value=3.0)},
    ),
    "submodule_attribute": (
        {"kern.py": SUBMODULE_KERNEL, "pkg/__init__.py": "", "pkg/sub.py": "CONST = 1.0\n"},
        {"kern.py": SUBMODULE_KERNEL, "pkg/__init__.py": "", "pkg/sub.py": "CONST = 5.0\n"},
    ),
    "namedtuple_field_names": (
        {"kern.py": NAMEDTUPLE.format(fields="a b")},
        {"kern.py": NAMEDTUPLE.format(fields="b a")},
    ),
    "record_dtype_fields_swapped": (
        {"kern.py": RECORD.format(fields="('a', 'f4'), ('b', 'f4')")},
        {"kern.py": RECORD.format(fields="('b', 'f4'), ('a', 'f4')")},
    ),
    "parallel_kernel_reloaded": (
        {"kern.py": PARALLEL.format(factor=2.0)},
        {"kern.py": PARALLEL.format(factor=2.0)},
    ),
}


# --- Drawn kernels for the property test: each feature reads one input in its own way, with two
# variants (before and after an edit) that give different results. ---------------------------

FEATURES = {
    # feature: (term added to the kernel's value, variant values)
    "global_constant": ("K", ("2.0", "3.0")),
    "nested_function_global": ("inner(0.0)", ("20.0", "30.0")),
    "namedtuple_fields": ("P.a", ("a b", "b a")),
    "submodule_attribute": ("pkg.sub.CONST", ("100.0", "500.0")),
    "overload_implementation": ("bump(0.0)", ("1000.0", "7000.0")),
    "record_fields": ('R[0]["a"]', ("('a', 'f4'), ('b', 'f4')", "('b', 'f4'), ('a', 'f4')")),
    "locals_type": ("", ("float32", "int32")),
}

_DRAWN_KERNEL = """
import collections
import numba
import numpy as np
import pkg.sub
from helper import bump

K = {global_constant}
N = {nested_function_global}
Pair = collections.namedtuple("Pair", "{namedtuple_fields}")
P = Pair(1.0, 10.0)
R = np.array([(0.5, 0.25)], dtype=[{record_fields}])

@numba.njit(locals={{"acc": numba.{locals_type}}})
def kernel(x, out):
    def inner(v):
        shifted = lambda w: w + N
        return shifted(v)
    for i in range(out.size):
        acc = x[i] * 1.5{terms}
        out[i] = acc
"""

_DRAWN_HELPER = """
from numba.extending import overload

def bump(v):
    raise NotImplementedError("compiled only")

@overload(bump)
def _bump_impl(v):
    def impl(v):
        return v + {overload_implementation}
    return impl
"""


def drawn_files(used: set, variants: dict) -> dict[str, str]:
    """The files of a kernel that reads the features in `used`, each at its variant (0 or 1);
    features not used keep variant 0 and are not read."""
    values = {name: FEATURES[name][1][variants.get(name, 0)] for name in FEATURES}
    terms = "".join(f" + {FEATURES[f][0]}" for f in sorted(used) if FEATURES[f][0])
    return {
        "kern.py": _DRAWN_KERNEL.format(terms=terms, **values),
        "helper.py": _DRAWN_HELPER.format(**values),
        "pkg/__init__.py": "",
        "pkg/sub.py": f"CONST = {values['submodule_attribute']}\n",
    }
