"""The rows of docs/errors.md whose trigger needs a build of its own or a debug build (issue 52
item 3), tested as tests/test_error_fixes.py tests the others: the trigger as a user meets it, the
error class and the fix in its text, then the fix applied as the message words it and the call
working. Those that need a process of their own are in test_error_fixes_processes.py; kept apart
so that each file stays short, and test_error_fixes.py's table check counts the cases of all.

Speed: the cases share three builds. SIGNATURE holds the fixed form of every signature case, so
each fix is a cache hit on `signature_module`; GUARDED holds each check/guard kernel twice, as
written wrong (`*_bad`) and as fixed, so one release build and its debug twin serve all of them."""

from __future__ import annotations

import pathlib
import subprocess

import jax
import numpy as np
import pytest
from test_error_fixes import ROOT, ROWS, X, case_registry, expect, load, works

import jaxcc

CASES, case = case_registry()


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


@case("export_foreign_target")
def _(guarded, tmp_path):
    import ctypes

    # A handler the user registers under a target name of their own: the guarded module's
    # `reads` handler (out = x), taken from its library with ctypes, is no jaxcc registration.
    guarded.load_library()
    handler = ctypes.CDLL(guarded.path).jaxcc_ffi_reads
    target = f"errfix_foreign_{tmp_path.name}"
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(handler), platform="cpu")
    copy = jax.jit(lambda x: jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x))
    expect("export_foreign_target", jaxcc.export, copy, X)
    checks = [jax.export.DisabledSafetyCheck.custom_call(target)]  # as the message words it
    exported = jaxcc.export(copy, X, disabled_checks=checks)
    np.testing.assert_allclose(exported.call(X), X)


@case("library_undefined")
def _(tmp_path):
    from test_error_fixes import load_linked

    # The user's library calls a helper of another library it was not linked against.
    (tmp_path / "helper.c").write_text("float errfix_helper(float v) { return 2 * v; }\n")
    (tmp_path / "needs.c").write_text(
        "float errfix_helper(float v);\nfloat errfix_twice(float v) { return errfix_helper(v); }\n"
    )
    for source, library in (("helper.c", "liberrfixhelper.so"), ("needs.c", "liberrfixneeds.so")):
        subprocess.run(["cc", "-shared", "-fPIC", source, "-o", library], cwd=tmp_path, check=True)
    linked = [f"-L{tmp_path}", "-lerrfixneeds", f"-Wl,-rpath,{tmp_path}"]
    expect("library_undefined", load_linked, linked)
    mod = load_linked([*linked, "-Wl,--no-as-needed", "-lerrfixhelper"])  # the library added
    np.testing.assert_allclose(mod.twice_it(X), X * 2)


# -- the command line


@case("build_names_clash")
def _(guarded, guarded_debug, tmp_path, monkeypatch):
    from test_error_fixes import cli

    # A user's module that loads one name twice, as release and as debug build.
    load_twice = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "import jaxcc, test_error_fixes_builds as b\n"
        "release = jaxcc.load_cpp_inline('errfix_guarded', b.GUARDED, b.GUARDED_FUNCTIONS)\n"
        "debug = jaxcc.load_cpp_inline(NAME, b.GUARDED, b.GUARDED_FUNCTIONS, debug=True)\n"
    )
    (tmp_path / "errfix_clash.py").write_text(load_twice.replace("NAME", "'errfix_guarded'"))
    (tmp_path / "errfix_named.py").write_text(load_twice.replace("NAME", "'errfix_guarded_dbg'"))
    monkeypatch.syspath_prepend(str(tmp_path))
    status, err = cli("build", "--module", "errfix_clash", "--out", str(tmp_path / "o"))
    assert status == 1 and ROWS["build_names_clash"].pattern().search(err), (status, err)
    # each load its own name
    status, err = cli("build", "--module", "errfix_named", "--out", str(tmp_path / "o"))
    assert status == 0, err
    shipped = jaxcc.load_library(str(tmp_path / "o" / "errfix_guarded_dbg"))
    np.testing.assert_array_equal(shipped.reads(X), X)


@case("bundle_needed_library")
def _(tmp_path):
    import hashlib
    import json
    import shutil

    from test_error_fixes import SOURCE, cli, works_bundle

    # A module of its own name and folder, bundled once (its objects are cache hits).
    (tmp_path / "src").mkdir()
    source = tmp_path / "src" / "errfix_elf.cc"
    source.write_text(
        SOURCE.replace("// @jaxcc", "").replace(
            "#include <cstring>", "#include <cstring>\n// @jaxcc scale arg ret attr.factor:float32"
        )
    )
    out = tmp_path / "bundle"
    assert cli("build", str(source), "--out", str(out))[0] == 0
    # Its entry's library: the section header offset damaged (dlopen reads none, so the load still
    # works), written as a new file (this process has the old one mapped), the digest matched.
    entry = next(pathlib.Path(jaxcc.get_cache_dir()).glob("errfix_elf-*"))
    manifest = json.loads((entry / "manifest.json").read_text())
    library = entry / manifest["library_file"]
    data = bytearray(library.read_bytes())
    data[0x28:0x30] = (len(data) * 2).to_bytes(8, "little")  # e_shoff past the end
    damaged = tmp_path / "damaged.so"
    damaged.write_bytes(bytes(data))
    shutil.move(damaged, library)
    manifest["library_sha256"] = hashlib.sha256(bytes(data)).hexdigest()
    (entry / "manifest.json").write_text(json.dumps(manifest))
    status, err = cli("build", str(source), "--out", str(out))
    assert status != 0 and ROWS["bundle_needed_library"].pattern().search(err), err
    assert cli("cache", "clear", "errfix_elf")[0] == 0  # clear it with `jaxcc cache clear <module>`
    assert cli("build", str(source), "--out", str(out))[0] == 0  # and build the bundle again
    works_bundle(out)


def _run_case(ident, request):
    fn = CASES[ident]
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    fn(**{n: request.getfixturevalue(n) for n in names})


@pytest.mark.parametrize("ident", sorted(CASES))
def test_the_fix_works_as_written(ident, request):
    _run_case(ident, request)
