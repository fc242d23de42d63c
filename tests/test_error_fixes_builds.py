"""The rows of docs/errors.md whose trigger needs a build of its own, a debug build or a process of
its own (issue 52 item 3), tested as tests/test_error_fixes.py tests the others: the trigger as a
user meets it, the error class and the fix in its text, then the fix applied as the message words
it and the call working. Kept apart so that each file stays short; test_error_fixes.py's table
check counts the cases of both.

Speed: the cases share three builds. SIGNATURE holds the fixed form of every signature case, so
each fix is a cache hit on `signature_module`; GUARDED holds each check/guard kernel twice, as
written wrong (`*_bad`) and as fixed, so one release build and its debug twin serve all of them."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import jax
import numpy as np
import pytest
from test_error_fixes import FUNCTIONS, ROOT, ROWS, SOURCE, X, expect, load, works
from test_error_fixes import shared as shared  # noqa: F401  (a fixture: the shared module)

import jaxcc

CASES = {}


def case(ident):
    def register(fn):
        CASES[ident] = fn
        return fn

    return register


# -- the signature: macros, flags and headers jaxcc reads, one build for every fix

OSTREAM = "#include <ostream>\n"
SIGNATURE = (
    OSTREAM
    + r"""#include "jaxcc/jaxcc.h"

#ifndef ERRFIX_IN
#define ERRFIX_IN const
#endif
#define ERRFIX_STAMP(S) \
  void twice##S(ERRFIX_IN jaxcc::Tensor x, jaxcc::Tensor y) { \
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = 2 * x.data_ptr<float>()[i]; }
// @jaxcc twice_a
ERRFIX_STAMP(_a)

// @jaxcc pick
#ifdef ERRFIX_CONST_X
void pick(const jaxcc::Tensor x, jaxcc::Tensor y) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = 3 * x.data_ptr<float>()[i];
}
#else
void pick(jaxcc::Tensor x, jaxcc::Tensor y) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = 3 * x.data_ptr<float>()[i];
}
#endif

#ifndef ERRFIX_REAL
#define ERRFIX_REAL float
#endif
#define ERRFIX_FILL(S) \
  void fill##S(const jaxcc::Tensor& x, jaxcc::Tensor y, ERRFIX_REAL value) { \
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[i] + value; }
// @jaxcc fill_a
ERRFIX_FILL(_a)

// @jaxcc checked
void checked(const jaxcc::Tensor& x, jaxcc::Tensor y) {
  JAXCC_CHECK(x.numel() < 100) << "pair " << Pair{1, 2};
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[i];
}

// @jaxcc shift arg ret attr.by:float32
ERRFIX_DEFINE_SHIFT

// @jaxcc staged_bad
void staged_bad(const jaxcc::Tensor& x, jaxcc::Tensor y, jaxcc::ScratchAllocator& alloc) {
  float* tmp = static_cast<float*>(alloc.allocate(static_cast<size_t>(x.numel()) << 40));
  for (int64_t i = 0; i < x.numel(); ++i) tmp[i] = x.data_ptr<float>()[i];
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = tmp[i];
}
// @jaxcc staged
void staged(const jaxcc::Tensor& x, jaxcc::Tensor y, jaxcc::ScratchAllocator& alloc) {
  float* tmp = static_cast<float*>(alloc.allocate(x.numel() * sizeof(float)));
  for (int64_t i = 0; i < x.numel(); ++i) tmp[i] = x.data_ptr<float>()[i];
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = tmp[i];
}
"""
)
# The header the load forces in with -include: jaxcc reads the sources, not it, so its macros
# and Pair's operator<< (on a stream only declared) are what the compiler alone sees.
HEADER = r"""#define ERRFIX_REAL int
#define ERRFIX_DEFINE_SHIFT \
  void shift(const jaxcc::Tensor& x, jaxcc::Tensor y, float by) { \
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[i] + by; }
#include <iosfwd>
struct Pair { int a, b; };
template <class C, class T>
std::basic_ostream<C, T>& operator<<(std::basic_ostream<C, T>& out, const Pair& p) {
  return out << p.a << ',' << p.b;
}
"""
CONST_FLAG, MACRO_FLAG, REAL_FLAG = "-DERRFIX_CONST_X", "-DERRFIX_IN=const", "-DERRFIX_REAL=int"


@pytest.fixture(scope="module")
def header(tmp_path_factory):
    path = tmp_path_factory.mktemp("errfix_header") / "errfix_forced.h"
    path.write_text(HEADER)
    return path


def signature_flags(header, without=None) -> list[str]:
    flags = ["-include", str(header), REAL_FLAG, CONST_FLAG, MACRO_FLAG]
    return [f for f in flags if f != without]


def load_signature(header, source=SIGNATURE, without=None):
    flags = signature_flags(header, without)
    return jaxcc.load_cpp_inline("errfix_signature", source, extra_cflags=flags)


@pytest.fixture(scope="module")
def signature_module(header):
    return load_signature(header)


def _runs(mod, function="twice_a", factor=2.0) -> None:
    np.testing.assert_allclose(mod[function](X), X * factor)


@case("sig_const_macro")
def _(signature_module, header):
    expect("sig_const_macro", load_signature, header, without=MACRO_FLAG)
    _runs(load_signature(header))  # -DERRFIX_IN=... passed in extra_cflags, as the example


@case("sig_const_condition")
def _(signature_module, header):
    expect("sig_const_condition", load_signature, header, without=CONST_FLAG)
    _runs(load_signature(header), "pick", 3.0)  # the condition's macro passed


@case("sig_proof")
def _(signature_module, header):
    expect("sig_proof", load_signature, header, without=REAL_FLAG)
    mod = load_signature(header)  # the flag the header stands for, passed in extra_cflags
    assert mod.specs["fill_a"].params[2].attr_type == "int32"
    np.testing.assert_allclose(mod.fill_a(X, value=3), X + 3)


@case("check_text_ostream")
def _(signature_module, header):
    expect("check_text_ostream", load_signature, header, SIGNATURE.replace(OSTREAM, "", 1))
    mod = load_signature(header)  # `#include <ostream>` at the top
    _runs(mod, "checked", 1.0)
    with pytest.raises(jaxcc.errors.KernelError, match="pair 1,2"):  # its operator<< streams it
        mod.checked(np.zeros(200, np.float32))


@case("type_not_found")
def _(signature_module, header):
    untyped = SIGNATURE.replace("attr.by:float32", "attr.by")
    expect("type_not_found", load_signature, header, untyped)
    mod = load_signature(header)  # the type written: attr.by:float32
    np.testing.assert_allclose(mod.shift(X, by=0.5), X + 0.5)


@case("scratch_alloc_too_large")
def _(signature_module, header):
    expect("scratch_alloc_too_large", signature_module.staged_bad, X)
    _runs(signature_module, "staged", 1.0)  # the size computation checked: numel * sizeof


# -- the debug profile and check_kernel's guard rows: each kernel as written wrong, then fixed

GUARDED_KERNELS = r"""
void sums{name}(const jaxcc::Tensor x, jaxcc::Tensor out) {{
  const int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {{
    float s{init};
    for (int64_t c = 0; c < cols; ++c) s += x.data_ptr<float>()[r * cols + c];
    out.data_ptr<float>()[r] = s;
  }}
}}

void reads{name}(const jaxcc::Tensor x, jaxcc::Tensor out) {{
  for (int64_t i = 0; i < out.numel(); ++i) out.data_ptr<float>()[i] = x.data_ptr<float>()[{read}];
}}

void writes{name}(const jaxcc::Tensor x, jaxcc::Tensor out) {{
  for (int64_t i = 0; i {written} out.numel(); ++i) out.data_ptr<float>()[i] = 1.0f;
}}
"""
WRONG = dict(name="_bad", init="", read="i + 1", written="<=")  # no value, past the end twice
FIXED = dict(name="", init=" = 0.0f", read="i", written="<")
GUARDED = (
    '#include "jaxcc/jaxcc.h"\n' + GUARDED_KERNELS.format(**WRONG) + GUARDED_KERNELS.format(**FIXED)
)
GUARDED_FUNCTIONS = [f"{kernel}{version}" for kernel in ("sums", "reads", "writes")
                     for version in ("_bad", "")]  # fmt: skip
MATRIX = np.arange(24, dtype=np.float32).reshape(6, 4) / 8


@pytest.fixture(scope="module")
def guarded():
    """The release build; check_kernel builds its debug twin once, for all the rows."""
    return jaxcc.load_cpp_inline("errfix_guarded", GUARDED, GUARDED_FUNCTIONS)


@pytest.fixture(scope="module")
def guarded_debug():
    return jaxcc.load_cpp_inline("errfix_guarded", GUARDED, GUARDED_FUNCTIONS, debug=True)


def _failed_row(report, name: str, ident: str):
    row = report[name]
    assert row.status == "failed", str(report)
    assert ROWS[ident].pattern().search(row.detail), row.detail


@case("check_uninitialised")
def _(guarded):
    outs = jax.ShapeDtypeStruct((6,), np.float32)
    report = jaxcc.check_kernel(
        guarded.sums_bad, MATRIX, outs=outs, checks=["bounds", "determinism"]
    )
    _failed_row(report, "determinism", "check_uninitialised")
    report = jaxcc.check_kernel(guarded.sums, MATRIX, outs=outs, checks=["bounds", "determinism"])
    assert report.ok, str(report)  # every local given a value: float s = 0.0f


@case("check_bounds_reads")
def _(guarded):
    report = jaxcc.check_kernel(guarded.reads_bad, X, checks=["bounds"])
    _failed_row(report, "bounds", "check_bounds_reads")
    assert "reads past the end of input `x`" in report["bounds"].detail
    report = jaxcc.check_kernel(guarded.reads, X, checks=["bounds"])
    assert report.ok, str(report)  # the index arithmetic that reads it checked: x[i]


@case("guard_write")
def _(guarded_debug):
    expect("guard_write", lambda: np.asarray(guarded_debug.writes_bad(X)))
    np.testing.assert_array_equal(guarded_debug.writes(X), np.ones(4))  # i < out.numel()


@case("debug_fill_env")
def _(guarded_debug, monkeypatch):
    monkeypatch.setenv("JAXCC_DEBUG_INPUT_FILL", "lots")
    expect("debug_fill_env", lambda: np.asarray(guarded_debug.reads(X)))
    monkeypatch.delenv("JAXCC_DEBUG_INPUT_FILL")  # unset it
    np.testing.assert_array_equal(guarded_debug.reads(X), X)


# -- the toolchain


@case("cxx_not_a_compiler")
def _(monkeypatch):
    monkeypatch.setenv("CXX", "notacompiler")  # was ignored: the build fell back to g++
    expect("cxx_not_a_compiler", load, force_rebuild=True)
    monkeypatch.delenv("CXX")  # unset CXX
    works(load())
    monkeypatch.setenv("CXX", "g++")  # or point it at a C++17 compiler (a name on PATH)
    works(load(force_rebuild=True))


# -- processes of their own: one that ends, one that holds the build lock, four devices

TESTS = str(ROOT / "tests")


def run_child(code: str, timeout=120, **env) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter that imports this directory's modules."""
    child = f"import sys; sys.path.insert(0, {TESTS!r})\n" + code
    environment = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, env=environment,
        timeout=timeout,
    )  # fmt: skip


OMP = r"""
#include "jaxcc/jaxcc.h"
void add_one(const jaxcc::Tensor x, jaxcc::Tensor out) {
  #pragma omp parallel for num_threads(2)
  for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1;
}
void add_one_fixed(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  #pragma omp parallel for num_threads(2)
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + 1;
}
"""
LOAD_OMP = (
    "jaxcc.load_cpp_inline('errfix_omp', OMP, ['add_one', 'add_one_fixed'], "
    "extra_cflags=['-fopenmp'])"
)


@case("process_end")
def _():
    mod = eval(LOAD_OMP)  # built here: the child loads it from the cache
    ints = np.arange(8, dtype=np.int32)  # data_ptr<float>() of int32 throws in the region
    done = run_child(
        f"import jaxcc, numpy as np\nOMP = {OMP!r}\nmod = {LOAD_OMP}\n"
        "mod.add_one(np.arange(8, dtype=np.int32)).block_until_ready()\nprint('survived')\n"
    )
    assert done.returncode != 0 and "survived" not in done.stdout, done.stdout
    report = done.stderr
    assert "jaxcc kernel 'add_one' of module 'errfix_omp'" in report, report[-3000:]
    assert ROWS["process_end"].pattern().search(report), report[-3000:]
    # data_ptr taken before `#pragma omp parallel`: the same mistake fails only the call
    with pytest.raises(jaxcc.errors.KernelError, match="parameter 'x' is int32"):
        np.asarray(mod.add_one_fixed(ints))
    np.testing.assert_allclose(mod.add_one_fixed(X), X + 1)


LOCK_FUNCTIONS = {"scale": FUNCTIONS["scale"]}


@pytest.fixture(scope="module", autouse=True)
def lock_contest(tmp_path_factory):
    """lock_held's trigger, started with the module since it takes over a minute (a load waits
    JAXCC_BUILD_TIMEOUT + 60 s for the build lock, then builds privately and warns): a child
    building behind a compiler that stalls its first kernel unit while `hold` exists, and a
    child waiting for that lock with JAXCC_BUILD_TIMEOUT=20, which checks the warning. The
    case, run last, collects them."""
    work = tmp_path_factory.mktemp("errfix_lock")
    hold, started = work / "hold", work / "started"
    wrapper = work / "slow-g++"
    wrapper.write_text(
        f'#!/bin/sh\ncase "$*" in *kernel_0.cc*) if mkdir "{work}/claimed" 2>/dev/null; then\n'
        f'  touch "{started}"; for i in $(seq 1500); do [ -e "{hold}" ] || break; sleep 0.1; done\n'
        'fi;; esac\nexec g++ "$@"\n'
    )
    wrapper.chmod(0o755)
    hold.touch()
    source = f"// {work.name}\n" + SOURCE  # a module no earlier run has built
    load_it = f"t.load({source!r}, functions={LOCK_FUNCTIONS!r}, sharding=None)"
    waiter_code = (
        "import pathlib, time, warnings, jaxcc, test_error_fixes as t\n"
        f"while not pathlib.Path({str(started)!r}).exists(): time.sleep(0.05)\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    mod = {load_it}\n"
        "said = [str(w.message) for w in caught if w.category is jaxcc.errors.CacheWarning]\n"
        "assert said and t.ROWS['lock_held'].pattern().search(said[0]), said\n"
        "t.works(mod)\nprint('warned')\n"
    )

    def child(code, **env):
        return subprocess.Popen(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {TESTS!r})\n" + code],
            env={**os.environ, "CXX": str(wrapper), **env}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    builder = child(f"import test_error_fixes as t\n{load_it}\n")
    waiter = child(waiter_code, JAXCC_BUILD_TIMEOUT="20")
    yield dict(hold=hold, wrapper=wrapper, source=source, builder=builder, waiter=waiter)
    hold.unlink(missing_ok=True)
    for process in (builder, waiter):
        process.kill()
        process.communicate()


@case("lock_held")
def _(lock_contest, monkeypatch):
    out, err = lock_contest["waiter"].communicate(timeout=240)
    assert out.strip().endswith("warned"), err[-3000:]
    lock_contest["hold"].unlink()
    _, err = lock_contest["builder"].communicate(timeout=120)  # wait for it to finish
    assert lock_contest["builder"].returncode == 0, err[-3000:]
    monkeypatch.setenv("CXX", str(lock_contest["wrapper"]))  # the same build as the child's
    mod = load(lock_contest["source"], functions=LOCK_FUNCTIONS, sharding=None)  # try again
    assert mod.cache_hit
    works(mod)


@case("export_auto_sharding")
def _(shared):
    done = run_child(
        """
import jax, jaxcc, numpy as np, test_error_fixes as t
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mod = t.load()
x = np.arange(32, dtype=np.float32).reshape(8, 4)
rowsum = jax.jit(lambda x: mod.rowsum(x, outs=jax.ShapeDtypeStruct((8,), np.float32)))
def on_mesh(kind):
    mesh = jax.make_mesh((4,), ("r",), axis_types=(kind,))
    arg = jax.device_put(x, NamedSharding(mesh, P("r", None)))
    return arg, jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=arg.sharding)
arg, shape = on_mesh(AxisType.Auto)
t.expect("export_auto_sharding", jaxcc.export, rowsum, shape)
arg, shape = on_mesh(AxisType.Explicit)  # shardings on a mesh with Explicit axes
blob = jaxcc.export(rowsum, shape).serialize()
np.testing.assert_allclose(np.asarray(jaxcc.deserialize(blob).call(arg)), x.sum(1))
""",
        XLA_FLAGS="--xla_force_host_platform_device_count=4",
    )
    assert done.returncode == 0, done.stderr[-3000:]


FOREIGN = r"""
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;
static ffi::Error Twice(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = 2 * x.typed_data()[i];
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(ErrfixTwice, Twice,
    ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
"""


@case("export_foreign_target")
def _(tmp_path):
    import ctypes

    (tmp_path / "foreign.cc").write_text(FOREIGN)
    command = ["g++", "-std=c++17", "-O1", "-shared", "-fPIC", "-I", jax.ffi.include_dir()]
    subprocess.run([*command, "foreign.cc", "-o", "libforeign.so"], cwd=tmp_path, check=True)
    handler = ctypes.cdll.LoadLibrary(str(tmp_path / "libforeign.so")).ErrfixTwice
    target = f"errfix_foreign_{tmp_path.name}"  # a handler this test ships itself
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(handler), platform="cpu")
    twice = jax.jit(lambda x: jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x))
    expect("export_foreign_target", jaxcc.export, twice, X)
    checks = [jax.export.DisabledSafetyCheck.custom_call(target)]
    exported = jaxcc.export(twice, X, disabled_checks=checks)
    np.testing.assert_allclose(exported.call(X), X * 2)


# -- the cache: an entry whose library is another module's


@case("library_inconsistent")
def _(shared, guarded, tmp_path):
    import hashlib
    import json
    import shutil

    # The shared module's entry, copied to a cache of its own, its library swapped for the
    # guarded module's (and the manifest's digest with it): the entry names handlers the
    # library lacks.
    entry = pathlib.Path(shared.path).parent
    copy = pathlib.Path(shutil.copytree(entry, tmp_path / "cache" / entry.name))
    manifest = json.loads((copy / "manifest.json").read_text())
    other = pathlib.Path(guarded.path).read_bytes()
    (copy / manifest["library_file"]).write_bytes(other)
    manifest["library_sha256"] = hashlib.sha256(other).hexdigest()
    (copy / "manifest.json").write_text(json.dumps(manifest))
    done = run_child(
        "import jaxcc, test_error_fixes as t\n"
        "t.expect('library_inconsistent', t.load)\n"
        "jaxcc.clear_cache()\n"  # clear it with jaxcc.clear_cache() and load again
        "t.works(t.load())\n",
        JAXCC_CACHE_DIR=str(tmp_path / "cache"),
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _run_case(ident, request):
    fn = CASES[ident]
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    fn(**{n: request.getfixturevalue(n) for n in names})


@pytest.mark.parametrize("ident", sorted(set(CASES) - {"lock_held"}))
def test_the_fix_works_as_written(ident, request):
    _run_case(ident, request)


def test_the_lock_held_fix_works_as_written(request):
    """Last: lock_contest's children have waited out the lock meanwhile."""
    _run_case("lock_held", request)
