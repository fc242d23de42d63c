"""The rows of docs/errors.md whose trigger is the machine rather than the call (issue 52 item
3): a file or directory this user cannot read or write, another user's cache directory, a full
disk, a missing package, no ninja, a jaxlib whose FFI header is gone or unknown, a bundle of
another FFI API or missing a library it links, an older JAX, a broken jaxcc install, a broken
compiler on PATH, another compiler's sanitizer runtime. Each case makes that state here, sees the
row's error class and fix text, then applies the fix as the message words it and sees the call
work, as tests/test_error_fixes.py does for the others (its table check counts these cases).

How each state is made (decisions 261 and 263):
- "root reads/writes every file": the call runs in a child that is root without
  CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH (`setpriv --bounding-set`), so file modes bind it as
  they bind any user; the child keeps root's Python and cache. Another user's directory is
  `chown`ed to nobody. Skipped where the test is not root or setpriv cannot drop them.
- a full disk: a 1 MiB tmpfs, filled (skipped where mount is refused, as in an unprivileged CI).
- a missing package: an import hook raising ModuleNotFoundError for it, with its modules taken
  out of sys.modules for the call, as Python does for a package that is not installed; the fix
  ("pip install X") is the state with the hook gone, the package importable.
- no ninja: a child whose interpreter is a link in an empty folder and whose PATH holds no ninja.
- another jaxlib: jax.ffi.include_dir() answering a folder whose XLA FFI header is missing or
  has no version, or a bundle manifest recording another FFI API; the fix is the real jaxlib.
- an older JAX: jax.__version__ set below jaxcc's lowest before jaxcc is imported (a child).
- a broken install or library: a copy of the package without a header; a library moved away.

Speed: most fixed calls are cache hits on test_error_fixes' shared load and bundle, or on
`twice`, one small function for the cases that must build; each child imports JAX once. The
builds: `twice` itself, its rebuilds (response file, unwritable caches, no ninja, full disk), a
bundle linking a library, and an AddressSanitizer build by Clang (the slowest case)."""

# ruff: noqa: F811  (the fixtures imported from test_error_fixes are parameters here)
from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import site
import stat
import subprocess
import sys

import jax
import numpy as np
import pytest
from test_error_fixes import (  # noqa: F401  (fixtures)
    OUT,
    ROOT,
    ROWS,
    SHARED_MODULE,
    X,
    _primitive,
    _row,
    bundle_source,
    case_registry,
    cli,
    copied_bundle,
    copied_bundle_edited,
    expect,
    fresh_bundle,
    load,
    shared,
    works,
    works_bundle,
)

import jaxcc
from jaxcc.cli import doctor
from jaxcc.environment.discovery import jax_gpu_archs

CASES, case = case_registry()


def fix_in(ident: str, text: str) -> None:
    assert ROWS[ident].pattern().search(text), f"{ident}: the fix is not in:\n{text}"


# -- states of the machine


def _can_drop_dac() -> bool:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    probe = subprocess.run(
        ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", "true"],
        capture_output=True,
    )
    return probe.returncode == 0


DROP_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


@pytest.fixture(scope="module")
def file_modes():
    """Children started with DROP_DAC are bound by file modes (skipped where they cannot be)."""
    if not _can_drop_dac():
        pytest.skip("needs root and setpriv to drop CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH")


def child(code: str, *, prefix=(), executable=sys.executable, env=None, timeout=180):
    """`code` in a fresh interpreter that imports this directory's modules; the JSON it printed
    last."""
    program = f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n" + code
    done = subprocess.run(
        [*prefix, executable, "-c", program], capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# The module of the cases that must compile: one small function builds faster than the shared
# load's nine.
TWICE = r"""
#include "jaxcc/jaxcc.h"
void twice(const jaxcc::Tensor& x, jaxcc::Tensor y) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = 2 * x.data_ptr<float>()[i];
}
"""


def load_twice(name="errfix_twice", **options):
    return jaxcc.load_cpp_inline(name, TWICE, functions={"twice": None}, **options)


def works_twice(mod) -> None:
    np.testing.assert_allclose(mod.twice(X), X * 2)


@pytest.fixture(scope="module")
def twice():
    """errfix_twice in the session's cache (its entry, its objects)."""
    return load_twice()


# A child's report of one call: the error's class and text (None when it worked) and the
# warnings it gave.
CALL = r"""
import json, warnings
import test_error_fixes_environment as e
def call(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            fn(*args, **kwargs)
            error = None
        except Exception as raised:
            error = [type(raised).__name__, str(raised)]
    return {"error": error, "warnings": [[w.category.__name__, str(w.message)] for w in seen]}
"""


def fill(mount: pathlib.Path) -> None:
    with contextlib.suppress(OSError), open(mount / "filler", "wb") as filler:
        while True:
            filler.write(b"\0" * 4096)
            filler.flush()


@pytest.fixture
def full_disk(tmp_path):
    """A filled 1 MiB tmpfs (skipped where mount is refused)."""
    mount = tmp_path / "full"
    mount.mkdir()
    tried = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True
    )
    if tried.returncode != 0:
        pytest.skip(f"mount of a tmpfs refused here: {tried.stderr.decode().strip()}")
    try:
        (mount / "tmp").mkdir()
        fill(mount)
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


@contextlib.contextmanager
def missing(*packages, importers=()):
    """While open, `import` of `packages` fails as it does where they are not installed; their
    modules, and `importers` (modules that imported them), are out of sys.modules meanwhile."""

    class NotInstalled:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in packages:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    with pytest.MonkeyPatch.context() as patch:
        for name in list(sys.modules):
            if name.split(".")[0] in packages or name in importers:
                patch.delitem(sys.modules, name)
        patch.setattr(sys, "meta_path", [NotInstalled(), *sys.meta_path])
        yield


def doctor_lines() -> str:
    return doctor.report(doctor.run_checks())


def doctor_row(report: str, name: str) -> str:
    """The doctor lines of check `name`: its line, the lines of its detail and its fix line."""
    lines = report.splitlines()
    at = next(i for i, line in enumerate(lines) if line[6:].startswith(name + " "))
    end = at + 1
    while end < len(lines) and not lines[end].startswith(("PASS", "WARN", "FAIL", "INFO")):
        end += 1
    return "\n".join(lines[at:end])


# -- files this user cannot read or write


@case("response_file_unreadable")
def _(twice, tmp_path, file_modes):
    flags = tmp_path / "flags.rsp"
    flags.write_text("-DERRFIX_RESPONSE=1\n")
    flags.chmod(0)
    code = CALL + (
        "import os\n"
        f"before = call(e.load_twice, extra_cflags=['@{flags}'])\n"
        f"os.chmod({str(flags)!r}, 0o644)  # the fix: make it readable\n"
        f"after = call(lambda: e.works_twice(e.load_twice(extra_cflags=['@{flags}'])))\n"
        "print(json.dumps([before, after]))\n"
    )
    before, after = child(code, prefix=DROP_DAC)
    assert before["error"][0] == "SpecError", before
    fix_in("response_file_unreadable", before["error"][1])
    assert after["error"] is None, after


@case("compiler_unreadable")
def _(shared, tmp_path, file_modes):
    compiler = tmp_path / "g++"
    shutil.copy(shutil.which("g++"), compiler)
    compiler.chmod(stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)  # runs, cannot be read
    code = CALL + (
        "import test_error_fixes as t, os, shutil\n"
        f"os.environ['CXX'] = {str(compiler)!r}\n"
        "before = call(t.load)\n"
        "os.environ['CXX'] = shutil.which('g++')  # the fix: CXX at a readable compiler\n"
        "after = call(lambda: t.works(t.load()))\n"
        "print(json.dumps([before, after]))\n"
    )
    before, after = child(code, prefix=DROP_DAC)
    assert before["error"][0] == "ToolchainError", before
    fix_in("compiler_unreadable", before["error"][1])
    assert after["error"] is None, after


def _unwritable_cache_case(ident, cache, rebuild=False):
    """A load whose cache cannot be written is built uncached, with a CacheWarning naming the
    fix; after `set_cache_dir` of another directory (the session's, which holds the module) the
    load is a cache hit and warns of nothing."""
    code = CALL + (
        "import jaxcc, os\n"
        f"jaxcc.set_cache_dir({str(cache)!r})\n"
        f"before = call(lambda: e.works_twice(e.load_twice(force_rebuild={rebuild})))\n"
        "jaxcc.set_cache_dir(os.environ['JAXCC_CACHE_DIR'])  # the fix: a different cache dir\n"
        "after = call(lambda: e.works_twice(e.load_twice()))\n"
        "print(json.dumps([before, after]))\n"
    )
    before, after = child(code, prefix=DROP_DAC)
    assert before["error"] is None, before  # built all the same, in a temporary directory
    cache_warnings = [m for c, m in before["warnings"] if c == "CacheWarning"]
    assert cache_warnings, before
    fix_in(ident, cache_warnings[0])
    assert after["error"] is None, after
    assert not [m for c, m in after["warnings"] if c == "CacheWarning"], after


@case("lock_permission")
def _(twice, tmp_path, file_modes):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o500)  # the lock folder cannot be made in it
    _unwritable_cache_case("lock_permission", cache)


@case("cache_unusable")
def _(twice, tmp_path, file_modes):
    # A copy of the module's cache entry, in a cache whose own folders are writable and whose
    # entry folder is not: a rebuild locks and compiles, then cannot publish.
    session = pathlib.Path(os.environ["JAXCC_CACHE_DIR"])
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    for entry in session.glob("errfix_twice-*"):
        shutil.copytree(entry, cache / entry.name)
        (cache / entry.name).chmod(0o500)
    _unwritable_cache_case("cache_unusable", cache, rebuild=True)


# -- another user's cache directory


@pytest.fixture
def others_cache(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to give a directory to another user")
    cache = tmp_path / "nobodys"
    cache.mkdir(mode=0o700)
    try:
        os.chown(cache, 65534, 65534)  # nobody's
    except PermissionError as e:
        pytest.skip(f"cannot give a directory to another user here: {e}")
    return cache


@case("cache_dir_not_own")
def _(shared, tmp_path, others_cache):
    previous = jaxcc.get_cache_dir()
    jaxcc.set_cache_dir(others_cache)
    try:
        expect("cache_dir_not_own", load)
    finally:
        jaxcc.set_cache_dir(previous)  # the fix: a directory of your own
    works(load())


@case("cache_dir_not_own_tools")
def _(shared, tmp_path, others_cache):
    previous = jaxcc.get_cache_dir()
    jaxcc.set_cache_dir(others_cache)
    try:
        cache = doctor_row(doctor.report(doctor._cache()), "cache")
    finally:
        jaxcc.set_cache_dir(previous)  # the fix: a directory of your own
    assert cache.startswith("FAIL"), cache
    fix_in("cache_dir_not_own_tools", cache)
    assert doctor_row(doctor.report(doctor._cache()), "cache").startswith("PASS")


# -- a full disk


@case("compile_disk_full")
def _(tmp_path, full_disk, monkeypatch):
    # The build directory has room; the compiler's temporary files go to $TMPDIR, which has none.
    # A small source of its own, so that its unit compiles (the runtime's objects are cached).
    monkeypatch.setenv("TMPDIR", str(full_disk / "tmp"))
    expect("compile_disk_full", load_twice, name="errfix_disk", build_directory=str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the fix: $TMPDIR at a disk with room
    works_twice(load_twice(name="errfix_disk", build_directory=str(tmp_path)))


@case("lock_disk_full")
def _(twice, full_disk, monkeypatch):
    # Lock files (JAXCC_CACHE_LOCK=lockfile) on a full cache disk, met by clear_cache (a load
    # builds in $TMPDIR instead and says so in its own words).
    (full_disk / "filler").unlink()
    cache = full_disk / "cache"
    for entry in pathlib.Path(os.environ["JAXCC_CACHE_DIR"]).glob("errfix_twice-*"):
        shutil.copytree(entry, cache / entry.name)
    fill(full_disk)
    monkeypatch.setenv("JAXCC_CACHE_LOCK", "lockfile")
    previous = jaxcc.get_cache_dir()
    jaxcc.set_cache_dir(cache)
    try:
        expect("lock_disk_full", jaxcc.clear_cache, "errfix_twice")
        (full_disk / "filler").unlink()  # the fix: free space there
        assert jaxcc.clear_cache("errfix_twice") == 1
    finally:
        jaxcc.set_cache_dir(previous)


# -- a missing package


@case("numba_missing")
def _():
    def double(x, y):
        for i in range(x.size):
            y[i] = 2 * x[i]

    with missing("numba"):  # `double` cannot be made an njit function here
        expect("numba_missing", jaxcc.numba_kernel, double, OUT)
    numba = pytest.importorskip("numba")  # the fix: pip install numba (the hook gone)
    np.testing.assert_allclose(jaxcc.numba_kernel(numba.njit(double), OUT)(X), X * 2)


@case("plot_matplotlib")
def _(shared, tmp_path):
    SHARED_MODULE[:] = [shared]
    prim = _primitive("errfix_env_plot")
    prim.def_benchmark_data(lambda *, platform: [jaxcc.BenchmarkConfig("four", args=(X,))])
    prim.def_call(lambda x: prim(x, outs=OUT, factor=2.0))
    result = prim.benchmark(platform="cpu", n_warmup=1, n_runs=2)
    with missing("matplotlib"):
        expect("plot_matplotlib", result.plot, str(tmp_path / "a.png"))
    pytest.importorskip("matplotlib")  # the fix: pip install matplotlib (the hook gone)
    result.plot(str(tmp_path / "b.png"))
    assert (tmp_path / "b.png").stat().st_size > 0


SERIALIZATION = "jax._src.export.serialization"  # imports flatbuffers, re-imported without it


@case("deserialize_flatbuffers")
def _(shared):
    pytest.importorskip("flatbuffers")  # to write the blob, and for the fix
    blob = jaxcc.export(jax.jit(lambda x: shared.scale(x, factor=2.0)), X).serialize()
    with missing("flatbuffers", importers=[SERIALIZATION]):
        error = expect("deserialize_flatbuffers", jaxcc.deserialize, blob)
    assert "Please install 'flatbuffers'" in str(error), error  # JAX's own import failed
    restored = jaxcc.deserialize(blob)  # the fix: pip install flatbuffers (the hook gone)
    np.testing.assert_allclose(restored.call(X), X * 2)


@case("check_flatbuffers")
def _(shared):
    pytest.importorskip("flatbuffers")  # for the fix
    with missing("flatbuffers", importers=[SERIALIZATION]):
        row = _row(jaxcc.check_kernel(shared.scale, X, factor=2.0, checks=["export"]), "export")
    assert row.status == "skipped", row
    fix_in("check_flatbuffers", row.detail)
    row = _row(jaxcc.check_kernel(shared.scale, X, factor=2.0, checks=["export"]), "export")
    assert row.status == "passed", row  # the fix: pip install flatbuffers (the hook gone)


NO_JAX = r"""
import sys
class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("jax", "jaxlib"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NotInstalled())
"""


@case("doctor_no_jax")
def _():
    code = NO_JAX + (
        "import json\nfrom jaxcc.cli import doctor\n"
        "print(json.dumps(doctor.report(doctor.run_checks())))\n"
    )
    row = doctor_row(child(code), "jax")
    assert row.startswith("FAIL"), row
    fix_in("doctor_no_jax", row)
    assert doctor_row(doctor_lines(), "jax").startswith("PASS")  # the fix: JAX installed


@case("jax_too_old")
def _():
    code = (
        "import importlib, json, warnings\n"
        "import jax\n"
        "installed, jax.__version__ = jax.__version__, '0.4.30'  # an older JAX\n"
        "with warnings.catch_warnings(record=True) as old:\n"
        "    warnings.simplefilter('always')\n"
        "    import jaxcc\n"
        "jax.__version__ = installed  # the fix: pip install -U 'jax>=LOWEST', this machine's JAX\n"
        "with warnings.catch_warnings(record=True) as new:\n"
        "    warnings.simplefilter('always')\n"
        "    importlib.reload(jaxcc._jax_compat)  # what `import jaxcc` runs first\n"
        "seen = [[[w.category.__name__, str(w.message)] for w in ws] for ws in (old, new)]\n"
        "print(json.dumps(seen))\n"
    )
    old, new = child(code)
    assert [c for c, _ in old] == ["JaxVersionWarning"], old
    fix_in("jax_too_old", old[0][1])
    assert jaxcc._jax_compat.version_tuple(jax.__version__) >= jaxcc._jax_compat.MIN_JAX
    assert new == [], new


# -- no ninja


@pytest.fixture
def no_ninja(tmp_path):
    """An interpreter (a link in an empty folder) and a PATH without ninja."""
    bin_dir, path_dir = tmp_path / "bin", tmp_path / "path"
    bin_dir.mkdir()
    path_dir.mkdir()
    (bin_dir / "python3").symlink_to(os.path.realpath(sys.executable))
    for entry in os.scandir("/usr/bin"):
        if entry.name != "ninja":
            (path_dir / entry.name).symlink_to(entry.path)
    env = {"PATH": str(path_dir), "JAXCC_NINJA": ""}
    if sys.prefix != sys.base_prefix:
        # In a venv (CI's 3.12 leg) the link runs the base interpreter, which has no jaxcc: the
        # venv's packages come through PYTHONPATH, as the base's own do from its prefix.
        env["PYTHONPATH"] = os.pathsep.join(site.getsitepackages())
    return bin_dir, env


@case("ninja_missing")
def _(twice, no_ninja):
    bin_dir, env = no_ninja
    ninja = shutil.which("ninja")
    code = CALL + (
        "import os\n"
        "before = call(e.load_twice, force_rebuild=True)\n"
        f"os.environ['JAXCC_NINJA'] = {ninja!r}  # the fix: JAXCC_NINJA set to its path\n"
        "after = call(lambda: e.works_twice(e.load_twice(force_rebuild=True)))\n"
        "print(json.dumps([before, after]))\n"
    )
    before, after = child(code, executable=str(bin_dir / "python3"), env=env)
    assert before["error"][0] == "ToolchainError", before
    fix_in("ninja_missing", before["error"][1])
    assert after["error"] is None, after


@case("doctor_ninja")
def _(no_ninja):
    bin_dir, env = no_ninja
    code = (
        "import json, os\nfrom jaxcc.cli import doctor\n"
        "before = doctor.report(doctor.run_checks())\n"
        "# The fix: pip install ninja, which puts `ninja` beside the interpreter.\n"
        f"os.symlink({os.path.realpath(shutil.which('ninja'))!r}, {str(bin_dir / 'ninja')!r})\n"
        "print(json.dumps([before, doctor.report(doctor.run_checks())]))\n"
    )
    before, after = child(code, executable=str(bin_dir / "python3"), env=env)
    row = doctor_row(before, "ninja")
    assert row.startswith("FAIL"), row
    assert "Tried, in order" not in row, row  # a head without its list (the list is not shown)
    fix_in("doctor_ninja", row)
    assert doctor_row(after, "ninja").startswith("PASS"), after


# -- another jaxlib


def ffi_dir_without_version(tmp_path) -> str:
    """A copy of jaxlib's XLA FFI header with its version macros taken out."""
    real = pathlib.Path(jax.ffi.include_dir()) / "xla" / "ffi" / "api" / "c_api.h"
    header = tmp_path / "ffi" / "xla" / "ffi" / "api" / "c_api.h"
    header.parent.mkdir(parents=True)
    lines = real.read_text().splitlines()
    header.write_text("\n".join(x for x in lines if "XLA_FFI_API_M" not in x or "#define" not in x))
    return str(tmp_path / "ffi")


@case("bundle_ffi_header")
def _(shared, tmp_path, bundle_source, monkeypatch):
    out = copied_bundle(bundle_source, tmp_path / "b")
    monkeypatch.setattr(jax.ffi, "include_dir", lambda: str(tmp_path / "empty"))
    expect("bundle_ffi_header", jaxcc.load_library, str(out))
    monkeypatch.undo()  # the fix: jaxlib's wheel with its header (jax.ffi.include_dir())
    works_bundle(out)


@case("bundle_ffi_unknown")
def _(shared, tmp_path, bundle_source, monkeypatch):
    out = copied_bundle(bundle_source, tmp_path / "b")
    unknown = ffi_dir_without_version(tmp_path)
    monkeypatch.setattr(jax.ffi, "include_dir", lambda: unknown)
    expect("bundle_ffi_unknown", jaxcc.load_library, str(out))
    monkeypatch.undo()  # the fix: a jaxlib jaxcc supports (this one)
    works_bundle(out)


@case("bundle_ffi_newer")
def _(shared, tmp_path, bundle_source):
    def newer(data):
        data["xla_ffi_api"]["minor"] += 1

    out = copied_bundle_edited(bundle_source, tmp_path / "b", newer)
    expect("bundle_ffi_newer", jaxcc.load_library, str(out))
    fresh_bundle(bundle_source, out)  # the fix: rebuilt with `jaxcc build` against this jaxlib
    works_bundle(out)


@case("bundle_ffi_older")
def _(shared, tmp_path, bundle_source):
    def older(data):
        data["xla_ffi_api"]["major"] -= 1

    out = copied_bundle_edited(bundle_source, tmp_path / "b", older)
    expect("bundle_ffi_older", jaxcc.load_library, str(out))
    fresh_bundle(bundle_source, out)  # the fix: rebuilt with `jaxcc build` against this jaxlib
    works_bundle(out)


@case("doctor_jaxlib")
def _(tmp_path, monkeypatch):
    monkeypatch.setattr(jax.ffi, "include_dir", lambda: str(tmp_path / "empty"))
    row = doctor_row(doctor.report(doctor._headers()), "XLA FFI headers")
    assert row.startswith("FAIL"), row
    fix_in("doctor_jaxlib", row)
    monkeypatch.undo()  # the fix: jaxlib reinstalled, its header back
    assert doctor_row(doctor.report(doctor._headers()), "XLA FFI API").startswith("PASS")


@case("doctor_jaxcc")
def _(tmp_path):
    # A jaxcc install that lost its kernel headers: a copy of this one without jaxcc/jaxcc.h,
    # first on PYTHONPATH.
    installed = pathlib.Path(jaxcc.__file__).parent
    if not (installed / "include" / "jaxcc" / "jaxcc.h").is_file():
        pytest.skip("jaxcc's headers are not inside its package here (not a pip install)")
    broken = tmp_path / "site" / "jaxcc"
    shutil.copytree(installed, broken, ignore=shutil.ignore_patterns("__pycache__"))
    (broken / "include" / "jaxcc" / "jaxcc.h").unlink()
    code = (
        "import json, jaxcc\nfrom jaxcc.cli import doctor\n"
        "print(json.dumps([jaxcc.__file__, doctor.report(doctor._headers())]))\n"
    )
    where, report = child(code, env={"PYTHONPATH": str(tmp_path / "site")})
    assert where.startswith(str(broken)), where
    row = doctor_row(report, "kernel headers")
    assert row.startswith("FAIL"), row
    fix_in("doctor_jaxcc", row)
    # The fix: jaxcc reinstalled, as this process imports it.
    assert doctor_row(doctor.report(doctor._headers()), "kernel headers").startswith("PASS")


# -- a library a bundle links, missing here

DEPENDENT = r"""
#include "jaxcc/jaxcc.h"
extern "C" float errfix_dep_factor();
// @jaxcc scaled_by_dep
void scaled_by_dep(const jaxcc::Tensor& x, jaxcc::Tensor y) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = errfix_dep_factor() * x.data_ptr<float>()[i];
}
"""


@case("bundle_missing_library")
def _(tmp_path):
    # A bundle linking a library of the user's (its RUNPATH names the library's folder), on a
    # machine where that library is not installed.
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    library = lib_dir / "liberrfixdep.so"
    (tmp_path / "dep.cc").write_text('extern "C" float errfix_dep_factor() { return 2.0f; }\n')
    subprocess.run(
        [shutil.which("g++"), "-shared", "-fPIC", "-o", str(library), str(tmp_path / "dep.cc")],
        check=True,
    )
    source = tmp_path / "errfix_dep.cc"
    source.write_text(DEPENDENT)
    ldflags = f"-L{lib_dir} -Wl,-rpath,{lib_dir} -lerrfixdep"
    status, err = cli("build", str(source), "--ldflags", ldflags, "--out", str(tmp_path / "b"))
    assert status == 0, err
    library.rename(tmp_path / "elsewhere.so")
    # A fresh process: this one has the library mapped since the build, and the loader would
    # answer its name with it.
    bundle = str(tmp_path / "b")
    code = CALL + (
        "import jaxcc, os, numpy as np\n"
        f"before = call(jaxcc.load_library, {bundle!r})\n"
        f"os.rename({str(tmp_path / 'elsewhere.so')!r}, {str(library)!r})  # the fix: install it\n"
        f"twice = lambda: np.testing.assert_allclose(jaxcc.load_library({bundle!r})"
        ".scaled_by_dep(e.X), e.X * 2)\n"
        "print(json.dumps([before, call(twice)]))\n"
    )
    before, after = child(code)
    assert before["error"][0] == "BundleError", before
    fix_in("bundle_missing_library", before["error"][1])
    assert "Install liberrfixdep.so" in before["error"][1], before
    assert after["error"] is None, after


@case("sanitizer_runtimes")
def _(twice):
    clang = shutil.which("clang++")
    if clang is None:
        pytest.skip("needs clang++ (scripts/setup.sh installs it)")
    from conftest import asan_preload

    code = CALL + (
        "import numpy as np\n"
        "load = lambda: e.works_twice(e.load_twice(name='errfix_asan', debug='asan'))\n"
        "print(json.dumps(call(load)))\n"
    )
    env = {"CXX": clang, "ASAN_OPTIONS": "detect_leaks=0"}
    # Kernels built by Clang, in a process that preloaded GCC's runtime.
    before = child(code, env={**env, "LD_PRELOAD": asan_preload()})
    assert before["error"][0] == "LoadError", before
    fix_in("sanitizer_runtimes", before["error"][1])
    # The fix: preload the runtime of $CXX, Clang's (the message's command).
    runtime = f"libclang_rt.asan-{os.uname().machine}.so"
    after = child(code, env={**env, "LD_PRELOAD": asan_preload(clang, runtime)})
    assert after["error"] is None, after


# -- no GPU


@case("gpu_none_to_build")
def _():
    cuda = pytest.importorskip("numba.cuda")
    if shutil.which("nvcc") is None:
        pytest.skip("needs nvcc to build the launcher")
    if jax_gpu_archs():
        pytest.skip("JAX sees a GPU here")

    def double(x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = 2 * x[i]

    def call(**options):
        return jaxcc.numba_cuda_kernel(double, OUT, grid=1, block=4, **options)(X)

    expect("gpu_none_to_build", call)
    # The fix: compute_capability= builds; only running the kernel needs the GPU that is not here.
    with pytest.raises(jaxcc.errors.DeviceError, match="the kernel is built"):
        call(compute_capability="8.0")


# -- a broken compiler on PATH


@case("doctor_other_compiler")
def _(tmp_path, monkeypatch):
    broken = tmp_path / "bin" / "g++"
    broken.parent.mkdir()
    broken.write_text("#!/bin/sh\necho 'g++: broken' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv("CXX", os.path.realpath(shutil.which("g++")))  # builds use this one
    monkeypatch.setenv("PATH", f"{broken.parent}{os.pathsep}{os.environ['PATH']}")
    row = doctor_row(doctor.report(doctor._tools()), "g++")
    assert row.startswith("WARN"), row
    fix_in("doctor_other_compiler", row)
    broken.unlink()  # the fix: remove it
    assert "WARN  g++" not in doctor.report(doctor._tools())


@pytest.mark.parametrize("ident", sorted(CASES))
def test_the_fix_works_as_written(ident, shared, request, tmp_path, monkeypatch):
    # `shared` (module-scoped, most cases' fixed call) in the signature keeps the module's
    # tests on one xdist worker, so that it and the bundle are built once.
    fn = CASES[ident]
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    fixtures = {"tmp_path": tmp_path, "monkeypatch": monkeypatch}
    kwargs = {n: fixtures[n] if n in fixtures else request.getfixturevalue(n) for n in names}
    fn(**kwargs)
