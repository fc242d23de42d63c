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


@pytest.fixture(scope="module")
def ops_dir(tmp_path_factory):
    """A directory holding the user's module `scaled_ops`, shared by the file's tests: its builds
    land in the session's cache once (the usage errors store nothing, and only the first test
    tunes, at a key of its own)."""
    where = tmp_path_factory.mktemp("scaled_ops")
    (where / "scaled_ops.py").write_text(
        f"import jaxcc\nmod = jaxcc.load_cpp_inline('scaled_ops', {SCALE_SOURCE!r})\n"
    )
    return where


@pytest.fixture
def cli(ops_dir):
    env = {
        "JAXCC_PRINT_AUTOTUNING": "1",
        "PYTHONPATH": f"{ops_dir}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
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
        {**cli.env, "JAXCC_TUNE_RETIME": "0"},  # read, never retimed (it may be noisy)
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
def test_missing_or_bad_attrs_are_usage_errors(ops_dir, monkeypatch, capsys, argv, message):
    from jaxcc.__main__ import main

    # In this process: `jaxcc tune` imports scaled_ops (built once) and answers before tuning.
    monkeypatch.syspath_prepend(str(ops_dir))
    monkeypatch.setenv("JAXCC_PRINT_AUTOTUNING", "1")  # `jaxcc tune` sets it when unset
    assert main(["tune", "scaled_ops", "--shapes", "scale=float32[8]", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert not _lines(err)
