"""Shared fixtures: every test session gets a private cache directory, so tests never touch the
user's cache and can reason about hits and misses."""

import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import uuid

import pytest

import jaxcc

# On a GPU, XLA takes 75% of the card's memory per process by default; tests that start GPU
# subprocesses (and gpu-check's parallel steps) would then fail with CUDA_ERROR_OUT_OF_MEMORY.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory):
    cache = tmp_path_factory.mktemp("jaxcc-cache")
    jaxcc.set_cache_dir(cache)
    os.environ["JAXCC_CACHE_DIR"] = str(cache)  # for subprocesses started by tests
    yield cache


@pytest.fixture
def fresh_cache(tmp_path):
    """A cache directory of this test's own (cold builds, concurrency, crash tests)."""
    cache = tmp_path / "cache"
    previous = jaxcc.get_cache_dir()
    jaxcc.set_cache_dir(cache)
    old_env = os.environ.get("JAXCC_CACHE_DIR")
    os.environ["JAXCC_CACHE_DIR"] = str(cache)
    yield cache
    jaxcc.set_cache_dir(previous)
    os.environ["JAXCC_CACHE_DIR"] = old_env or previous


@pytest.fixture
def unique_name(request):
    """A module name no other test (or earlier run) in this process has registered."""
    base = "".join(c if c.isalnum() else "_" for c in request.node.name)[:40]
    return f"t_{base}_{uuid.uuid4().hex[:8]}"


def run_python(code: str, env=None, timeout=300) -> subprocess.CompletedProcess:
    """Runs code in a fresh interpreter (real process, real import of jaxcc)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=timeout
    )


def has_gpu() -> bool:
    return shutil.which("nvidia-smi") is not None


def _jax_has_gpu() -> bool:
    import jax

    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


# Modules whose outcome cannot depend on the Python or JAX version: what they exercise is the
# build, the cache, source files or a command line, and on a machine without a GPU JAX only
# registers what they build. They are marked `version_independent`; the Python 3.12 leg of the
# README's test command (newest JAX) leaves them to the 3.11 leg, which runs everything
# (decision 145). A module that calls a kernel through JAX in a way that matters does not belong.
VERSION_INDEPENDENT_MODULES = {
    "test_cuda_build.py": "nvcc builds; without a GPU, JAX only registers the targets",
    "test_object_reuse.py": "the object cache across module builds",
    "test_wrapper_reuse.py": "reuse of the generated wrapper's object",
    "test_deferred_sources.py": "source files entering a request by their stat stamp",
    "test_warm_index.py": "the warm index's records and its refusals",
    "test_stale_builds.py": "which header edits rebuild a cached module",
    "test_cache_property.py": "cached loads against fresh builds after drawn edits",
    "test_cache_cli.py": "the cache command line",
    "test_concurrency.py": "processes and threads building one cache entry",
    "test_faults.py": "the cache under killed and failing builds",
    "test_install_errors.py": "CMake's refusals at install time",
    "test_source_files.py": "how the core reads source text",
    "test_layering.py": "the stages' include graph",
    "test_nvcc_wheel_dirs.py": "finding nvcc's wheel directories",
    "test_gpu_check_summary.py": "the GPU check's summary script",
    "test_macro_differential.py": "jaxcc's reading of macros against g++ -E; no JAX call",
    "test_build_steps.py": "the build's ninja log",
    "test_linker.py": "which linker links a CPU module; JAX only runs what it linked",
    "test_build_world.py": "what the compiler and linker read, in the key; no JAX call",
    "test_build_world_property.py": "loads against fresh builds of a drawn world; no JAX call",
    "test_process_end.py": "the C++ runtime's reports as a process ends; JAX only dispatches",
    "test_crash_report.py": "the C++ runtime's report of a fatal signal; JAX only dispatches",
    "test_check_kernel_input_guards.py": "the debug frame runtime's guard zones (C++)",
    "test_check_kernel_debug_build.py": "the debug build's flags against the release build",
    "test_check_kernel_bounds.py": "the debug twin's guard zones at each shape (C++ runtime)",
    "test_check_kernel_dtypes.py": "the x64 child's protocol; x64 calls are test_arg_dtypes'",
    "test_autotune_isolation.py": "a crashing or hanging variant in the tuning child; the keys "
    "under JAX's transforms are test_autotune.py's, run by both legs",
    "test_autotune_wire.py": "the tuning child's message format; no JAX call",
    "test_error_fixes.py": "the messages and their fixes; the transforms they come from run "
    "in custom_kernel/ and test_calls.py on both legs",
    "test_cache_shared_fs.py": "lock files on a cache shared by several hosts",
    "test_load_stress.py": "many loads of one cache at once",
    "test_doctor.py": "jaxcc doctor's view of the tools",
    "test_clang_kernels.py": "kernels built by clang++; JAX only runs what it built",
    "test_kernel_unit_headers.py": "the kernel headers a unit includes",
    "test_macro_stamped.py": "signatures stamped out by macros",
    "test_signature_proof.py": "the compiler's proof of a read signature",
    "test_shared_cuda_runtime.py": "which CUDA runtime an nvcc build links; without a GPU",
    "test_cuda_readiness.py": "nvcc builds refused or accepted before any GPU call",
    "test_cuda_runtime_link.py": "the CUDA runtime a module links",
    "test_prebuilt_wheel.py": "a wheel's prebuilt kernels installed and loaded",
}


# The modules whose tests are slow one by one, slowest first (seconds of the 3.11 leg at 32e55b2 on
# two loaded cores). Under xdist they start before the other single tests, so that the run does
# not end on one worker with one of them (decision 257).
SLOW_MODULES_FIRST = [
    "test_cache_property.py",  # 222 s, one Hypothesis test
    "test_build_world_property.py",  # 65 s, one state machine
    "test_load_stress.py",  # 39 s, 22 s, 20 s
    "test_cuda_build.py",  # 28 s, 23 s, 20 s
    "test_object_reuse.py",  # 27 s
    "test_examples.py",  # 29 s
    "test_hostile_inputs.py",  # 24 s
    "test_prebuilt_wheel.py",  # 22 s
    "test_warm_index.py",  # 20 s, 16 s, 13 s
]

# Modules whose tests share work through the process without a module-scoped fixture of their
# own, so that shares_work_across_tests cannot see it; with the reason.
ONE_WORKER_MODULES = {
    "test_error_fixes.py": "the cases load variants of one shared module (the `shared` fixture, "
    "taken by name): on one worker the variants are cache hits or reuse its objects",
}
_SHARED_SCOPE = re.compile(r"""scope=["'](module|class|package)["']""")


def shares_work_across_tests(path) -> bool:
    """Whether a test module's tests share work made once per worker: a module-, class- or
    package-scoped fixture of its own (a build, a child process), or ONE_WORKER_MODULES."""
    path = pathlib.Path(path)
    return path.name in ONE_WORKER_MODULES or bool(_SHARED_SCOPE.search(path.read_text()))


def xdist_unit(nodeid: str, shared_modules) -> str:
    """The unit of work xdist hands a worker for this test: its whole module when the module is
    in shared_modules (rootdir-relative paths), else the test alone."""
    module = nodeid.split("::", 1)[0]
    return module if module in shared_modules else nodeid


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """`-n N` (xdist's `--dist load`, scripts/test.sh) with one change, decision 257: the tests
    of a module that shares work across its tests (shares_work_across_tests) go to one worker as
    one unit, so the module's fixture is made once. With plain `load`, chunks of consecutive
    tests went to each worker, and a module split between the two made its fixture on both
    (test_sharding.py's child of 8 devices, 25-30 s, ran twice in the fresh run of 32e55b2).
    `--dist loadgroup` would do this from xdist_group marks, but with pytest 9.2 it groups
    nothing (pytest-xdist issue 1386: the group suffix it writes into the node id is lost).
    The other tests are units of one; xdist's loadscope scheduler hands out the largest units
    first, then the rest in collection order (SLOW_MODULES_FIRST's first)."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath
    shared = {
        path.relative_to(root).as_posix()
        for path in (root / "tests").rglob("test_*.py")
        if shares_work_across_tests(path)
    }

    class ModuleFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return xdist_unit(nodeid, shared)

    return ModuleFixtureScheduling(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Marks the version-independent modules' tests. Tests marked `gpu` run only where JAX has a
    CUDA backend and are skipped (not failed) elsewhere, CI included. SLOW_MODULES_FIRST's
    modules come first (the order xdist hands out single tests in)."""
    rank = {name: i for i, name in enumerate(SLOW_MODULES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: modules stay whole
    for item in items:
        if item.path.name in VERSION_INDEPENDENT_MODULES:
            item.add_marker(pytest.mark.version_independent)
    if not any("gpu" in item.keywords for item in items) or _jax_has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU and a CUDA-enabled jaxlib")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def logging_compiler(tmp_path, monkeypatch, compiler="g++"):
    """$CXX set to `compiler` behind a script that logs each command line; returns the log's
    path."""
    log = tmp_path / "cxx.log"
    script = tmp_path / "cxx-logging"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{compiler}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CXX", str(script))
    return log


def compiled_units(log):
    """Source files compiled since the last call (and forgets them)."""
    if not log.exists():
        return []
    units = sorted(
        line.split(" -c ")[1].split()[0] for line in log.read_text().splitlines() if " -c " in line
    )
    log.unlink()
    return units


def asan_preload(compiler="g++", runtime="libasan.so") -> str:
    """LD_PRELOAD for a process that loads AddressSanitizer-built kernels: `compiler`'s ASan
    runtime, then libstdc++ (docs/usage.md, the debug profile)."""
    return " ".join(
        subprocess.run(
            [compiler, f"-print-file-name={lib}"], capture_output=True, text=True
        ).stdout.strip()
        for lib in (runtime, "libstdc++.so")
    )


def printed_results(proc: subprocess.CompletedProcess) -> dict:
    """The JSON a child script printed on its last `RESULTS ` line; fails with the child's output
    when it exited non-zero or printed none."""
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULTS ")]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(lines[-1][len("RESULTS ") :])
