"""`jaxcc doctor`: what jaxcc would build and run with on this machine, each finding a PASS, WARN
or FAIL line with the fix. Tools are found by the core itself (same search order and memo as a
build), so the report cannot disagree with what a load would do."""

from __future__ import annotations

import dataclasses
import os
import platform
import re
import sys

from jaxcc import _core
from jaxcc.environment import discovery
from jaxcc.environment.cache_dir import get_cache_dir
from jaxcc.errors import JaxccError

PASS, WARN, FAIL, INFO = "PASS", "WARN", "FAIL", "INFO"
# Said with every missing build tool: a machine that only loads prebuilt bundles needs none.
_BUNDLES_OK = (
    "jaxcc.load_library (prebuilt bundles, docs/deploy.md) needs no compiler and still works"
)


@dataclasses.dataclass(frozen=True)
class Check:
    status: str  # PASS, WARN, FAIL or INFO
    name: str
    detail: str
    fix: str = ""


def _versions() -> list[Check]:
    from jaxcc import _jax_compat

    checks = [
        Check(INFO, "jaxcc", _core.version()),
        Check(INFO, "python", f"{platform.python_version()} ({sys.executable})"),
        Check(INFO, "platform", f"{platform.system()} {platform.machine()}"),
    ]
    problem = _jax_compat.check_jax_version()
    jax_version = _jax_compat.installed_jax_version()
    if jax_version is None:
        return checks + [Check(FAIL, "jax", "JAX is not installed", "pip install jax")]
    detail = f"jax {jax_version}, jaxlib {_distribution_version('jaxlib')}"
    checks.append(Check(FAIL, "jax", detail, problem) if problem else Check(PASS, "jax", detail))
    return checks


def _distribution_version(name: str) -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def ffi_api_version(include_dir: str) -> str | None:
    """XLA_FFI_API_MAJOR.MINOR from the XLA FFI C API header jaxlib ships, or None."""
    try:
        with open(os.path.join(include_dir, "xla", "ffi", "api", "c_api.h")) as header:
            text = header.read()
    except OSError:
        return None
    major = re.search(r"#define\s+XLA_FFI_API_MAJOR\s+(\d+)", text)
    minor = re.search(r"#define\s+XLA_FFI_API_MINOR\s+(\d+)", text)
    return f"{major.group(1)}.{minor.group(1)}" if major and minor else None


def _headers() -> list[Check]:
    import jax

    checks = []
    ffi_dir = jax.ffi.include_dir()
    version = ffi_api_version(ffi_dir)
    if version is None:
        checks.append(
            Check(
                FAIL,
                "XLA FFI headers",
                f"no xla/ffi/api/c_api.h under {ffi_dir}",
                "reinstall jaxlib (pip install --force-reinstall jaxlib)",
            )
        )
    else:
        checks.append(Check(PASS, "XLA FFI API", f"version {version} ({ffi_dir})"))
    kernel_headers = discovery.include_dir()
    if os.path.isfile(os.path.join(kernel_headers, "jaxcc", "jaxcc.h")):
        checks.append(Check(PASS, "kernel headers", kernel_headers))
    else:
        checks.append(
            Check(
                FAIL,
                "kernel headers",
                f"jaxcc/jaxcc.h is missing from {kernel_headers}",
                "reinstall jaxcc (pip install --force-reinstall jaxcc)",
            )
        )
    return checks


def _linker(compiler_found: bool) -> Check:
    """The linker line. It is chosen by linking with the host compiler, so without one there is
    nothing to check (and no variable to unset) unless $JAXCC_LINKER itself is what failed."""
    chosen = os.environ.get("JAXCC_LINKER", "")
    try:
        linker = _core.find_linker()
    except JaxccError as e:
        first = str(e).splitlines()[0].split(" Tried, in order:")[0]
        if chosen and "JAXCC_LINKER" in first:
            fix = "unset JAXCC_LINKER (the compiler's choice), or set it to gold, lld or mold"
            return Check(FAIL, "linker", first, fix)
        if not compiler_found:
            detail = "not checked: it is chosen by linking with the host compiler; there is none"
            return Check(INFO, "linker", detail)
        return Check(FAIL, "linker", first, _fix_of(e))
    detail = f"{linker.path}" + (f": {linker.version}" if linker.version else "")
    return Check(PASS, "linker", f"{detail} ({linker.found_by})")


def _tools() -> list[Check]:
    checks = []
    try:
        compiler = _core.find_host_compiler()
        checks.append(
            Check(
                PASS,
                "host compiler",
                f"{compiler.path}: {compiler.version} (found by {compiler.found_by})",
            )
        )
    except JaxccError as e:
        # The error's first line, without the list of what was tried that follows it.
        found = str(e).splitlines()[0].split(". Tried")[0]
        detail = f"{found}: load_cpp_*/load_cuda_* cannot build; {_BUNDLES_OK}"
        checks.append(Check(FAIL, "host compiler", detail, _fix_of(e)))
    chosen = {checks[-1].detail.split(":")[0]}
    for name in ("g++", "clang++"):
        path = _which(name)
        if path and os.path.realpath(path) not in {os.path.realpath(c) for c in chosen}:
            try:
                checks.append(Check(INFO, name, f"{path}: {_core.probe_version(path)} (on PATH)"))
            except JaxccError as e:
                checks.append(Check(WARN, name, f"{path}: {e}", f"fix or remove {path}"))
    checks.append(_linker(compiler_found=checks[0].status == PASS))
    try:
        checks.append(Check(PASS, "ninja", _core.find_ninja(discovery.ninja_search_dirs())))
    except JaxccError as e:
        # The first line without its "Tried, in order:" head: the list it heads is not shown.
        first = str(e).splitlines()[0].split(" Tried, in order:")[0]
        checks.append(Check(FAIL, "ninja", f"{first}; {_BUNDLES_OK}", "pip install ninja"))
    try:
        bins, libs = discovery.nvidia_wheel_dirs()
        nvcc = _core.find_nvcc(bins)
        checks.append(
            Check(PASS, "nvcc", f"{nvcc.path}: {nvcc.version} (found by {nvcc.found_by})")
        )
        checks.append(_cuda_runtime(libs, nvcc.version))
    except JaxccError as e:
        first = str(e).splitlines()[0]
        # $JAXCC_NVCC naming no nvcc is named as such, not as a plain "not found".
        found = first if first.startswith("$JAXCC_NVCC=") else "not found"
        checks.append(
            Check(
                WARN,
                "nvcc",
                f"{found}: CUDA kernels (load_cuda_*) cannot be built; C++ kernels can",
                _fix_of(e),
            )
        )
    return checks


def _cuda_runtime(runtime_dirs: list[str], nvcc_version: str) -> Check:
    """Which CUDA runtime a CUDA module links ($JAXCC_CUDA_RUNTIME, decision 136)."""
    try:
        shared, wheel = _core.cuda_runtime_choice(runtime_dirs, nvcc_version)
    except JaxccError as e:
        return Check(FAIL, "CUDA runtime", str(e), "export JAXCC_CUDA_RUNTIME=static, or unset it")
    if not shared:
        return Check(INFO, "CUDA runtime", "static, one in each module (JAXCC_CUDA_RUNTIME=static)")
    if wheel:
        return Check(PASS, "CUDA runtime", f"shared: {wheel}, the copy JAX's CUDA plugin loads")
    return Check(
        INFO,
        "CUDA runtime",
        "static, one in each module: no nvidia-cuda-runtime wheel of nvcc's major version is "
        "importable (JAX's GPU wheels bring one; with it modules share JAX's runtime)",
    )


def _gpus() -> list[Check]:
    archs = discovery.jax_gpu_archs()
    if archs:
        return [Check(PASS, "GPUs", f"JAX sees GPUs of compute capability {', '.join(archs)}")]
    return [
        Check(
            WARN,
            "GPUs",
            "JAX sees no GPU: CUDA kernels build (with compute_capability=...) but cannot run",
            "on an NVIDIA machine: pip install 'jax[cuda13]' (or 'jax[cuda12]')",
        )
    ]


def _cache() -> list[Check]:
    root = get_cache_dir()
    checks = []
    try:
        _core.check_private_path(root)
        locks = _core.cache_lock_mode(root)
    except JaxccError as e:
        return [Check(FAIL, "cache", str(e).splitlines()[0], _fix_of(e))]
    if not os.path.exists(root):
        detail = f"{root} (not created yet; made with mode 0700 on first build), locks: {locks}"
        return [Check(PASS, "cache", detail)]
    if not os.access(root, os.W_OK):
        checks.append(
            Check(
                WARN,
                "cache",
                f"{root} is not writable: builds fall back to a private temporary directory",
                "point $JAXCC_CACHE_DIR or jaxcc.set_cache_dir(...) at a writable directory",
            )
        )
    entries = _core.cache_list(root)
    size = sum(e.bytes for e in entries)
    cap = _core.cache_max_bytes()
    mode = oct(os.stat(root).st_mode & 0o777)
    detail = (
        f"{root}: {len(entries)} entries, {size / 2**20:.1f} MiB "
        f"(cap {'none' if not cap else f'{cap / 2**30:.1f} GiB'}), mode {mode}, locks: {locks}"
    )
    checks.append(Check(PASS, "cache", detail))
    return checks


def _which(name: str) -> str | None:
    import shutil

    return shutil.which(name)


def _fix_of(error: Exception) -> str:
    """The "How to fix" part of a jaxcc error message, or its last line."""
    text = str(error)
    at = text.find("How to fix:")
    if at >= 0:
        return text[at + len("How to fix:") :].strip().splitlines()[0]
    return text.strip().splitlines()[-1]


def run_checks() -> list[Check]:
    checks = _versions()
    if any(c.name == "jax" and c.status == FAIL for c in checks):
        return checks + _tools() + _cache()
    return checks + _headers() + _tools() + _gpus() + _cache()


def report(checks: list[Check]) -> str:
    lines = []
    for check in checks:
        lines.append(f"{check.status:<4}  {check.name:<16} {check.detail}")
        if check.fix and check.status in (WARN, FAIL):
            lines.append(f"{'':<22} fix: {check.fix}")
    failed = sum(c.status == FAIL for c in checks)
    warned = sum(c.status == WARN for c in checks)
    lines.append(f"{failed} failed, {warned} warning(s)")
    return "\n".join(lines)


def print_diagnostics() -> None:
    """Prints what jaxcc would build and run with (brainevent's name for `jaxcc doctor`)."""
    print(report(run_checks()))
