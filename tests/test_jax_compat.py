"""The JAX version boundary: the lowest tested JAX is declared once and checked at import, and
every JAX-version-dependent name goes through jaxcc._jax_compat."""

import ast
import re
import sys
import tomllib
from pathlib import Path

import jax
import pytest
from conftest import run_python

import jaxcc
from jaxcc import _jax_compat

PACKAGE = Path(jaxcc.__file__).parent
PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
# JAX modules without a compatibility promise; only _jax_compat may import them.
NON_PUBLIC = ("jax.core", "jax.extend", "jax._src", "jax.interpreters")


def test_versions_are_read_as_their_numeric_release():
    assert _jax_compat.version_tuple("0.12.0.1") == (0, 12, 0, 1)
    assert _jax_compat.version_tuple("0.13.0.dev20260101") == (0, 13, 0)
    assert _jax_compat.version_tuple("0.10.2rc1") == (0, 10, 2)
    assert _jax_compat.version_tuple("unknown") == ()


def test_the_jax_under_test_is_at_least_the_lowest_tested():
    assert _jax_compat.installed_jax_version() == jax.__version__
    assert _jax_compat.check_jax_version() is None


def test_an_older_jax_gets_a_message_naming_both_versions_and_the_fix():
    lowest = ".".join(map(str, _jax_compat.MIN_JAX))
    message = _jax_compat.check_jax_version("0.4.30")
    assert "0.4.30" in message and f">= {lowest}" in message
    assert f"pip install -U 'jax>={lowest}'" in message
    assert _jax_compat.check_jax_version(lowest) is None
    assert _jax_compat.check_jax_version("0.12.0.1") is None
    assert _jax_compat.check_jax_version("99.0") is None


def test_importing_jaxcc_with_an_old_jax_warns_once_and_still_imports():
    # A stand-in `jax` already imported with an old version: the check reads its __version__.
    code = (
        "import sys, types, warnings\n"
        "sys.modules['jax'] = types.SimpleNamespace(__version__='0.4.30')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import jaxcc\n"
        "hits = [w for w in caught if type(w.message).__name__ == 'JaxVersionWarning']\n"
        "print(len(hits)); print(hits[0].message)\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    count, message = result.stdout.split("\n", 1)
    assert count == "1"
    assert "JAX 0.4.30" in message and "pip install -U" in message


def test_importing_jaxcc_with_a_tested_jax_is_silent_and_does_not_import_jax():
    code = (
        "import sys, warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import jaxcc\n"
        "print(sum(type(w.message).__name__ == 'JaxVersionWarning' for w in caught))\n"
        "print('jax' in sys.modules)\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "False"]


def test_pyproject_declares_the_lowest_tested_jax_and_python():
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    lowest = ".".join(map(str, _jax_compat.MIN_JAX))
    assert f"jax>={lowest}" in project["dependencies"]
    assert project["requires-python"] == ">=3.11"
    assert sys.version_info >= (3, 11)


def test_shims_resolve_to_jaxs_own_objects():
    from jax.extend.core import Primitive
    from jax.interpreters import ad, batching, mlir

    assert _jax_compat.Primitive is Primitive
    assert _jax_compat.ShapedArray is jax.core.ShapedArray
    assert _jax_compat.Tracer is jax.core.Tracer
    assert (_jax_compat.ad, _jax_compat.batching, _jax_compat.mlir) == (ad, batching, mlir)
    with pytest.raises(AttributeError, match="no_such_shim"):
        _jax_compat.no_such_shim  # noqa: B018


def test_the_first_primitive_of_a_process_does_not_import_jax_extend():
    # `import jax.extend.core` imports Pallas and checkify through jax/extend/__init__.py (24-45
    # ms); the Primitive class is taken where JAX defines it (decision 114). A real jitted call
    # of a new primitive, in a fresh process, with its lowering and registration.
    code = (
        "import sys\n"
        "import jax, jax.numpy as jnp\n"
        "import jaxcc\n"
        "op = jaxcc.XLACustomKernel('compat_probe')\n"
        "op.def_kernel('jax_raw', 'cpu', lambda outs, **kw: lambda x: (x + 1,))\n"
        "y = jax.jit(lambda v: op(v, outs=jax.ShapeDtypeStruct(v.shape, v.dtype)))(jnp.ones(3))\n"
        "print(float(jax.block_until_ready(y)[0]))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('jax.extend', 'jax._src.pallas'))))\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["2.0", "[]"]


def _sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "_jax_compat.py":
            yield path, ast.parse(path.read_text(), filename=str(path))


def _is_non_public(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in NON_PUBLIC)


def test_only_the_compat_module_reaches_into_jax_internals():
    found = []
    for path, tree in _sources():
        where = path.relative_to(PACKAGE)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [f"{where}:{node.lineno}" for a in node.names if _is_non_public(a.name)]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if _is_non_public(node.module):
                    found.append(f"{where}:{node.lineno}")
            elif isinstance(node, ast.Attribute) and _is_non_public(ast.unparse(node)):
                found.append(f"{where}:{node.lineno}")
    assert not found, f"use jaxcc._jax_compat instead of JAX internals at {found}"


def test_no_module_guards_a_jax_import_with_try_except():
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Try):
                continue
            for inner in ast.walk(ast.Module(body=node.body, type_ignores=[])):
                names = (
                    [a.name for a in inner.names] if isinstance(inner, ast.Import) else
                    [inner.module or ""] if isinstance(inner, ast.ImportFrom) else []
                )  # fmt: skip
                if any(re.match(r"jax(lib)?(\.|$)", n) for n in names):
                    found.append(f"{path.relative_to(PACKAGE)}:{inner.lineno}")
    assert not found, f"JAX version differences belong in jaxcc._jax_compat: {found}"


def test_every_ffi_call_names_its_vmap_method():
    # JAX >= 0.11 raises under jax.vmap for an ffi_call without one (see DEFAULT_VMAP_METHOD).
    missing = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "ffi_call"
                and not any(k.arg == "vmap_method" for k in node.keywords)
            ):
                missing.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not missing, f"ffi_call without vmap_method at {missing}"
