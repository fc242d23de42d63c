"""`import jaxcc` stays light: XLACustomKernel, its bridges, benchmarking and plotting are
imported on first use (PEP 562), yet every public name is reachable as before."""

import json
import subprocess
import sys

import pytest

import jaxcc

# Modules a fresh `import jaxcc` must not import: each costs milliseconds or more (the deployment
# modules about a millisecond together, and a process that only loads kernels never needs them).
HEAVY = (
    "jaxcc.custom_kernel",
    "numba",
    "triton",
    "matplotlib",
    "jaxcc.deploy.bundle",
    "jaxcc.deploy.export",
)


def fresh(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout


@pytest.mark.parametrize("first", ["", "import jax; "])
def test_fresh_import_leaves_the_heavy_modules_unimported(first):
    out = fresh(f"{first}import sys, json, jaxcc; print(json.dumps(sorted(sys.modules)))")
    loaded = json.loads(out.splitlines()[-1])
    imported = [m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert imported == [], f"import jaxcc imported {imported}"
    assert "jaxcc" in loaded  # the probe saw the import


def test_every_public_name_resolves_in_a_fresh_process():
    out = fresh(
        "import jaxcc, json\n"
        "print(json.dumps({n: type(getattr(jaxcc, n)).__name__ for n in jaxcc.__all__}))"
    )
    kinds = json.loads(out.splitlines()[-1])
    assert set(kinds) == set(jaxcc.__all__)
    assert kinds["XLACustomKernel"] == "type" and kinds["numba_kernel"] == "function"


def test_public_names_are_listed_importable_and_the_same_objects():
    from jaxcc import XLACustomKernel, set_backend  # noqa: F401 (the import is the test)
    from jaxcc.custom_kernel import XLACustomKernel as direct

    assert XLACustomKernel is direct
    listed = dir(jaxcc)
    for name in jaxcc.__all__:
        assert name in listed, name
        assert getattr(jaxcc, name) is not None
    assert jaxcc.custom_kernel.set_backend is jaxcc.set_backend


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        jaxcc.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        exec("from jaxcc import no_such_name", {})


def test_from_jaxcc_import_lazy_name_in_a_fresh_process():
    out = fresh(
        "import sys\n"
        "from jaxcc import XLACustomKernel, numba_kernel\n"
        "print(XLACustomKernel.__module__, 'jaxcc.custom_kernel' in sys.modules)"
    )
    assert out.split() == ["jaxcc.custom_kernel.primitive", "True"]
