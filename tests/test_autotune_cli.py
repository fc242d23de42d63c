"""`jaxcc tune` for functions with attributes (issue 40, decision 159d): `--attrs FN:NAME=VALUE,...`
gives the values every `--shapes` of FN is called with while tuning."""

import os

import pytest
from conftest import run_python
from test_autotune import REPEAT_SOURCE

# y = a * factor, recomputed REPEAT times; declared by annotation, the attribute inferred.
SCALE_SOURCE = (
    REPEAT_SOURCE.replace("// @BE bump arg ret", '// @jaxcc scale tune="REPEAT=500,1"')
    .replace(
        "void bump(const jaxcc::Tensor& a, jaxcc::Tensor& c) {",
        "void scale(const jaxcc::Tensor& a, jaxcc::Tensor& c, float factor) {",
    )
    .replace("y[i] = x[i] + 1.0f", "y[i] = x[i] * factor")
)


@pytest.fixture
def cli(fresh_cache, tmp_path):
    (tmp_path / "scaled_ops.py").write_text(
        f"import jaxcc\nmod = jaxcc.load_cpp_inline('scaled_ops', {SCALE_SOURCE!r})\n"
    )
    env = {
        "JAXCC_CACHE_DIR": str(fresh_cache),
        "JAXCC_PRINT_AUTOTUNING": "1",
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
    }

    def run(*argv):
        return run_python(
            f"import sys; from jaxcc.__main__ import main; sys.exit(main({list(argv)!r}))", env
        )

    run.env = env
    return run


def _lines(err):
    return [line for line in err.splitlines() if line.startswith("jaxcc autotune:")]


def test_tune_with_attrs_decides_ahead_for_the_next_process(cli):
    done = cli("tune", "scaled_ops", "--shapes", "scale=float32[300]", "--attrs",
               "scale:factor=2.5")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (line,) = _lines(done.stderr)
    assert "scaled_ops.scale key=float32[300]" in line and "REPEAT=1" in line
    user = run_python(
        "import jax.numpy as jnp, scaled_ops\n"
        "print(float(scaled_ops.mod.scale(jnp.ones(300, jnp.float32), factor=2.5)[0]))",
        cli.env,
    )
    assert user.returncode == 0, user.stderr
    assert user.stdout.strip() == "2.5"
    (line,) = _lines(user.stderr)
    assert line.endswith("cached")


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "takes attributes factor: float32; give them with --attrs scale:factor=..."),
        (["--attrs", "scale:factor"], "'factor' is not NAME=VALUE"),
        (["--attrs", "scale"], "write FN:NAME=VALUE"),
        (["--attrs", "scale:factor=abc"], "'abc' is not a number or true/false"),
        (["--attrs", "scale:factor=1,bias=2"], "wrong attributes (unexpected bias)"),
        (["--attrs", "other:x=1"], "--attrs for other, which no --shapes names"),
    ],
)
def test_missing_or_bad_attrs_are_usage_errors(cli, argv, message):
    done = cli("tune", "scaled_ops", "--shapes", "scale=float32[8]", *argv)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr, done.stderr
    assert not _lines(done.stderr)
