"""`jaxcc doctor` (and brainevent's print_diagnostics): real tools, real processes; a broken
setup must turn into a FAIL line with its fix and a non-zero exit."""

import json
import os
import subprocess
import sys

import jaxcc


def doctor(*args, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env = {k: v for k, v in full_env.items() if v is not None}  # None: unset
    return subprocess.run(
        [sys.executable, "-m", "jaxcc", "doctor", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=300,
    )


def test_doctor_reports_the_tools_a_build_would_use(tmp_path):
    result = doctor(env={"JAXCC_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    compiler = next(line for line in lines if line.startswith("PASS  host compiler"))
    assert "found by" in compiler and "--version" not in compiler
    assert any(line.startswith("PASS  XLA FFI API") and "version" in line for line in lines)
    assert any(line.startswith("PASS  ninja") for line in lines)
    assert any(line.startswith("PASS  cache") and "not created yet" in line for line in lines)
    assert lines[-1].startswith("0 failed")


def test_doctor_json_has_one_entry_per_check(tmp_path):
    result = doctor("--json", env={"JAXCC_CACHE_DIR": str(tmp_path / "cache")})
    checks = json.loads(result.stdout)
    assert {c["status"] for c in checks} <= {"PASS", "WARN", "FAIL", "INFO"}
    names = [c["name"] for c in checks]
    for expected in ("jaxcc", "jax", "XLA FFI API", "host compiler", "ninja", "nvcc", "cache"):
        assert expected in names, names


def test_a_missing_compiler_is_a_fail_with_the_fix_and_exit_1(tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    result = doctor(
        env={
            "PATH": str(empty),
            "CXX": None,  # CXX naming no compiler is its own FAIL (the test below)
            "JAXCC_CACHE_DIR": str(tmp_path / "cache"),
        }
    )
    assert result.returncode == 1, result.stdout
    line = next(x for x in result.stdout.splitlines() if x.startswith("FAIL  host compiler"))
    assert "no usable host C++ compiler" in line and "cannot build" in line, line
    assert "jaxcc.load_library (prebuilt bundles" in line and "still works" in line, line
    assert "fix: install one" in result.stdout


def test_a_cache_others_can_write_is_a_fail(tmp_path):
    cache = tmp_path / "shared-cache"
    cache.mkdir()
    cache.chmod(0o777)
    result = doctor(env={"JAXCC_CACHE_DIR": str(cache)})
    assert result.returncode == 1, result.stdout
    assert "FAIL  cache" in result.stdout and "fix:" in result.stdout


def test_print_diagnostics_prints_the_report(capsys, tmp_path):
    jaxcc.print_diagnostics()
    out = capsys.readouterr().out
    assert "host compiler" in out and "failed" in out.splitlines()[-1]


def test_the_cache_check_names_the_lock_mode_and_refuses_a_bad_one(tmp_path):
    cache = str(tmp_path / "cache")
    result = doctor(env={"JAXCC_CACHE_DIR": cache, "JAXCC_CACHE_LOCK": "lockfile"})
    assert "locks: lockfile ($JAXCC_CACHE_LOCK)" in result.stdout, result.stdout
    result = doctor(env={"JAXCC_CACHE_DIR": cache, "JAXCC_CACHE_LOCK": ""})
    assert "locks: flock (auto: local filesystem)" in result.stdout or "locks: lockfile (auto:" in (
        result.stdout
    )
    result = doctor(env={"JAXCC_CACHE_DIR": cache, "JAXCC_CACHE_LOCK": "posix"})
    assert result.returncode == 1
    line = next(x for x in result.stdout.splitlines() if x.startswith("FAIL  cache"))
    assert "JAXCC_CACHE_LOCK='posix'" in line, result.stdout


def test_the_cuda_runtime_check_says_which_runtime_modules_link(tmp_path):
    import shutil

    if shutil.which("nvcc") is None and not os.path.exists("/usr/local/cuda/bin/nvcc"):
        import pytest

        pytest.skip("nvcc is not installed")
    env = {"JAXCC_CACHE_DIR": str(tmp_path / "cache"), "CUDA_HOME": "/usr/local/cuda"}

    def line(**more):
        out = doctor(env={**env, **more}).stdout.splitlines()
        return next(x for x in out if "CUDA runtime" in x)

    # No nvidia-cuda-runtime wheel on this path: the default falls back to the static runtime.
    no_wheel = line(PYTHONPATH=str(tmp_path / "none"))
    assert no_wheel.startswith("INFO  CUDA runtime") and "no nvidia-cuda-runtime wheel" in no_wheel
    asked = line(JAXCC_CUDA_RUNTIME="static")
    assert asked.startswith("INFO  CUDA runtime") and "JAXCC_CUDA_RUNTIME=static" in asked
    bad = line(JAXCC_CUDA_RUNTIME="dynamic")
    assert bad.startswith("FAIL  CUDA runtime") and "JAXCC_CUDA_RUNTIME='dynamic'" in bad


def test_cxx_or_jaxcc_nvcc_naming_no_tool_is_named_with_its_fix(tmp_path):
    # Decision 252: both were passed over for the next compiler on PATH, silently.
    env = {"CXX": "notacompiler", "JAXCC_NVCC": str(tmp_path / "no-nvcc")}
    result = doctor(env={**env, "JAXCC_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    compiler = next(x for x in lines if x.startswith("FAIL  host compiler"))
    assert "$CXX=notacompiler names no usable C++ compiler (not found)" in compiler, compiler
    assert "fix: unset CXX" in result.stdout
    nvcc = next(x for x in lines if x[6:].startswith("nvcc"))
    assert nvcc.startswith("WARN") and f"$JAXCC_NVCC={env['JAXCC_NVCC']} names no" in nvcc, nvcc
    assert "fix: unset JAXCC_NVCC" in result.stdout


def test_without_a_compiler_the_linker_line_names_no_unset_variable(tmp_path):
    # The linker is chosen by linking with the compiler: without one, the report must not print
    # "Tried, in order:" followed by nothing, nor tell the user to unset a variable never set.
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("JAXCC_LINKER", "CXX", "CC")}
    env.update(PATH=str(empty), JAXCC_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run(
        [sys.executable, "-m", "jaxcc", "doctor"], capture_output=True, text=True, env=env,
        timeout=300,
    )  # fmt: skip
    out = result.stdout
    assert result.returncode == 1, out
    assert "JAXCC_LINKER" not in out, out
    assert not any(line.rstrip().endswith("Tried, in order:") for line in out.splitlines()), out
    linker = next(x for x in out.splitlines() if x[6:].startswith("linker"))
    assert linker.startswith("INFO  linker") and "no" in linker and "host compiler" in linker


def test_a_bad_jaxcc_linker_is_a_fail_that_names_the_variable(tmp_path):
    result = doctor(env={"JAXCC_LINKER": "bogus", "JAXCC_CACHE_DIR": str(tmp_path / "cache")})
    lines = result.stdout.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("FAIL  linker"))
    assert "JAXCC_LINKER=bogus" in lines[at], lines
    assert "unset JAXCC_LINKER" in lines[at + 1] and "gold" in lines[at + 1], lines
