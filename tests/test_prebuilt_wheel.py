"""examples/prebuilt_wheel: `pip wheel` runs `jaxcc build` and packs the bundle; the wheel installs
into a fresh virtual environment and its kernel runs under jax.jit with no compiler on PATH."""

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

import jaxcc

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "prebuilt_wheel"


def run(cmd, env=None, timeout=600):
    full_env = dict(os.environ)
    full_env.update(env or {})
    result = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout)
    assert result.returncode == 0, f"{cmd}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def install_this_jaxcc(venv_python: pathlib.Path) -> None:
    """The fresh environment gets the jaxcc this test runs (its installed files and metadata,
    copied: rebuilding jaxcc from source here would cost minutes and test nothing new)."""
    target = pathlib.Path(
        run(
            [str(venv_python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]
        ).stdout.strip()
    )
    package = pathlib.Path(jaxcc.__file__).parent
    shutil.copytree(package, target / "jaxcc")
    for info in package.parent.glob("jaxcc-*.dist-info"):
        shutil.copytree(info, target / info.name)


@pytest.mark.slow
def test_wheel_with_a_bundle_runs_without_a_compiler(tmp_path):
    source = tmp_path / "example"
    shutil.copytree(EXAMPLE, source)  # the example's tree stays clean (no build/ inside it)
    wheels = tmp_path / "wheels"
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
         str(source), "-w", str(wheels)],
        env={"PIP_NO_INPUT": "1"},
    )  # fmt: skip
    [wheel] = wheels.glob("prebuilt_demo-0.1.0-*.whl")
    assert "linux" in wheel.name  # a platform wheel: it holds a shared library

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    venv_python = venv / "bin" / "python"
    install_this_jaxcc(venv_python)
    run([str(venv_python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)])

    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    code = textwrap.dedent("""
        import os, shutil, jax, jax.numpy as jnp
        assert not any(shutil.which(t) for t in ("g++", "c++", "clang++", "nvcc", "ninja"))
        import prebuilt_demo
        y = jax.jit(lambda x: prebuilt_demo.scale_shift(x, 2.0, 1.0))(jnp.arange(4.0))
        print(prebuilt_demo.kernels.path.startswith(os.path.dirname(prebuilt_demo.__file__)))
        print(y.tolist())
    """)
    result = run(
        [str(venv_python), "-c", code],
        env={
            "PATH": str(empty_bin),
            "CXX": str(tmp_path / "missing" / "g++"),
            "JAXCC_NVCC": str(tmp_path / "missing" / "nvcc"),
            "PYTHONPATH": "",
        },
    )
    assert result.stdout.split() == ["True", "[1.0,", "3.0,", "5.0,", "7.0]"]
