"""pytest plugin (test-only, not part of jaxcc): brainevent 0.3.0's operators on jaxcc.

Loaded with `-p brainevent_on_jaxcc.plugin` (this directory's parent on sys.path) before pytest
imports any test module. It installs an import hook that, as soon as each module of brainevent's
kernel layer (`brainevent._op` and its submodules) has executed, replaces that module's kernel
system with jaxcc's: the loaders, `XLACustomKernel`/`KernelEntry`, the Numba bridges and the
helpers brainevent's operators hand to XLACustomKernel. brainevent's operator modules import those
names from the kernel layer (`from brainevent._op import XLACustomKernel, numba_kernel`), so every
operator is built on jaxcc without a line of brainevent changed. brainevent's own helpers that are
not kernel machinery (`_op.util`: dtype suffixes, event tests) stay brainevent's.

`JAXCC_SHIM_OFF=1` loads the plugin without patching, to run the same command on brainevent
itself for comparison (scripts/brainevent-on-jaxcc.sh). Two more variables serve that script's
triage mode: `JAXCC_SHIM_OUTCOMES=FILE` writes one `outcome<TAB>node id` line per test
(passed/failed/error/skipped), and `JAXCC_SHIM_SELECT=FILE` runs only the node ids listed in FILE
(one a line), so brainevent itself reruns just the tests that did not pass on jaxcc.
"""

from __future__ import annotations

import os
import sys

from brainevent_on_jaxcc.hooks import patch_after_import, with_brainevent_include

# module of brainevent's kernel layer -> names replaced there by jaxcc's objects of the same name.
LOADERS = (
    "load_cuda_inline",
    "load_cuda_file",
    "load_cuda_dir",
    "load_cpp_inline",
    "load_cpp_file",
)
REPLACED = {
    "brainevent._op.kernix_pipeline": LOADERS,
    "brainevent._op.main": ("XLACustomKernel", "KernelEntry"),
    "brainevent._op.numba_ffi": ("numba_kernel",),
    "brainevent._op.numba_cuda_ffi": ("numba_cuda_kernel",),
    "brainevent._op.benchmark": ("BenchmarkConfig", "BenchmarkRecord", "BenchmarkResult",
                                 "benchmark_function"),
    "brainevent._op.util": ("defjvp", "general_batching_rule"),
    # The process-wide backend choice is the kernel layer's too: brainevent's XLACustomKernel
    # reads it from here, jaxcc's from jaxcc (left alone, brainevent.set_backend would do nothing).
    "brainevent.config": ("set_backend", "get_backend", "clear_backends"),
    # The table of primitives: brainevent's XLACustomKernel enters itself in brainevent's, jaxcc's
    # in jaxcc's. These two read the same on both (name -> kernel, sorted names); brainevent's
    # get_primitives_by_tags (a dict, `_tags`) and register_primitive(name, kernel) differ from
    # jaxcc's (a list, `tags`; register_primitive(kernel)) and are left, reading an empty table.
    "brainevent._registry": ("get_registry", "get_all_primitive_names"),
    # The kernel layer's exceptions: jaxcc raises its own classes under these brainevent names
    # (docs/custom_kernel.md), so `except brainevent.KernelRegistrationError` catches jaxcc's.
    # Only brainevent's kernel layer raises them. brainevent's KernelError, their base there, is
    # not replaced: jaxcc's KernelError has another meaning (a kernel that failed).
    "brainevent._error": ("KernelCompilationError", "KernelRegistrationError", "KernelLoadError",
                          "KernelFallbackExhaustedError"),
    "brainevent._op": (*LOADERS, "XLACustomKernel", "KernelEntry", "numba_kernel",
                       "numba_cuda_kernel", "BenchmarkConfig", "BenchmarkRecord",
                       "BenchmarkResult", "benchmark_function", "defjvp",
                       "general_batching_rule"),
}  # fmt: skip
patched: dict[str, list[str]] = {}


def _replacement(name: str):
    import jaxcc

    if name in LOADERS:
        if name not in _loaders:
            _loaders[name] = with_brainevent_include(getattr(jaxcc, name))
        return _loaders[name]
    return getattr(jaxcc, name)


_loaders: dict[str, object] = {}


def _patch(module) -> None:
    names = REPLACED[module.__name__]
    for name in names:
        if not hasattr(module, name):
            raise RuntimeError(f"brainevent_on_jaxcc: {module.__name__} has no {name} to replace")
        setattr(module, name, _replacement(name))
    patched[module.__name__] = list(names)


def install() -> None:
    patch_after_import(REPLACED, _patch, "brainevent_on_jaxcc")


ACTIVE = os.environ.get("JAXCC_SHIM_OFF") != "1"
if ACTIVE:
    install()


def pytest_report_header(config):
    return "kernel layer: " + ("jaxcc (brainevent_on_jaxcc shim)" if ACTIVE else "brainevent")


def pytest_sessionfinish(session, exitstatus):
    # A run that collected brainevent's operators must have gone through the shim: otherwise the
    # counts would be brainevent's own, silently.
    if ACTIVE and "brainevent._op" in sys.modules:
        import jaxcc

        op = sys.modules["brainevent._op"]
        if op.XLACustomKernel is not jaxcc.XLACustomKernel or set(patched) != set(REPLACED):
            session.exitstatus = 3
            print(f"\nbrainevent_on_jaxcc: the kernel layer was not replaced ({sorted(patched)})")


def pytest_collection_modifyitems(session, config, items):
    select = os.environ.get("JAXCC_SHIM_SELECT")
    if not select:
        return
    with open(select, encoding="utf-8") as f:
        wanted = {line.rstrip("\n") for line in f if line.strip()}
    kept = [item for item in items if item.nodeid in wanted]
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in wanted])
    items[:] = kept


# node id -> outcome; a failure in setup or teardown is an error, a failing call a failure.
_outcomes: dict[str, str] = {}


def pytest_runtest_logreport(report):
    if not os.environ.get("JAXCC_SHIM_OUTCOMES"):
        return
    if report.failed:
        outcome = "failed" if report.when == "call" else "error"
    elif report.skipped:
        outcome = "skipped"
    elif report.when == "call":
        outcome = "passed"
    else:
        outcome = None  # a setup or teardown that passed says nothing
    if outcome and _outcomes.get(report.nodeid) not in ("failed", "error"):  # the worst wins
        _outcomes[report.nodeid] = outcome
    if report.when == "teardown" and report.nodeid in _outcomes:
        # Also as each test ends, so a run stopped early (a directory that outlasts the time
        # there is) still says which tests passed; the session's end rewrites the file.
        with open(os.environ["JAXCC_SHIM_OUTCOMES"] + ".partial", "a", encoding="utf-8") as f:
            f.write(f"{_outcomes[report.nodeid]}\t{report.nodeid}\n")


def pytest_unconfigure(config):
    path = os.environ.get("JAXCC_SHIM_OUTCOMES")
    if path and not hasattr(config, "workerinput"):  # xdist: the controller sees every report
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(f"{outcome}\t{nodeid}\n" for nodeid, outcome in sorted(_outcomes.items()))
