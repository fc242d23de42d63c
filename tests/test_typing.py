"""The typed API: the installed package ships py.typed and _core.pyi (nanobind's stubgen, at build
time), and mypy passes on the examples and on tests/typing/usage.py, and fails on wrong use."""

import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def mypy(cache: str, *arguments: str) -> subprocess.CompletedProcess:
    """mypy with pyproject.toml's settings; each test keeps its own cache (warm on later runs),
    so tests running at once never share one."""
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("the typing check needs mypy: pip install mypy (scripts/setup.sh installs it)")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(ROOT / "build" / "mypy-cache" / cache), *arguments],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_the_installed_package_ships_py_typed_and_the_core_stub():
    package = resources.files("jaxcc")
    assert package.joinpath("py.typed").is_file()
    stub = package.joinpath("_core.pyi").read_text()
    assert "class LoadRequest:" in stub
    assert "def version() -> str:" in stub
    # next to the extension module it describes
    import jaxcc._core

    assert Path(jaxcc._core.__file__).parent.joinpath("_core.pyi").is_file()


def test_examples_and_typed_usage_pass_mypy():
    done = mypy("usage")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues found in" in done.stdout


def test_mypy_sees_jaxccs_types_and_reports_wrong_use(tmp_path):
    wrong = tmp_path / "wrong_use.py"
    wrong.write_text(
        "import jaxcc\n"
        "from jaxcc import _core\n"
        "jaxcc.load_cpp_inline(1, 'src')\n"
        "mod = jaxcc.load_cpp_inline('ops', 'src')\n"
        "mod.add_one.target + 1\n"
        "_core.version() + 1\n"
        "jaxcc.deserialize('not bytes')\n"
    )
    done = mypy("wrong-use", str(wrong))
    assert done.returncode == 1, done.stdout + done.stderr
    for line in (3, 5, 6, 7):
        assert f"wrong_use.py:{line}: error" in done.stdout, done.stdout


def test_a_missing_function_is_an_attribute_error_naming_the_functions():
    import jaxcc

    source = '#include "jaxcc/jaxcc.h"\nvoid one(const jaxcc::Tensor x, jaxcc::Tensor y) {}\n'
    mod = jaxcc.load_cpp_inline("typing_attr_ops", source, ["one"])
    assert isinstance(mod.one, jaxcc.KernelFunction)
    with pytest.raises(AttributeError, match="no function or attribute 'two'; its functions: one"):
        mod.two  # noqa: B018
    assert not hasattr(mod, "two") and not hasattr(mod, "__wrapped__")
