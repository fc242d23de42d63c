"""benchmark() on the CPU: records with timings and a stored verdict, a table, JSON/CSV, a PNG,
and the `jaxcc benchmark` command."""

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest
from ck_helpers import call, make_mul

import jaxcc


def benchmarked(wrong_backend=False, broken_backend=False):
    kernel = make_mul("bench_mul")
    if wrong_backend:
        kernel.def_kernel("wrong", "cpu", lambda **p: lambda x, y: x + y)
    if broken_backend:
        kernel.def_kernel("broken", "cpu", lambda **p: lambda x, y: 1 / 0)
    kernel.def_call(lambda x, y, backend=None: call(kernel, x, y, backend=backend))
    kernel.def_benchmark_data(
        lambda *, platform: [
            jaxcc.BenchmarkConfig(
                f"n={n}",
                (jnp.linspace(0, 1, n, dtype=jnp.float32), jnp.full(n, 3.0, jnp.float32)),
                data_kwargs={"n": n},
            )
            for n in (8, 1024)
        ]
    )
    return kernel


def test_benchmark_records_table_and_png(tmp_path):
    kernel = benchmarked(wrong_backend=True)
    result = kernel.benchmark(platform="cpu", n_warmup=1, n_runs=3, n_batch_per_run=2)
    assert len(result) == 6 and result.labels() == ["n=8", "n=1024"]
    for record in result.records:
        assert record.success and record.n_runs == 3 and record.n_batch_per_run == 2
        assert 0 < record.min_ms <= record.median_ms <= record.max_ms
        assert record.reference_backend == "cpp"  # the platform's default
    verdicts = {(r.label, r.backend): r.correct for r in result.records}
    assert verdicts[("n=8", "numba")] is True and verdicts[("n=8", "wrong")] is False
    table = result.table()
    for word in ("speedup", "correct", "cpp", "numba", "wrong", "ref", "NO", "1.00x"):
        assert word in table
    assert result.fastest("n=8").label == "n=8"
    png = tmp_path / "bench.png"
    result.plot(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("suffix", ["json", "csv"])
def test_save_and_load_round_trip(tmp_path, suffix):
    result = benchmarked().benchmark(platform="cpu", n_warmup=0, n_runs=2, backends=["numba"])
    path = result.save(tmp_path / f"r.{suffix}")
    loaded = jaxcc.BenchmarkResult.load(path)
    assert [r.to_dict() for r in loaded.records] == [r.to_dict() for r in result.records]
    assert loaded.records[0].data_kwargs == {"n": 8}
    with pytest.raises(jaxcc.SpecError, match="'json' or 'csv'"):
        result.save(tmp_path / "r.pkl")


def test_failing_backend_is_recorded_or_raised():
    kernel = benchmarked(broken_backend=True)
    result = kernel.benchmark(platform="cpu", n_warmup=0, n_runs=2)
    broken = [r for r in result.records if r.backend == "broken"]
    assert broken and all(not r.success and "ZeroDivisionError" in r.error for r in broken)
    assert "failed" in result.table()
    with pytest.raises(jaxcc.KernelError):
        kernel.benchmark(platform="cpu", n_warmup=0, n_runs=1, catch_errors=False)


def test_benchmark_function_times_per_call():
    timing = jaxcc.benchmark_function(jax.jit(lambda x: x + 1), 1, 3, 4, (jnp.ones(3),))
    assert timing.min_ms <= timing.median_ms <= timing.max_ms
    assert timing.output.tolist() == [2.0, 2.0, 2.0]


def test_cli_benchmark(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    out, png = tmp_path / "cli.json", tmp_path / "cli.png"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "jaxcc", "benchmark", "--platform", "cpu"]
    command += ["--module", "ck_cli_ops", "--tags", "cli-test", "--n-warmup", "1", "--n-runs", "2"]
    done = subprocess.run(
        [*command, "--output", str(out), "--plot", str(png)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "speedup" in done.stdout and "n=256" in done.stdout
    data = json.loads(out.read_text())
    assert {r["backend"] for r in data["records"]} == {"cpp", "numba"}
    assert all(r["correct"] for r in data["records"])
    assert png.read_bytes()[:4] == b"\x89PNG"
    nothing = subprocess.run(
        [*command[:-4], "--tags", "no-such-tag"], capture_output=True, text=True, env=env
    )
    assert nothing.returncode == 1 and "--module" in nothing.stderr
