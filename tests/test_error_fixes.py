"""Every error message that names a fix names one that works as written (issue 52 item 3).

docs/errors.md is the one table: each row names an error, where its text is, how a user meets it,
the fix in the message's own words and whether it is tested here. For each `tested` row, the case
of that id below triggers the error as a user would, checks the message holds the fix, applies
the fix exactly as the message words it (the keyword, the flag, the variable, the command) and
checks the call then works. A scan of jaxcc's sources for fix wording fails when a string that
tells the user what to do has no row, so a new message cannot leave the table behind.

Speed: the fixed calls are built to equal one shared load (the same name, source and options), so
after the fix the load is a cache hit; only the cases whose fix changes a build compile."""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import os
import pathlib
import re
import sys
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc
import jaxcc.errors

ROOT = pathlib.Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "docs" / "errors.md"

# ---------------------------------------------------------------------------------------------
# The table


@dataclass(frozen=True)
class Row:
    id: str
    error: str
    where: str
    trigger: str
    fix: str
    test: str

    @property
    def pieces(self) -> list[str]:
        return self.fix.split(" … ")

    def pattern(self) -> re.Pattern:
        """The pieces in order, `{}` (Python) and printf's `%s`, `%d`, `%lld` (C++) standing for
        any value."""
        parts = [re.sub(r"\\\{\\\}|%l*[sdu]", ".*?", re.escape(p)) for p in self.pieces]
        return re.compile(".*?".join(parts), re.S)


def _cell_code(cell: str) -> str:
    cell = cell.strip()
    assert cell.startswith("`` ") and cell.endswith(" ``"), f"fix cell not in `` ... ``: {cell}"
    return cell[3:-3]


def catalogue() -> list[Row]:
    rows = []
    for line in CATALOGUE.read_text().splitlines():
        if not line.startswith("| ") or line.startswith("| id ") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert len(cells) == 6, f"docs/errors.md: a row needs 6 cells: {line}"
        ident, error, where, trigger, fix, test = cells
        rows.append(Row(ident, error, where, trigger, _cell_code(fix), test))
    return rows


ROWS = {row.id: row for row in catalogue()}

# ---------------------------------------------------------------------------------------------
# The scan: strings of jaxcc's sources that tell the user what to do

FIX_WORDING = re.compile(
    r"(fix:|\b[Pp]ass (?!through)|\b[Ss]et (?!of\b)|\b[Uu]nset\b|\binstead\b|\b[Aa]dd |"
    r"\b[Rr]un `|\b[Ii]nstall |\b[Rr]einstall|\b[Uu]pgrade|\b[Rr]emove |\b[Rr]ebuild|"
    r"\b[Gg]ive |\b[Dd]eclare |\b[Ww]rap |\b[Ll]oad .{0,80}\b(first|before)\b|"
    r"\bcall .{0,60}\bfirst\b|\b[Pp]oint \S+ at\b|\b[Ee]xport [A-Z]|\b[Mm]ark |"
    r"\b[Ll]eave \S+ unset|\b[Dd]ecode (it|byte)|\b[Rr]egister (one|a kernel)|\b[Cc]lear it\b|"
    r"\b[Dd]rop (one|the|it)\b|\b[Rr]ename (the|one|it)\b|\b[Nn]ame (it|the target)\b|"
    r"\b[Uu]se (a|the same|it|one|the macro)\b|\b[Ww]rite (one|it|them|the type)\b|\bmake it\b|"
    r"\b[Ss]pell\b|\b[Cc]heck (that|its|the index|the size|the permissions)\b|"
    r"\b[Pp]ut (the|its|nvcc)\b|\b[Kk]eep one\b|\b[Rr]aise JAXCC|\b[Mm]ove the\b|"
    r"\b[Ss]plit (the|it)\b|\b[Dd]elete the\b|\b[Rr]un on\b|\b[Uu]se `|\b[Ww]rite `|"
    r"\b[Uu]se letters|\b[Cc]hoose |\b[Cc]ast (it|the)\b)"
)

# Strings the scan finds that are no message to a user, each with the reason.
NOT_MESSAGES = {
    ("python/jaxcc/cli/cache.py", "remove entries (all, or one module's)"): "a command's help",
    ("python/jaxcc/cli/doctor.py", "How to fix:"): "doctor reads this part of a core message",
    ("python/jaxcc/cli/doctor.py", "{} fix: {}"): "the layout of doctor's fix line",
    ("python/jaxcc/check/grads.py", "finite differences give"): "a finding, not advice",
    ("python/jaxcc/check/deploy_rows.py", "give the same result"): "a row's title",
    ("python/jaxcc/check/bounds.py", "; check the index arithmetic"): (
        "cuts guard_write's fix off the guard's finding (the bounds row names the write)"
    ),
    ("python/jaxcc/custom_kernel/bridges/numba_cuda_launcher.py", "#include <cuda_runtime.h>"): (
        "generated C++ (a comment in it)"
    ),
    ("python/jaxcc/custom_kernel/bridges/triton_launcher.py", "#include <cuda_runtime.h>"): (
        "generated C++ (a comment in it)"
    ),
    ("src/bindings/module.cc", "Remove cache entries"): "a binding's docstring",
    ("src/bindings/module.cc", "remove orphans"): "a binding's docstring",
    ("src/bindings/result_types.cc", "a warm load maps it at the first call"): "a docstring",
    ("src/build/compile_diagnostics.cc", "How to fix: "): "the head of compile_missing_include",
    ("src/loader/report_text.cc", "without a jaxcc mark"): "a crash report's finding",
    ("src/pipeline/cache_access.cc", "mark used"): "a step's name",
    ("src/pipeline/load_module.cc", "remove build dir"): "a step's name",
    ("src/pipeline/run_build.cc", "built in a private temporary directory instead"): "a finding",
    ("src/util/fs.cc", "refusing to remove the root directory"): "an internal guard, no advice",
    ("src/bindings/bundle_types.cc", "write it as a bundle directory"): "a binding's docstring",
    ("src/bundle/compat.cc", "which cannot run on this machine's GPU"): "bundle_gpu_arch's finding",
    ("src/bundle/write_bundle.cc", "cannot move the bundle into"): "a failure, no advice",
    ("python/jaxcc/custom_kernel/bridges/numba_cpu_trampoline.py", "#include <unistd.h>"): (
        "generated C++ (its messages are the kernel's)"
    ),
}


def _python_strings(path: pathlib.Path):
    """(line, text) of each string of a Python file but its docstrings; an f-string's values
    are `{}`."""
    tree = ast.parse(path.read_text())
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skipped.add(id(first.value))
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(v) for v in node.values)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            yield node.lineno, text
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in skipped:
                yield node.lineno, node.value


_CPP_TOKEN = re.compile(
    r'//[^\n]*|/\*.*?\*/|R"(?P<d>[^(]*)\(.*?\)(?P=d)"|"(?P<s>(?:\\.|[^"\\\n])*)"'
    r"|'(?:\\.|[^'\\])'|\S",
    re.S,
)


def _cpp_strings(path: pathlib.Path):
    """(line, text) of each run of adjacent string literals (one concatenated literal) of a C++
    file, comments left out."""
    text = path.read_text()
    run, start = [], 0
    for m in _CPP_TOKEN.finditer(text):
        if m.group("s") is not None:
            if not run:
                start = text.count("\n", 0, m.start()) + 1
            run.append(m.group("s"))
        elif m.group(0).startswith(("//", "/*")):
            continue
        elif run:
            yield start, "".join(run)
            run = []
    if run:
        yield start, "".join(run)


def _sources():
    for path in sorted((ROOT / "python" / "jaxcc").rglob("*.py")):
        yield path, _python_strings
    for base in ("src", "include"):
        for path in sorted((ROOT / base).rglob("*")):
            if path.suffix not in (".cc", ".h") or path.stem.endswith("_test"):
                continue
            if {"testdata", "fuzz"} & set(path.parts):
                continue
            yield path, _cpp_strings


@functools.cache
def source_strings() -> dict[str, list[tuple[int, str]]]:
    """path -> (line, text) of each string of jaxcc's sources (scanned once per session)."""
    return {str(path.relative_to(ROOT)): list(strings(path)) for path, strings in _sources()}


def fix_naming_strings():
    """(path, line, text) of each source string in the fix wording."""
    for path, strings in source_strings().items():
        for line, text in strings:
            if FIX_WORDING.search(text):
                yield path, line, text


def test_every_fix_naming_string_has_a_row():
    """The guard: a string in the fix wording is a message with a catalogue row (one of the row's
    pieces is in it) or a listed non-message."""
    pieces = {}
    for row in ROWS.values():
        pieces.setdefault(row.where, []).extend(row.pieces)
    for (where, text), _ in NOT_MESSAGES.items():
        pieces.setdefault(where, []).append(text)
    missing = [
        f"{path}:{line}: {text[:160]!r}"
        for path, line, text in fix_naming_strings()
        if not any(p in text for p in pieces.get(path, []))
    ]
    assert not missing, (
        "messages that name a fix but have no row in docs/errors.md (add one, with a case in "
        "tests/test_error_fixes.py or the reason it cannot have one):\n" + "\n".join(missing)
    )


def test_every_row_is_in_its_file():
    strings = {path: [text for _, text in found] for path, found in source_strings().items()}
    stale = [
        f"{row.id}: {piece!r} not in {row.where}"
        for row in ROWS.values()
        for piece in row.pieces
        if not any(piece in text for text in strings.get(row.where, []))
    ]
    stale += [
        f"NOT_MESSAGES: {text!r} not in {where}"
        for where, text in NOT_MESSAGES
        if not any(text in s for s in strings.get(where, []))
    ]
    assert not stale, "rows whose fix is no longer in their file:\n" + "\n".join(stale)


def test_every_tested_row_has_a_case_and_every_case_a_row():
    import test_error_fixes_builds  # the cases that need builds of their own
    import test_error_fixes_environment  # the cases whose trigger is the machine
    import test_error_fixes_processes  # the cases that need processes of their own

    files = [CASES, test_error_fixes_builds.CASES, test_error_fixes_environment.CASES,
             test_error_fixes_processes.CASES]  # fmt: skip
    cases = set().union(*files)
    assert sum(map(len, files)) == len(cases), "a row with two cases"
    tested = {row.id for row in ROWS.values() if row.test == "tested"}
    assert tested == cases, (
        f"tested rows without a case: {sorted(tested - cases)}; "
        f"cases without a tested row: {sorted(cases - tested)}"
    )
    bad = [
        r.id
        for r in ROWS.values()
        if not re.match(r"tested$|not here: .+|untested(: .+)?$", r.test)
    ]
    assert not bad, f"rows whose test cell is not tested / not here: ... / untested: {bad}"
    assert len(ROWS) == len(catalogue()), "two rows share an id"
    assert "(errors.md)" in (ROOT / "docs" / "reference.md").read_text()


def test_the_scan_finds_messages_in_both_languages(tmp_path):
    """The guard can fail: the scan sees a Python f-string and a C++ literal run split over
    lines, and not comments or docstrings."""
    py = tmp_path / "m.py"
    py.write_text('"""Set nothing."""\nraise ValueError(f"{x}: bad; pass y=1")\n# set it\n')
    assert [t for _, t in _python_strings(py) if FIX_WORDING.search(t)] == ["{}: bad; pass y=1"]
    cc = tmp_path / "m.cc"
    cc.write_text('// pass nothing\nauto e = MakeError(k, "a " + n +\n  "; set "\n  "it");\n')
    assert [t for _, t in _cpp_strings(cc) if FIX_WORDING.search(t)] == ["; set it"]


# ---------------------------------------------------------------------------------------------
# The cases


def case_registry():
    """(cases, case): an empty {row id: function} and the decorator that fills it; one pair per
    error-fix file, whose cases the table check counts together."""
    cases = {}

    def case(ident):
        def register(fn):
            cases[ident] = fn
            return fn

        return register

    return cases, case


CASES, case = case_registry()


def expect(ident: str, call, *args, **kwargs) -> Exception:
    """Calls `call`, which must raise the row's error class with the row's fix in its text."""
    row = ROWS[ident]
    with pytest.raises(Exception) as info:
        call(*args, **kwargs)
    error = info.value
    expected = getattr(jaxcc.errors, row.error, None) if row.error.isidentifier() else None
    if expected is not None:
        assert isinstance(error, expected), f"{ident}: {type(error).__name__}: {error}"
    assert row.pattern().search(str(error)), f"{ident}: the fix is not in the message:\n{error}"
    return error


NAME = "errfix"
SOURCE = r"""
#include "jaxcc/jaxcc.h"
#include <cstring>

void scale(const jaxcc::Tensor& x, jaxcc::Tensor y, float factor) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] * factor;
}

void attrs(const jaxcc::Tensor& x, jaxcc::Tensor y, bool flag, int32_t n, int8_t small,
           int64_t big, uint64_t mask) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
        out[i] = in[i] + (flag ? 1 : 0) + n + small + big + static_cast<float>(mask);
    }
}

void scale_by(const jaxcc::Tensor& x, const jaxcc::Tensor& by, jaxcc::Tensor y) {
    const float* in = x.data_ptr<float>();
    float f = by.data_ptr<float>()[0];
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] * f;
}

void split(const jaxcc::Tensor& x, jaxcc::Tensor a, jaxcc::Tensor b) {
    const float* in = x.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); ++i) a.data_ptr<float>()[i] = in[i];
    for (int64_t i = 0; i < b.numel(); ++i) b.data_ptr<float>()[i] = in[a.numel() + i];
}

void scratchy(const jaxcc::Tensor& x, jaxcc::Tensor y, jaxcc::Scratch scratch) {
    float* tmp = scratch.as<float>();
    std::memcpy(tmp, x.data_ptr<float>(), x.nbytes());
    std::memcpy(y.data_ptr<float>(), tmp, x.nbytes());
}

void typed(const jaxcc::Tensor& x, jaxcc::Tensor y) {
    std::memcpy(y.data_ptr(), x.data_ptr(), x.nbytes());
}

void cplx(const jaxcc::Tensor& x, jaxcc::Tensor y, float re, float im) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] * re - im;
}

void half_attr(const jaxcc::Tensor& x, jaxcc::Tensor y, uint16_t h) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] + (h == 0x3C00 ? 1.0f : 0.0f);
}

void rowsum(const jaxcc::Tensor& x, jaxcc::Tensor y) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t r = 0; r < x.size(0); ++r) {
        float s = 0;
        for (int64_t c = 0; c < x.size(1); ++c) s += in[r * x.size(1) + c];
        out[r] = s;
    }
}
"""
FUNCTIONS = {
    "scale": ["arg", "ret", "attr.factor:float32"],
    "attrs": None,
    "scale_by": None,
    "split": None,
    "scratchy": None,
    "typed": ["arg:float32", "ret:float32"],
    "cplx": None,
    "half_attr": ["arg", "ret", "attr.h:float16"],
    "rowsum": None,
}
SHARDING = {"rowsum": "r c -> r; reduction: c"}
X = np.arange(4, dtype=np.float32)


def load(source=SOURCE, **options):
    """The shared load, or a variant of it: `options` replace the shared ones."""
    options = {"functions": FUNCTIONS, "sharding": SHARDING, **options}
    return jaxcc.load_cpp_inline(NAME, source, **options)


def works(mod) -> None:
    """The shared module's first function runs and gives the right values."""
    np.testing.assert_allclose(mod.scale(X, factor=2.0), X * 2)


@pytest.fixture(scope="module")
def shared():
    return load()


@pytest.fixture
def env(monkeypatch):
    return monkeypatch


# -- load arguments


@case("build_dir_is_file")
def _(shared, tmp_path, env):
    path = tmp_path / "build"
    path.write_text("")
    expect("build_dir_is_file", load, build_directory=str(path))
    works(load(build_directory=str(tmp_path / "a" / "new" / "dir")))


@case("dir_not_dir")
def _(shared, tmp_path, env):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "errfix.cc").write_text(SOURCE)
    load_dir = lambda d: jaxcc.load_cpp_dir(  # noqa: E731
        d, FUNCTIONS, name=NAME + "_dir", sharding=SHARDING
    )
    expect("dir_not_dir", load_dir, str(tmp_path / "src" / "errfix.cc"))
    works(load_dir(str(tmp_path / "src")))


@case("dir_no_match")
def _(shared, tmp_path, env):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "errfix.C").write_text(SOURCE)
    load_dir = lambda **kw: jaxcc.load_cpp_dir(  # noqa: E731
        str(tmp_path / "src"), FUNCTIONS, name=NAME + "_dir", sharding=SHARDING, **kw
    )
    expect("dir_no_match", load_dir)
    works(load_dir(file_patterns=["*.C"]))


@case("not_utf8")
def _(shared, tmp_path, env):
    bad = SOURCE.replace("#include <cstring>", "#include <cstring>\n// \ud800")
    expect("not_utf8", load, bad)
    fixed = bad.encode("utf-8", errors="replace").decode("utf-8")  # errors='replace', as told
    works(load(fixed))


@case("nul_in_flag")
def _(shared, tmp_path, env):
    expect("nul_in_flag", load, extra_cflags=["-DERRFIX\0"])
    works(load(extra_cflags=["-DERRFIX"]))


@case("flag_bytes")
def _(shared, tmp_path, env):
    flag = b"-DERRFIX"
    expect("flag_bytes", load, extra_cflags=[flag])
    works(load(extra_cflags=[flag.decode()]))


@case("source_bytes")
def _(shared, tmp_path, env):
    source = SOURCE.encode("utf-8")
    expect("source_bytes", load, source)
    works(load(source.decode("utf-8")))


@case("build_timeout_hit")
def _(shared, tmp_path, env):
    env.setenv("JAXCC_BUILD_TIMEOUT", "0.05")  # no compile of jaxcc.h fits in 50 ms
    error = expect("build_timeout_hit", load, force_rebuild=True)
    assert "within 0.05 s" in str(error), error
    env.setenv("JAXCC_BUILD_TIMEOUT", "600")  # raised
    works(load(force_rebuild=True))


@case("attr_named_outs")
def _(shared, tmp_path, env):
    clash = SOURCE.replace("float re, float im)", "float outs, float im)")
    expect("attr_named_outs", load, clash)
    mod = load(SOURCE)  # the parameter renamed (back to `re`; 'num_outs' is the message's example)
    np.testing.assert_allclose(mod.cplx(X, re=2.0, im=1.0), X * 2 - 1)


@case("nul_in_cache_dir")
def _(shared, tmp_path, env):
    before = jaxcc.get_cache_dir()
    expect("nul_in_cache_dir", jaxcc.set_cache_dir, str(tmp_path / "ca\0che"))
    try:
        jaxcc.set_cache_dir(str(tmp_path / "cache"))
        assert str(jaxcc.get_cache_dir()) == str(tmp_path / "cache")
    finally:
        jaxcc.set_cache_dir(before)


@case("build_dir_uncreatable")
def _(shared, tmp_path, env):
    (tmp_path / "file").write_text("")
    expect(
        "build_dir_uncreatable",
        load,
        build_directory=str(tmp_path / "file" / "sub"),
        force_rebuild=True,
    )
    works(load())  # build_directory unset: built in the cache


@case("source_unreadable")
def _(shared, tmp_path, env):
    path = tmp_path / "errfix.cc"
    load_file = lambda: jaxcc.load_cpp_file(  # noqa: E731
        str(path), FUNCTIONS, name=NAME + "_file", sharding=SHARDING
    )
    expect("source_unreadable", load_file)
    path.write_text(SOURCE)
    works(load_file())


@case("source_path_nul")
def _(shared, tmp_path, env):
    path = tmp_path / "errfix.cc"
    path.write_text(SOURCE)
    load_file = lambda p: jaxcc.load_cpp_file(  # noqa: E731
        p, FUNCTIONS, name=NAME + "_file", sharding=SHARDING
    )
    expect("source_path_nul", load_file, str(path) + "\0.cc")
    works(load_file(str(path)))


@case("source_nul")
def _(shared, tmp_path, env):
    expect("source_nul", load, SOURCE + "\0")
    works(load(SOURCE))


@case("source_empty")
def _(shared, tmp_path, env):
    expect("source_empty", load, "  \n\t\n")
    works(load(SOURCE))


@case("build_timeout_env")
def _(shared, tmp_path, env):
    env.setenv("JAXCC_BUILD_TIMEOUT", "soon")
    expect("build_timeout_env", load)
    env.delenv("JAXCC_BUILD_TIMEOUT")
    works(load())


@case("lock_mode_env")
def _(shared, tmp_path, env):
    env.setenv("JAXCC_CACHE_LOCK", "sometimes")
    expect("lock_mode_env", load, force_rebuild=True)
    env.delenv("JAXCC_CACHE_LOCK")
    works(load())


@case("response_file_nested")
def _(shared, tmp_path, env):
    flags = tmp_path / "flags"
    flags.write_text(f"-DERRFIX @{flags}\n")
    expect("response_file_nested", load, extra_cflags=[f"@{flags}"])
    works(load(extra_cflags=["-DERRFIX"]))  # the flags directly


@case("sharding_key")
def _(shared, tmp_path, env):
    expect("sharding_key", load, sharding={"rowsun": SHARDING["rowsum"]})
    works(load(sharding={"rowsum": SHARDING["rowsum"]}))  # the key fixed


# -- the arg_spec and the C++ signature


@case("spec_complex_attr")
def _(shared, tmp_path, env):
    expect(
        "spec_complex_attr",
        load,
        functions={**FUNCTIONS, "cplx": ["arg", "ret", "attr.z:complex64"]},
    )
    mod = load(
        functions={**FUNCTIONS, "cplx": ["arg", "ret", "attr.re:float32", "attr.im:float32"]}
    )
    np.testing.assert_allclose(mod.cplx(X, re=2.0, im=1.0), X * 2 - 1)


@case("spec_empty_name")
def _(shared, tmp_path, env):
    expect("spec_empty_name", load, functions={"": None, **FUNCTIONS})
    works(load(functions=FUNCTIONS))


@case("spec_bad_name")
def _(shared, tmp_path, env):
    named = {("ns::scale" if k == "scale" else k): v for k, v in FUNCTIONS.items()}
    expect("spec_bad_name", load, functions=named)
    works(load(functions=FUNCTIONS))


@case("spec_no_ret")
def _(shared, tmp_path, env):
    expect(
        "spec_no_ret", load, functions={**FUNCTIONS, "scale": ["arg", "arg", "attr.factor:float32"]}
    )
    works(load(functions={**FUNCTIONS, "scale": ["arg", "ret", "attr.factor:float32"]}))


@case("rule_folded_factor")
def _(shared, tmp_path, env):
    expect("rule_folded_factor", load, sharding={"rowsum": "r c -> r"})
    mod = load(sharding={"rowsum": "r c -> r" + "; reduction: c"})
    np.testing.assert_allclose(
        mod.rowsum(X.reshape(2, 2), outs=jax.ShapeDtypeStruct((2,), jnp.float32)), [1, 5]
    )


@case("sig_half_attr")
def _(shared, tmp_path, env):
    inferred = {**FUNCTIONS, "half_attr": None}
    expect("sig_half_attr", load, SOURCE.replace("uint16_t h", "_Float16 h"), functions=inferred)
    mod = load(SOURCE, functions={**FUNCTIONS, "half_attr": ["arg", "ret", "attr.h:float16"]})
    np.testing.assert_allclose(mod.half_attr(X, h=1.0), X + 1)  # 1.0 arrives as 0x3C00


@case("sig_half_token")
def _(shared, tmp_path, env):
    expect("sig_half_token", load, SOURCE.replace("uint16_t h", "float h"))
    mod = load(SOURCE)  # the parameter declared `uint16_t`
    np.testing.assert_allclose(mod.half_attr(X, h=1.0), X + 1)


def _signature_case(ident, bad, good="const jaxcc::Tensor& x, jaxcc::Tensor y, float factor"):
    """`scale`'s parameters replaced by `bad` fail; written as the message says, the source is
    the shared one again."""
    shared_params = "const jaxcc::Tensor& x, jaxcc::Tensor y, float factor"
    expect(ident, load, SOURCE.replace(shared_params, bad, 1))
    works(load(SOURCE.replace(shared_params, good, 1)))


@case("sig_pointer_param")
def _(shared, tmp_path, env):
    # the fix: the array as `const jaxcc::Tensor&`, as the message spells it
    _signature_case("sig_pointer_param", "const float* x, jaxcc::Tensor y, float factor")


@case("sig_pointer_array")
def _(shared, tmp_path, env):
    _signature_case("sig_pointer_array", "const float x[], jaxcc::Tensor y, float factor")


@case("sig_auto_param")
def _(shared, tmp_path, env):
    _signature_case("sig_auto_param", "const jaxcc::Tensor& x, jaxcc::Tensor y, auto factor")


@case("sig_token_mismatch")
def _(shared, tmp_path, env):
    error = expect(
        "sig_token_mismatch", load, functions={**FUNCTIONS, "scale": ["arg", "ret", "ret"]}
    )
    assert "(`attr.factor:float32`)" in str(error), (
        error
    )  # the token in parentheses  # the token in parentheses, which the fix gives
    works(load(functions={**FUNCTIONS, "scale": ["arg", "ret", "attr.factor:float32"]}))


@case("const_token_ret")
def _(shared, tmp_path, env):
    expect(
        "const_token_ret",
        load,
        functions={**FUNCTIONS, "scale": ["ret", "ret", "attr.factor:float32"]},
    )
    works(load(functions={**FUNCTIONS, "scale": ["arg", "ret", "attr.factor:float32"]}))  # `arg`


@case("spec_keyword")
def _(shared, tmp_path, env):
    keyword = {**FUNCTIONS, "cplx": ["arg", "ret", "attr.class:float32", "attr.im:float32"]}
    expect("spec_keyword", load, functions=keyword)
    mod = load()  # the attribute named as its parameter, `re`
    np.testing.assert_allclose(mod.cplx(X, re=2.0, im=1.0), X * 2 - 1)


@case("spec_name_long")
def _(shared, tmp_path, env):
    long = {**FUNCTIONS, "cplx": ["arg", "ret", f"attr.{'r' * 1000}:float32", "attr.im:float32"]}
    expect("spec_name_long", load, functions=long)
    mod = load()  # a short name: `re`
    np.testing.assert_allclose(mod.cplx(X, re=2.0, im=1.0), X * 2 - 1)


@case("token_other_name")
def _(shared, tmp_path, env):
    untyped = {**FUNCTIONS, "scale": ["arg", "ret", "attr.f"]}
    expect("token_other_name", load, functions=untyped)
    works(load(functions={**FUNCTIONS, "scale": ["arg", "ret", "attr.factor"]}))  # the same name


@case("char_attr")
def _(shared, tmp_path, env):
    expect("char_attr", load, SOURCE.replace("int8_t small", "wchar_t small"))
    mod = load(SOURCE)  # a fixed-width integer: int8_t
    np.testing.assert_allclose(mod.attrs(X, **_attrs()), X + 5)


@case("attr_same_name")
def _(shared, tmp_path, env):
    expect("attr_same_name", load, SOURCE.replace("float re, float im)", "float re, float re)"))
    mod = load(SOURCE)  # one of them renamed: `im`
    np.testing.assert_allclose(mod.cplx(X, re=2.0, im=1.0), X * 2 - 1)


@case("attr_unnamed")
def _(shared, tmp_path, env):
    expect("attr_unnamed", load, SOURCE.replace("float re, float im)", "float re, float)"))
    mod = load(SOURCE)  # named: `im`
    np.testing.assert_allclose(mod.cplx(X, re=2.0, im=1.0), X * 2 - 1)


@case("handler_declared_dtype")
def _(shared, tmp_path, env):
    call = jax.ffi.ffi_call(shared.typed.target, OUT)  # the raw target, as the README shows
    ints = np.arange(4, dtype=np.int32)
    error = expect("handler_declared_dtype", call, ints)
    assert "(x.astype(jnp.float32))" in str(error), error
    np.testing.assert_allclose(call(ints.astype(jnp.float32)), X)  # cast before the call


@case("dtype_cast")
def _(shared, tmp_path, env):
    x = np.arange(4, dtype=np.int32)
    error = expect("dtype_cast", shared.typed, x, outs=OUT)
    assert "`x.astype(jnp.float32)`" in str(error), error
    np.testing.assert_allclose(shared.typed(x.astype(jnp.float32), outs=OUT), X)  # as written


def _token_case(ident, bad_tokens, good_tokens, function="scale"):
    expect(ident, load, functions={**FUNCTIONS, function: bad_tokens})
    return load(functions={**FUNCTIONS, function: good_tokens})


@case("spec_no_attr_name")
def _(shared, tmp_path, env):
    works(_token_case("spec_no_attr_name", ["arg", "ret", "attr."], ["arg", "ret", "attr.factor"]))


@case("spec_attr_needs_name")
def _(shared, tmp_path, env):
    works(
        _token_case("spec_attr_needs_name", ["arg", "ret", "attr"], ["arg", "ret", "attr.factor"])
    )


@case("spec_not_identifier")
def _(shared, tmp_path, env):
    good = ["arg", "ret", "attr.factor:float32"]
    works(_token_case("spec_not_identifier", ["arg", "ret", "attr.1x:float32"], good))


@case("spec_no_dtype")
def _(shared, tmp_path, env):
    mod = _token_case(
        "spec_no_dtype", ["arg:", "ret:float32"], ["arg:float32", "ret:float32"], "typed"
    )
    np.testing.assert_allclose(mod.typed(X), X)


@case("plain_char")
def _(shared, tmp_path, env):
    expect("plain_char", load, SOURCE.replace("int8_t small", "char small"))
    mod = load(SOURCE)  # `int8_t`, as told
    np.testing.assert_allclose(mod.attrs(X, **_attrs()), X + 5)


@case("overloads")
def _(shared, tmp_path, env):
    other = "\nvoid scale(const jaxcc::Tensor& x, jaxcc::Tensor y, int32_t n) {}\n"
    expect("overloads", load, SOURCE + other)
    mod = load(SOURCE + other.replace("void scale(", "void scale_int("))  # the other renamed
    works(mod)


@case("tune_unused_param")
def _(shared, tmp_path, env):
    with pytest.warns(jaxcc.errors.AutotuneWarning) as caught:
        load(tune={"scale": {"ERRFIX_UNUSED": [1, 2]}})
    assert any(ROWS["tune_unused_param"].pattern().search(str(w.message)) for w in caught)
    works(load())  # the parameter dropped


ANNOTATION = '// @jaxcc scale arg ret attr.factor:float32 sharding="i -> i"'
SCALE_DEF = "void scale(const jaxcc::Tensor& x,"


def _annotated(line=ANNOTATION, extra=""):
    """SOURCE with `scale` annotated by `line` (and `extra` at the end), loaded from its
    annotations alone; the fixed cases give back ANNOTATION, built once."""
    return load(
        SOURCE.replace(SCALE_DEF, line + "\n" + SCALE_DEF, 1) + extra, functions=None, sharding=None
    )


@case("annotation_twice")
def _(shared, tmp_path, env):
    expect("annotation_twice", _annotated, ANNOTATION + ' sharding="i -> i"')
    works(_annotated())  # one kept


@case("annotation_order")
def _(shared, tmp_path, env):
    expect(
        "annotation_order",
        _annotated,
        '// @jaxcc scale sharding="i -> i" arg ret attr.factor:float32',
    )
    works(_annotated())  # the tokens moved before it


@case("annotation_per_function")
def _(shared, tmp_path, env):
    expect(
        "annotation_per_function",
        _annotated,
        ANNOTATION,
        "\n// @BE scale arg ret attr.factor:float32\n",
    )
    works(_annotated())  # one annotation per function


@case("annotation_no_function")
def _(shared, tmp_path, env):
    expect("annotation_no_function", _annotated, "// @jaxcc")
    works(_annotated())  # `// @jaxcc <function> [tokens...]` written


@case("sig_token_count")
def _(shared, tmp_path, env):
    expect("sig_token_count", load, functions={**FUNCTIONS, "scale": ["arg", "ret"]})
    works(load(functions={**FUNCTIONS, "scale": ["arg", "ret", "attr.factor:float32"]}))


@case("sig_param_name")
def _(shared, tmp_path, env):
    inferred = {**FUNCTIONS, "scale": None}
    expect("sig_param_name", load, SOURCE.replace("factor", "facteür"), functions=inferred)
    works(load(SOURCE, functions=inferred))  # the parameter renamed


@case("sig_template")
def _(shared, tmp_path, env):
    template = SOURCE.replace(
        "void scale(const jaxcc::Tensor& x, jaxcc::Tensor y, float factor) {",
        "template <typename T>\nvoid scale(const jaxcc::Tensor& x, jaxcc::Tensor y, T factor) {",
    )
    expect("sig_template", load, template)
    wrapper = template + (
        "\nvoid scale_f(const jaxcc::Tensor& x, jaxcc::Tensor y, float factor) "
        "{ scale<float>(x, y, factor); }\n"
    )
    functions = {("scale_f" if k == "scale" else k): v for k, v in FUNCTIONS.items()}
    mod = load(wrapper, functions=functions)
    np.testing.assert_allclose(mod.scale_f(X, factor=2.0), X * 2)


@case("sig_no_functions")
def _(shared, tmp_path, env):
    expect("sig_no_functions", load, functions=None)
    works(load(functions=FUNCTIONS))  # pass `functions`


# -- the compiler, the linker, the library


@case("compile_missing_lib")
def _(shared, tmp_path, env):
    expect("compile_missing_lib", load, extra_ldflags=["-lerrfixlib"])
    work = tmp_path / "lib"
    work.mkdir()
    (work / "e.c").write_text("int errfix_unused(void) { return 0; }\n")
    import subprocess

    subprocess.run(["cc", "-c", "-fPIC", "e.c", "-o", "e.o"], cwd=work, check=True)
    subprocess.run(["ar", "rcs", "liberrfixlib.a", "e.o"], cwd=work, check=True)
    works(load(extra_ldflags=[f"-L{work}", "-lerrfixlib"]))


@case("compile_missing_header")
def _(shared, tmp_path, env):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "errfix_extra.h").write_text("#define ERRFIX_ONE 1\n")
    source = SOURCE.replace("#include <cstring>", '#include <cstring>\n#include "errfix_extra.h"')
    expect("compile_missing_header", load, source)
    works(load(source, extra_include_paths=[str(tmp_path / "inc")]))


@case("compile_bad_flag")
def _(shared, tmp_path, env):
    expect("compile_bad_flag", load, extra_cflags=["-fno-such-flag-errfix"])
    works(load())  # the flag removed


def _pooled(begin="0", end="x.numel()", grain="1024", include=True) -> str:
    """SOURCE with `scale`'s loop spread by jaxcc::parallel_for (the fixed form is one build)."""
    loop = "for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] * factor;"
    pooled = (
        f"jaxcc::parallel_for({begin}, {end}, {grain}, [&](int64_t b, int64_t e) "
        "{ for (int64_t i = b; i < e; ++i) out[i] = in[i] * factor; });"
    )
    source = SOURCE.replace(loop, pooled, 1)
    if include:
        source = source.replace(
            "#include <cstring>", '#include <cstring>\n#include "jaxcc/parallel.h"'
        )
    return source


@case("compile_missing_include")
def _(shared, tmp_path, env):
    error = expect("compile_missing_include", load, _pooled(include=False))
    header = str(error).split("add `#include ")[1].split("`")[0]  # "jaxcc/parallel.h", as told
    assert header == '"jaxcc/parallel.h"', header
    works(load(_pooled()))


@case("parallel_grain")
def _(shared, tmp_path, env):
    expect("parallel_grain", load(_pooled(grain="0")).scale, X, factor=2.0)
    works(load(_pooled(grain="1024")))  # indices one task takes at least


@case("parallel_negative")
def _(shared, tmp_path, env):
    expect("parallel_negative", load(_pooled(begin="x.numel()", end="0")).scale, X, factor=2.0)
    works(load(_pooled()))  # begin <= end


@case("compile_openmp_call")
def _(shared, tmp_path, env):
    source = SOURCE.replace("#include <cstring>", "#include <cstring>\n#include <omp.h>").replace(
        "out[i] = in[i] * factor;", "out[i] = in[i] * factor * (omp_get_max_threads() > 0);", 1
    )
    expect("compile_openmp_call", load, source)
    works(load(source, extra_cflags=["-fopenmp"]))


@case("compile_undefined")
def _(shared, tmp_path, env):
    source = SOURCE.replace(
        "#include <cstring>", "#include <cstring>\nfloat errfix_twice(float);"
    ).replace("out[i] = in[i] * factor;", "out[i] = errfix_twice(in[i]) * factor / 2;", 1)
    expect("compile_undefined", load, source)
    works(load(source + "\nfloat errfix_twice(float v) { return 2 * v; }\n"))  # defined


def _path_without(tmp_path, names) -> str:
    """A PATH of /usr/bin's and /bin's programs but `names`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for directory in ("/usr/bin", "/bin"):
        for program in pathlib.Path(directory).iterdir():
            if not (bin_dir / program.name).exists() and not any(
                program.name.startswith(n) for n in names
            ):
                (bin_dir / program.name).symlink_to(program)
    return str(bin_dir)


@case("host_compiler_missing")
def _(shared, tmp_path, env):
    env.setenv("PATH", _path_without(tmp_path, ("g++", "c++", "clang++")))
    env.delenv("CXX", raising=False)  # CXX naming no compiler is cxx_not_a_compiler
    expect("host_compiler_missing", load, force_rebuild=True)
    compiler = "/usr/bin/g++-12" if os.path.exists("/usr/bin/g++-12") else "/usr/bin/g++"
    env.setenv("CXX", compiler)  # as the message's example: CXX=/usr/bin/g++-12
    works(load(force_rebuild=True))


@case("compile_tool_missing")
def _(shared, tmp_path, env):
    env.setenv("PATH", _path_without(tmp_path, ("as",)))
    expect("compile_tool_missing", load, force_rebuild=True)
    env.setenv("PATH", os.environ["PATH"] + ":/usr/bin")  # the directory that holds `as`
    works(load(force_rebuild=True))


@case("linker_missing")
def _(shared, tmp_path, env):
    env.setenv("JAXCC_LINKER", "mold")
    env.setenv("PATH", "/usr/bin:/bin")
    expect("linker_missing", load, force_rebuild=True)
    env.delenv("JAXCC_LINKER")
    works(load())


# -- the cache


@case("cache_entry_untrusted")
def _(shared, tmp_path, env):
    import subprocess
    import sys

    cache = pathlib.Path(jaxcc.get_cache_dir())
    entries = [p for p in cache.iterdir() if p.is_dir() and p.name.startswith(NAME + "-")]
    assert entries, sorted(p.name for p in cache.iterdir())
    for entry in entries:
        entry.chmod(0o777)
    # A fresh process (this one holds the module already): refused, then the command the message
    # names, then the load again.
    child = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "import test_error_fixes as t\n"
        "error = t.expect('cache_entry_untrusted', t.load)\n"
        "command = str(error).split('Remove it with `')[1].split('`')[0]\n"
        f"assert command == 'python -m jaxcc cache clear {NAME}', command\n"
        "assert t.cli(*command.split()[3:])[0] == 0\n"
        "t.works(t.load())\n"
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


# -- calling a kernel


@case("attr_traced")
def _(shared, tmp_path, env):
    expect("attr_traced", jax.jit(lambda f: shared.scale(X, factor=f)), 2.0)
    out = jax.jit(lambda f: shared.scale_by(X, jnp.asarray([f], jnp.float32)))(2.0)
    np.testing.assert_allclose(out, X * 2)


def _attrs(**given):
    values = {"flag": True, "n": 1, "small": 1, "big": 1, "mask": 1, **given}
    return values


@case("attr_not_real")
def _(shared, tmp_path, env):
    expect("attr_not_real", shared.scale, X, factor=1j)
    works(shared)


@case("attr_float_range")
def _(shared, tmp_path, env):
    expect("attr_float_range", shared.scale, X, factor=1e39)
    np.testing.assert_allclose(shared.scale(X, factor=1e30), X * np.float32(1e30), rtol=1e-6)


@case("attr_bool")
def _(shared, tmp_path, env):
    expect("attr_bool", shared.attrs, X, **_attrs(flag=2))
    np.testing.assert_allclose(shared.attrs(X, **_attrs(flag=True)), X + 5)


@case("attr_bool_for_int")
def _(shared, tmp_path, env):
    flag = True
    expect("attr_bool_for_int", shared.attrs, X, **_attrs(n=flag))
    np.testing.assert_allclose(shared.attrs(X, **_attrs(n=int(flag))), X + 5)


@case("attr_int_range")
def _(shared, tmp_path, env):
    expect("attr_int_range", shared.attrs, X, **_attrs(small=300))
    np.testing.assert_allclose(shared.attrs(X, **_attrs(small=127)), X + 131)


@case("attr_above_int64")
def _(shared, tmp_path, env):
    expect("attr_above_int64", shared.attrs, X, **_attrs(mask=2**63))
    out = shared.scale_by(X, jnp.asarray([2.0], jnp.float32))  # an array argument
    np.testing.assert_allclose(out, X * 2)


@case("attr_widest_range")
def _(shared, tmp_path, env):
    expect("attr_widest_range", shared.attrs, X, **_attrs(big=2**64))
    out = shared.scale_by(X, jnp.asarray([2.0], jnp.float32))  # an array argument
    np.testing.assert_allclose(out, X * 2)


@case("attr_huge_float")
def _(shared, tmp_path, env):
    expect("attr_huge_float", shared.scale, X, factor=10**400)
    works(shared)


@case("attr_not_int")
def _(shared, tmp_path, env):
    expect("attr_not_int", shared.attrs, X, **_attrs(n=1.5))
    np.testing.assert_allclose(shared.attrs(X, **_attrs(n=1)), X + 5)


@case("outs_dtype")
def _(shared, tmp_path, env):
    expect("outs_dtype", shared.typed, X, outs=jax.ShapeDtypeStruct(X.shape, jnp.int32))
    out = shared.typed(X, outs=jax.ShapeDtypeStruct(X.shape, jnp.float32))
    np.testing.assert_allclose(out, X)


@case("outs_needed")
def _(shared, tmp_path, env):
    expect("outs_needed", shared.split, X)
    half = jax.ShapeDtypeStruct((2,), jnp.float32)
    a, b = shared.split(X, outs=[half, half])
    np.testing.assert_allclose(np.concatenate([a, b]), X)


@case("scratch_needed")
def _(shared, tmp_path, env):
    expect("scratch_needed", shared.scratchy, X)
    np.testing.assert_allclose(shared.scratchy(X, scratch_bytes=X.size * 4), X)


@case("tensor_dtype")
def _(shared, tmp_path, env):
    ints = np.arange(4, dtype=np.int32)
    expect(
        "tensor_dtype", shared.scale, ints, outs=jax.ShapeDtypeStruct((4,), jnp.float32), factor=2.0
    )
    out = shared.scale(
        ints.astype(jnp.float32), outs=jax.ShapeDtypeStruct((4,), jnp.float32), factor=2.0
    )
    np.testing.assert_allclose(out, X * 2)


@case("not_differentiable")
def _(shared, tmp_path, env):
    loss = lambda x: shared.scale(x, factor=2.0).sum()  # noqa: E731
    expect("not_differentiable", jax.grad(loss), X)

    @jax.custom_vjp
    def scale2(x):
        return shared.scale(x, factor=2.0)

    scale2.defvjp(lambda x: (scale2(x), None), lambda _, g: (shared.scale(g, factor=2.0),))
    np.testing.assert_allclose(jax.grad(lambda x: scale2(x).sum())(X), np.full(4, 2.0))


# -- XLACustomKernel


def _primitive(name, **backends):
    prim = jaxcc.XLACustomKernel(name)
    prim.def_cpp_kernel(lambda **params: SHARED_MODULE[0].scale)
    for backend, platform in backends.items():
        prim.def_kernel(backend, platform, lambda **params: SHARED_MODULE[0].scale)
    return prim


SHARED_MODULE = []  # the shared module, for kernel generators
OUT = jax.ShapeDtypeStruct(X.shape, jnp.float32)


@pytest.fixture
def prim_module(shared):
    SHARED_MODULE[:] = [shared]
    return shared


@case("backend_unknown")
def _(prim_module, tmp_path, env):
    prim = _primitive("errfix_backend_unknown", other="gpu")
    expect("backend_unknown", prim, X, outs=OUT, factor=2.0, backend="other")
    np.testing.assert_allclose(prim(X, outs=OUT, factor=2.0, backend="cpp"), X * 2)


@case("backend_preference")
def _(prim_module, tmp_path, env):
    import warnings

    jaxcc.set_backend("cpu", "other")
    try:
        prim = _primitive("errfix_backend_preference")
        with pytest.warns(jaxcc.errors.BackendWarning) as caught:
            prim(X, outs=OUT, factor=2.0)
        assert ROWS["backend_preference"].pattern().search(str(caught[0].message))
        fixed = _primitive("errfix_backend_preference_fixed")
        with warnings.catch_warnings():
            warnings.simplefilter("error", jaxcc.errors.BackendWarning)
            out = fixed(X, outs=OUT, factor=2.0, backend="cpp")  # backend= on the call
        np.testing.assert_allclose(out, X * 2)
    finally:
        jaxcc.clear_backends()


@case("jvp_rule_count")
def _(prim_module, tmp_path, env):
    prim = _primitive("errfix_jvp_rule_count")
    rule = lambda t, x, **params: prim(t, outs=OUT, factor=params["factor"])  # noqa: E731
    prim.def_jvp_rule2(rule, rule)
    call = lambda x: prim(x, outs=OUT, factor=2.0)  # noqa: E731
    expect("jvp_rule_count", jax.jvp, call, (X,), (jnp.ones(4),))
    prim.def_jvp_rule2(rule)  # one rule per input
    _, tangent = jax.jvp(call, (X,), (jnp.ones(4),))
    np.testing.assert_allclose(tangent, np.full(4, 2.0))


@case("lowering_outs")
def _(prim_module, tmp_path, env):
    prim = jaxcc.XLACustomKernel("errfix_lowering_outs")
    prim.def_kernel("jax", "cpu", lambda **params: lambda x: x * 2.0)
    expect("lowering_outs", prim, X, outs=jax.ShapeDtypeStruct((3,), jnp.float32))
    np.testing.assert_allclose(prim(X, outs=OUT), X * 2)  # the kernel's own shape and dtype


@case("primitive_input")
def _(prim_module, tmp_path, env):
    prim = _primitive("errfix_primitive_input")
    expect("primitive_input", prim, "1 2 3 4", outs=OUT, factor=2.0)
    np.testing.assert_allclose(prim(jnp.asarray(X), outs=OUT, factor=2.0), X * 2)


@case("primitive_unhashable")
def _(prim_module, tmp_path, env):
    prim = _primitive("errfix_primitive_unhashable")
    expect("primitive_unhashable", prim, X, outs=OUT, factor=2.0, axes=[0])
    np.testing.assert_allclose(prim(X, outs=OUT, factor=2.0, axes=(0,)), X * 2)  # a tuple


@case("param_reserved")
def _(prim_module, tmp_path, env):
    from jaxcc.custom_kernel import lowering

    prim = _primitive("errfix_param_reserved")
    expect("param_reserved", prim, X, outs=OUT, factor=2.0, **{lowering.SELECTION_PARAM: 1})
    renamed = {lowering.SELECTION_PARAM.strip("_") + "_value": 1}  # the parameter renamed
    np.testing.assert_allclose(prim(X, outs=OUT, factor=2.0, **renamed), X * 2)


@case("no_kernel_platform")
def _(prim_module, tmp_path, env):
    prim = _primitive("errfix_no_kernel_platform")
    expect("no_kernel_platform", prim.set_default, "gpu", "cpp")
    prim.def_kernel("cpp", "gpu", lambda **params: SHARED_MODULE[0].scale)  # registered first
    prim.set_default("gpu", "cpp")
    np.testing.assert_allclose(prim(X, outs=OUT, factor=2.0), X * 2)


@case("benchmark_no_call")
def _(prim_module, tmp_path, env):
    prim = _primitive("errfix_benchmark_no_call")
    expect("benchmark_no_call", prim.call, X)
    prim.def_call(lambda x: prim(x, outs=OUT, factor=2.0))
    np.testing.assert_allclose(prim.call(X), X * 2)


def _ruled(name, rule, function="scale"):
    prim = jaxcc.XLACustomKernel(name, sharding=rule)
    prim.def_cpp_kernel(lambda **params: getattr(SHARED_MODULE[0], function))
    return prim


@case("rule_operand_count")
def _(prim_module, tmp_path, env):
    expect("rule_operand_count", _ruled("errfix_rule_count", "i -> i, i"), X, outs=OUT, factor=2.0)
    fixed = _ruled("errfix_rule_count_fixed", "i -> i")  # one operand per output
    np.testing.assert_allclose(fixed(X, outs=OUT, factor=2.0), X * 2)


@case("rule_rank")
def _(prim_module, tmp_path, env):
    expect("rule_rank", _ruled("errfix_rule_rank", "i j -> i j"), X, outs=OUT, factor=2.0)
    fixed = _ruled("errfix_rule_rank_fixed", "i -> i")  # one factor per dimension
    np.testing.assert_allclose(fixed(X, outs=OUT, factor=2.0), X * 2)
    leading = _ruled("errfix_rule_rank_leading", "... j -> ... j")  # or `...` first
    np.testing.assert_allclose(leading(X, outs=OUT, factor=2.0), X * 2)


@case("rule_sizes")
def _(prim_module, tmp_path, env):
    by = np.asarray([2.0], np.float32)
    bad = _ruled("errfix_rule_sizes", "i, i -> i", "scale_by")
    expect("rule_sizes", bad, X, by, outs=OUT)
    # different factors; `j` is then folded away, so it also needs rule_folded_factor's fix
    fixed = _ruled("errfix_rule_sizes_fixed", "i, j -> i; need_replication: j", "scale_by")
    np.testing.assert_allclose(fixed(X, by, outs=OUT), X * 2)


@case("rule_params")
def _(shared, tmp_path, env):
    expect("rule_params", load, sharding={"rowsum": "r c, q -> r; reduction: c"})
    works(load(sharding={"rowsum": "r c -> r; reduction: c"}))  # one operand per `arg`


@case("rule_reduction_in_output")
def _(shared, tmp_path, env):
    expect("rule_reduction_in_output", load, sharding={"rowsum": "r c -> c; reduction: c"})
    works(load(sharding={"rowsum": "r c -> r; reduction: c"}))  # only the input names `c`


@case("numba_vmap_method")
def _(tmp_path, env):
    numba = pytest.importorskip("numba")

    @numba.njit
    def double(x, y):
        for i in range(x.size):
            y[i] = 2 * x[i]

    expect("numba_vmap_method", jaxcc.numba_kernel, double, OUT, vmap_method="expand_dims")
    kernel = jaxcc.numba_kernel(double, OUT)  # vmap_method left unset
    np.testing.assert_allclose(jax.vmap(kernel)(np.stack([X, X])), np.stack([X, X]) * 2)


@case("numba_signature")
def _(tmp_path, env):
    numba = pytest.importorskip("numba")

    def double(x, y):
        for i in range(x.size):
            y[i] = 2 * x[i]

    # The same code under a plain @njit, compiled first, must not serve the typed kernel (it
    # did: jaxcc's numba cache keyed the code, not the explicit signatures).
    np.testing.assert_allclose(jaxcc.numba_kernel(numba.njit(double), OUT)(X), X * 2)
    typed = numba.njit("void(float64[:], float64[:])")(double)
    expect("numba_signature", jaxcc.numba_kernel(typed, OUT), X)
    plain = numba.njit(double)  # decorated with plain @numba.njit
    np.testing.assert_allclose(jaxcc.numba_kernel(plain, OUT)(X), X * 2)


@case("numba_fortran")
def _(tmp_path, env):
    numba = pytest.importorskip("numba")

    def double(x, y):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                y[i, j] = 2 * x[i, j]

    square = X.reshape(2, 2)
    out = jax.ShapeDtypeStruct((2, 2), jnp.float32)
    fortran = numba.njit("void(float32[::1, :], float32[::1, :])")(double)
    expect("numba_fortran", jaxcc.numba_kernel(fortran, out), square)
    c_order = numba.njit("void(float32[:, ::1], float32[:, ::1])")(double)  # C-order, as told
    np.testing.assert_allclose(jaxcc.numba_kernel(c_order, out)(square), square * 2)


@case("export_numba")
def _(shared, tmp_path, env):
    numba = pytest.importorskip("numba")

    @numba.njit
    def double(x, y):
        for i in range(x.size):
            y[i] = 2 * x[i]

    launched = jaxcc.numba_kernel(double, OUT)
    expect("export_numba", jaxcc.export, jax.jit(launched), OUT)
    compiled = jax.jit(lambda x: shared.scale(x, factor=2.0))  # a kernel compiled by jaxcc
    np.testing.assert_allclose(jaxcc.export(compiled, OUT).call(X), X * 2)


@case("primitive_name_taken")
def _(prim_module, tmp_path, env):
    import warnings

    _primitive("errfix_name_taken")
    with pytest.warns(UserWarning) as caught:
        _primitive("errfix_name_taken")
    assert ROWS["primitive_name_taken"].pattern().search(str(caught[0].message))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prim = _primitive("errfix_name_taken_2")  # a unique name
    np.testing.assert_allclose(prim(X, outs=OUT, factor=2.0), X * 2)


# -- check_kernel's rows


def _row(report, name):
    return next(r for r in report.rows if r.name == name)


@case("check_no_reference")
def _(shared, tmp_path, env):
    row = _row(jaxcc.check_kernel(shared.scale, X, factor=2.0, checks=["reference"]), "reference")
    assert row.status == "skipped" and ROWS["check_no_reference"].pattern().search(row.detail)
    report = jaxcc.check_kernel(
        shared.scale, X, factor=2.0, checks=["reference"], reference=lambda x, factor: x * factor
    )
    assert _row(report, "reference").status == "passed", report


@case("check_reference_backend")
def _(shared, tmp_path, env):
    report = jaxcc.check_kernel(shared.scale, X, factor=2.0, checks=["reference"], reference="cpp")
    row = _row(report, "reference")
    assert row.status == "failed" and ROWS["check_reference_backend"].pattern().search(row.detail)
    report = jaxcc.check_kernel(
        shared.scale, X, factor=2.0, checks=["reference"], reference=lambda x, factor: x * factor
    )
    assert _row(report, "reference").status == "passed", report


@case("check_no_derivative")
def _(shared, tmp_path, env):
    row = _row(jaxcc.check_kernel(shared.scale, X, factor=2.0, checks=["jvp"]), "jvp")
    assert row.status == "skipped" and ROWS["check_no_derivative"].pattern().search(row.detail)

    @jax.custom_jvp
    def scale2(x):
        return shared.scale(x, factor=2.0)

    scale2.defjvp(lambda primals, tangents: (scale2(*primals), 2.0 * tangents[0]))
    report = jaxcc.check_kernel(scale2, X, checks=["jvp"])  # the custom_jvp around it, checked
    assert _row(report, "jvp").status == "passed", report


@case("check_outs_fixed")
def _(shared, tmp_path, env):
    half = jax.ShapeDtypeStruct((2,), jnp.float32)
    row = _row(
        jaxcc.check_kernel(shared.split, X, outs=[half, half], checks=["outputs"]), "outputs"
    )
    assert ROWS["check_outs_fixed"].pattern().search(row.detail), row
    halves = lambda x: [jax.ShapeDtypeStruct((x.shape[0] // 2,), x.dtype)] * 2  # noqa: E731
    row = _row(jaxcc.check_kernel(shared.split, X, outs=halves, checks=["outputs"]), "outputs")
    assert row.status == "passed" and "outs is fixed" not in row.detail, row


@case("check_one_device")
def _(shared, tmp_path, env):
    import subprocess
    import sys

    child = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "import jax, jaxcc, numpy as np, test_error_fixes as t\n"
        "mod = t.load()\n"
        "x = np.arange(64, dtype=np.float32).reshape(8, 8)\n"
        "out = jax.ShapeDtypeStruct((8,), np.float32)\n"
        "report = jaxcc.check_kernel(mod.rowsum, x, outs=out, checks=['sharding'])\n"
        "row = t._row(report, 'sharding')\n"
        "print(row.status, '|', row.detail)\n"
    )
    one = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert one.returncode == 0, one.stderr[-3000:]
    status, detail = one.stdout.strip().splitlines()[-1].split(" | ", 1)
    assert status == "skipped" and ROWS["check_one_device"].pattern().search(detail), one.stdout
    flags = "--xla_force_host_platform_device_count=8"  # set before JAX starts, as told
    eight = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True,
        env={**os.environ, "XLA_FLAGS": flags},
    )  # fmt: skip
    assert eight.returncode == 0, eight.stderr[-3000:]
    assert eight.stdout.strip().splitlines()[-1].startswith("passed"), eight.stdout


# -- bundles, export and deserialize


@pytest.fixture(scope="module")
def bundle_source(tmp_path_factory):
    """A source file for `jaxcc build`, and a bundle of it built once."""
    work = tmp_path_factory.mktemp("bundle")
    source = work / "errfix_bundle.cc"
    source.write_text(
        SOURCE.replace(
            "#include <cstring>", "#include <cstring>\n// @jaxcc scale arg ret attr.factor:float32"
        )
    )
    status, err = cli("build", str(source), "--out", str(work / "good"))
    assert status == 0, err
    return source


def cli(*argv) -> tuple[int, str]:
    """`jaxcc ARGV...` in this process: its exit status and what it wrote to stderr."""
    from jaxcc.cli.main import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(list(argv))
        except SystemExit as e:
            status = e.code
    return status, err.getvalue()


def good_bundle(source: pathlib.Path) -> pathlib.Path:
    """The bundle `jaxcc build SOURCE --out good` wrote (bundle_source)."""
    return source.parent / "good"


def copied_bundle(source: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    import shutil

    return pathlib.Path(shutil.copytree(good_bundle(source), out))


def copied_bundle_edited(source: pathlib.Path, out: pathlib.Path, edit) -> pathlib.Path:
    """A copy of the good bundle whose manifest `edit(data)` changed in place."""
    import json

    copied_bundle(source, out)
    manifest = out / "jaxcc-bundle.json"
    data = json.loads(manifest.read_text())
    edit(data)
    manifest.write_text(json.dumps(data))
    return out


def fresh_bundle(source: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    status, err = cli("build", str(source), "--out", str(out))
    assert status == 0, err
    return out


def works_bundle(out) -> None:
    mod = jaxcc.load_library(str(out))
    np.testing.assert_allclose(mod.scale(X, factor=2.0), X * 2)


@case("bundle_altered")
def _(shared, tmp_path, env, bundle_source):
    out = copied_bundle(bundle_source, tmp_path / "b")
    library = next(p for p in out.rglob("*.so"))
    library.write_bytes(library.read_bytes() + b"\0")
    expect("bundle_altered", jaxcc.load_library, str(out))
    fresh_bundle(bundle_source, out)  # rebuilt with `jaxcc build`
    works_bundle(out)
    # A manifest naming a function its library lacks is refused with the same fix (it was a
    # LoadError telling to clear the cache, which holds no bundle).
    out = copied_bundle(bundle_source, tmp_path / "c")
    manifest = out / "jaxcc-bundle.json"
    manifest.write_text(manifest.read_text().replace('"scale"', '"scalf"', 1))
    expect("bundle_altered", jaxcc.load_library, str(out))
    fresh_bundle(bundle_source, out)
    works_bundle(out)


@case("bundle_manifest_edited")
def _(shared, tmp_path, env, bundle_source):
    out = copied_bundle_edited(bundle_source, tmp_path / "b", lambda data: data.pop("functions"))
    expect("bundle_manifest_edited", jaxcc.load_library, str(out))
    fresh_bundle(bundle_source, out)
    works_bundle(out)


@case("bundle_newer_format")
def _(shared, tmp_path, env, bundle_source):
    out = copied_bundle_edited(
        bundle_source, tmp_path / "b", lambda data: data.update(format=data["format"] + 1)
    )
    expect("bundle_newer_format", jaxcc.load_library, str(out))
    fresh_bundle(bundle_source, out)  # rebuilt with this jaxcc's `jaxcc build`
    works_bundle(out)


@case("bundle_not_dir")
def _(shared, tmp_path, env, bundle_source):
    out = copied_bundle(bundle_source, tmp_path / "b")
    expect("bundle_not_dir", jaxcc.load_library, str(out / "jaxcc-bundle.json"))
    works_bundle(out)


@case("bundle_no_manifest")
def _(shared, tmp_path, env, bundle_source):
    out = copied_bundle(bundle_source, tmp_path / "b")
    expect("bundle_no_manifest", jaxcc.load_library, str(tmp_path))
    works_bundle(out)


@case("bundle_out_not_empty")
def _(shared, tmp_path, env, bundle_source):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    status, err = cli("build", str(bundle_source), "--out", str(tmp_path / "full"))
    assert status != 0 and ROWS["bundle_out_not_empty"].pattern().search(err), err
    works_bundle(fresh_bundle(bundle_source, tmp_path / "new"))


@case("deserialize_missing")
def _(shared, tmp_path, env):
    import subprocess
    import sys

    exported = jaxcc.export(jax.jit(lambda x: shared.scale(x, factor=2.0)), X)
    blob = tmp_path / "blob"
    blob.write_bytes(exported.serialize())
    child = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "import jaxcc, numpy as np, test_error_fixes as t\n"
        f"blob = open({str(blob)!r}, 'rb').read()\n"
        "t.expect('deserialize_missing', jaxcc.deserialize, blob)\n"
        "mod = t.load()  # loaded first, as the message says\n"
        "np.testing.assert_allclose(jaxcc.deserialize(blob, modules=[mod]).call(t.X), t.X * 2)\n"
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


# -- the command line


@case("build_module_flags")
def _(shared, tmp_path, env, bundle_source):
    (tmp_path / "errfix_user_mod.py").write_text(
        f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "import test_error_fixes as t\nmod = t.load()\n"
    )
    env.syspath_prepend(str(tmp_path))
    argv = ["build", "--module", "errfix_user_mod", "-O", "2", "--out", str(tmp_path / "o")]
    status, err = cli(*argv)
    assert status != 0 and ROWS["build_module_flags"].pattern().search(err), err
    works_bundle(good_bundle(bundle_source))  # SRC... instead of --module: bundle_source's command


@case("build_compile_commands_inline")
def _(shared, tmp_path, env, bundle_source):
    (tmp_path / "errfix_user_cc.py").write_text(
        f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "import test_error_fixes as t\nmod = t.load()\n"
    )
    env.syspath_prepend(str(tmp_path))
    db = str(tmp_path / "db")
    argv = ["--module", "errfix_user_cc", "--compile-commands", db, "--out", str(tmp_path / "o")]
    status, err = cli("build", *argv)
    assert status != 0 and ROWS["build_compile_commands_inline"].pattern().search(err), err
    out = tmp_path / "with-db"
    status, err = cli("build", str(bundle_source), "--compile-commands", db, "--out", str(out))
    assert status == 0, err
    assert (tmp_path / "db" / "compile_commands.json").exists()
    works_bundle(out)


@case("check_no_checks")
def _(shared, tmp_path, env):
    import sys

    module = tmp_path / "errfix_user_chk.py"
    module.write_text(
        f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "import test_error_fixes as t\nmod = t.load()\n"
    )
    env.syspath_prepend(str(tmp_path))
    env.chdir(tmp_path)
    status, err = cli("check", "errfix_user_chk", "--checks", "jit")
    assert status != 0 and ROWS["check_no_checks"].pattern().search(err), err
    module.write_text(
        module.read_text() + 'JAXCC_CHECKS = {"scale": (mod.scale, (t.X,), {"factor": 2.0})}\n'
    )
    sys.modules.pop("errfix_user_chk", None)  # what a new `jaxcc check` process imports
    status, err = cli("check", "errfix_user_chk", "--checks", "jit")
    assert status == 0, err


@case("bundle_vmap_method")
def _(shared, tmp_path, env, bundle_source):
    out = copied_bundle_edited(
        bundle_source, tmp_path / "b", lambda data: data.update(vmap_method="sideways")
    )
    expect("bundle_vmap_method", jaxcc.load_library, str(out))
    fresh_bundle(bundle_source, out)  # rebuilt with `jaxcc build`
    works_bundle(out)


@case("build_src_and_module")
def _(shared, tmp_path, env, bundle_source):
    status, err = cli("build", str(bundle_source), "--module", "json", "--out", str(tmp_path / "o"))
    assert status != 0 and ROWS["build_src_and_module"].pattern().search(err), err
    works_bundle(good_bundle(bundle_source))  # `jaxcc build SRC --out DIR`: bundle_source ran it


@case("build_not_a_file")
def _(shared, tmp_path, env, bundle_source):
    status, err = cli("build", str(tmp_path / "missing.cc"), "--out", str(tmp_path / "o"))
    assert status != 0 and ROWS["build_not_a_file"].pattern().search(err), err
    works_bundle(good_bundle(bundle_source))  # `jaxcc build SRC --out DIR`: bundle_source ran it


@case("build_nothing")
def _(shared, tmp_path, env, bundle_source):
    status, err = cli("build", "--out", str(tmp_path / "o"))
    assert status != 0 and ROWS["build_nothing"].pattern().search(err), err
    works_bundle(good_bundle(bundle_source))  # `jaxcc build SRC --out DIR`: bundle_source ran it


@case("stubs_no_module")
def _(shared, tmp_path, env):
    status, err = cli("stubs", "json", "-o", str(tmp_path))
    assert status != 0 and ROWS["stubs_no_module"].pattern().search(err), err
    (tmp_path / "errfix_user.py").write_text(
        f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "import test_error_fixes as t\nmod = t.load()\n"
    )
    env.syspath_prepend(str(tmp_path))
    status, err = cli("stubs", "errfix_user", "-o", str(tmp_path))
    assert status == 0, err
    assert (tmp_path / f"{NAME}.pyi").exists()


def _doctor_line(name):
    from jaxcc.cli import doctor

    return next(c for c in doctor.run_checks() if c.name == name)


@case("doctor_linker")
def _(shared, tmp_path, env):
    env.setenv("JAXCC_LINKER", "nonsense")
    line = _doctor_line("linker")
    assert line.status == "FAIL" and ROWS["doctor_linker"].pattern().search(line.fix), line
    env.delenv("JAXCC_LINKER")
    assert _doctor_line("linker").status == "PASS"
    env.setenv("JAXCC_LINKER", "gold")
    assert _doctor_line("linker").status == "PASS"


@case("doctor_cuda_runtime")
def _(shared, tmp_path, env):
    env.setenv("JAXCC_CUDA_RUNTIME", "dynamic")
    line = _doctor_line("CUDA runtime")
    assert line.status == "FAIL" and ROWS["doctor_cuda_runtime"].pattern().search(line.fix), line
    env.setenv("JAXCC_CUDA_RUNTIME", "static")
    assert _doctor_line("CUDA runtime").status != "FAIL"
    env.delenv("JAXCC_CUDA_RUNTIME")
    assert _doctor_line("CUDA runtime").status != "FAIL"


# -- a second shared module: functions the rows below return to, loaded from their annotations
# (kept out of SOURCE, whose variants many cases build)

MORE_SOURCE = r"""
#include "jaxcc/jaxcc.h"
#include <cmath>
#include <cstring>

// @jaxcc scale_t arg ret attr.gain:float32
void scale_t(const jaxcc::Tensor& x, jaxcc::Tensor y, std::float_t gain) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] * gain;
}

// @jaxcc colsum sharding="r k -> k; reduction: r"
void colsum(const jaxcc::Tensor& x, jaxcc::Tensor y) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t c = 0; c < x.size(1); ++c) {
        float s = 0;
        for (int64_t r = 0; r < x.size(0); ++r) s += in[r * x.size(1) + c];
        out[c] = s;
    }
}

// @jaxcc later arg ret async
void later(const jaxcc::Tensor& x, jaxcc::Tensor y, jaxcc::Async async) {
    std::memcpy(y.data_ptr(), x.data_ptr(), x.nbytes());
}

static float negate(float v) { return -v; }
static float twice(float v) { return 2 * v; }

// @jaxcc apply
void apply(const jaxcc::Tensor& x, jaxcc::Tensor y, int32_t op) {
    float (*fn)(float) = op == 0 ? negate : twice;  // the function chosen inside the kernel
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = fn(in[i]);
}

using cudaStream_t = void*;  // a CPU build of a source also written for CUDA

// @jaxcc streamed arg ret attr.stream:int64 stream
void streamed(const jaxcc::Tensor& x, jaxcc::Tensor y, int64_t stream, cudaStream_t s) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] + stream;
}

struct Pixel {
    float v;
};

// @jaxcc pixels
void pixels(const jaxcc::Tensor& x, jaxcc::Tensor y) {
    const Pixel* in = static_cast<const Pixel*>(x.data_ptr());
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i].v + 1;
}

#define ERRFIX_KERNEL(name, params) void name params
// @jaxcc copied
ERRFIX_KERNEL(copied, (const jaxcc::Tensor& x, jaxcc::Tensor y)) {
    std::memcpy(y.data_ptr(), x.data_ptr(), x.nbytes());
}
"""


def load_more(source=MORE_SOURCE):
    return jaxcc.load_cpp_inline(NAME + "_more", source, functions=None)


def edited(old: str, new: str) -> str:
    """MORE_SOURCE with `old` (which it holds once) replaced by `new`."""
    assert MORE_SOURCE.count(old) == 1, old
    return MORE_SOURCE.replace(old, new)


@pytest.fixture(scope="module")
def more():
    return load_more()


M22 = jax.ShapeDtypeStruct((2,), jnp.float32)
COLSUM = 'sharding="r k -> k; reduction: r"'


def works_colsum(mod) -> None:
    np.testing.assert_allclose(mod.colsum(X.reshape(2, 2), outs=M22), [2, 4])


@case("rule_folded_ellipsis")
def _(more, tmp_path, env):
    expect("rule_folded_ellipsis", load_more, edited(COLSUM, 'sharding="... k -> k"'))
    works_colsum(load_more())  # the folded dimension named `r` and declared `reduction: r`


@case("rule_compound")
def _(more, tmp_path, env):
    compound = 'sharding="(a b) k -> k; reduction: a"'
    expect("rule_compound", load_more, edited(COLSUM, compound))
    works_colsum(load_more())  # the compound dropped: `r`


@case("rule_output_unnamed")
def _(more, tmp_path, env):
    expect("rule_output_unnamed", load_more, edited(COLSUM, 'sharding="r c -> k; reduction: r"'))
    works_colsum(load_more())  # `k` named in the input it comes from


@case("spec_pool_async")
def _(more, tmp_path, env):
    expect("spec_pool_async", load_more, edited("later arg ret async", "later arg ret pool async"))
    np.testing.assert_allclose(load_more().later(X), X)  # `pool` dropped


@case("spec_alloc_async")
def _(more, tmp_path, env):
    tokens = "later arg ret scratch_alloc async"
    expect("spec_alloc_async", load_more, edited("later arg ret async", tokens))
    np.testing.assert_allclose(load_more().later(X), X)  # `scratch_alloc` dropped


@case("token_unknown_type")
def _(more, tmp_path, env):
    note = "scale_t arg ret attr.gain:float32"
    error = expect("token_unknown_type", load_more, edited(note, "scale_t arg ret attr.gain"))
    assert "e.g. `attr.gain:float32`" in str(error), error
    np.testing.assert_allclose(load_more().scale_t(X, gain=2.0), X * 2)  # the type written


@case("sig_alias_type")
def _(more, tmp_path, env):
    note = "scale_t arg ret attr.gain:float32"
    expect("sig_alias_type", load_more, edited(note, "scale_t"))  # std::float_t, inferred
    np.testing.assert_allclose(load_more().scale_t(X, gain=2.0), X * 2)  # the tokens given


@case("sig_stream_attr")
def _(more, tmp_path, env):
    note = "streamed arg ret attr.stream:int64 stream"
    expect("sig_stream_attr", load_more, edited(note, "streamed"))
    # the tokens given explicitly, with `attr.stream:int64`
    np.testing.assert_allclose(load_more().streamed(X, stream=3), X + 3)


@case("sig_macro_comma")
def _(more, tmp_path, env):
    wrapped = "ERRFIX_KERNEL(copied, (const jaxcc::Tensor& x, jaxcc::Tensor y))"
    bare = "ERRFIX_KERNEL(copied, const jaxcc::Tensor& x, jaxcc::Tensor y)"
    expect("sig_macro_comma", load_more, edited(wrapped, bare))
    np.testing.assert_allclose(load_more().copied(X), X)  # wrapped in parentheses


@case("fn_pointer")
def _(more, tmp_path, env):
    expect("fn_pointer", load_more, edited("int32_t op)", "float (*op)(float))"))
    mod = load_more()  # `apply` chooses the function inside from its integer attribute `op`
    np.testing.assert_allclose(mod.apply(X, op=0), -X)
    np.testing.assert_allclose(mod.apply(X, op=1), X * 2)


@case("data_ptr_unknown_type")
def _(more, tmp_path, env):
    cast = "static_cast<const Pixel*>(x.data_ptr())"
    expect("data_ptr_unknown_type", load_more, edited(cast, "x.data_ptr<Pixel>()"))
    np.testing.assert_allclose(load_more().pixels(X), X + 1)  # the untyped data_ptr(), cast


@case("handler_element_type")
def _(shared, tmp_path, env):
    call = jax.ffi.ffi_call(shared.scale_by.target, OUT)  # the raw target
    x = X.astype(jnp.float8_e4m3fn)
    by = np.ones(1, np.float32)
    error = expect("handler_element_type", call, x, by)
    assert "(e.g. x.astype(jnp.float32))" in str(error), error
    np.testing.assert_allclose(call(x.astype(jnp.float32), by), X)


# -- tuning: one tuned module (two variants of a small source), its decision cached

TUNED_SOURCE = r"""
#include "jaxcc/jaxcc.h"
#ifndef ERRFIX_BLOCK
#define ERRFIX_BLOCK 16
#endif

// @jaxcc blocked
void blocked(const jaxcc::Tensor& x, jaxcc::Tensor y, float gain) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i0 = 0; i0 < n; i0 += ERRFIX_BLOCK)
        for (int64_t i = i0; i < i0 + ERRFIX_BLOCK && i < n; ++i) out[i] = in[i] * gain;
}

// @jaxcc picked
void picked(const jaxcc::Tensor& x, const jaxcc::Tensor& at, jaxcc::Tensor y) {
    const float* in = x.data_ptr<float>();
    const int32_t* index = at.data_ptr<int32_t>();
    float* out = y.data_ptr<float>();
    for (int64_t i0 = 0; i0 < at.numel(); i0 += ERRFIX_BLOCK)
        for (int64_t i = i0; i < i0 + ERRFIX_BLOCK && i < at.numel(); ++i) {
            JAXCC_CHECK(index[i] >= 0 && index[i] < x.numel()) << "index " << index[i];
            out[i] = in[index[i]];
        }
}
"""
TUNE = {"blocked": {"ERRFIX_BLOCK": [16, 32]}}


def load_tuned(source=TUNED_SOURCE, **options):
    """The tuned module (from its annotation), or a variant of it: `options` replace its own."""
    options = {"functions": None, "tune": TUNE, **options}
    return jaxcc.load_cpp_inline(NAME + "_tuned", source, **options)


@pytest.fixture(scope="module")
def tuned():
    mod = load_tuned()
    np.testing.assert_allclose(mod.blocked(X, gain=2.0), X * 2)  # tuned for (4,) once
    return mod


def works_tuned(mod) -> None:
    np.testing.assert_allclose(mod.blocked(X, gain=2.0), X * 2)
    assert len(mod.blocked.variant_targets) == 2


@case("tune_no_values")
def _(tuned, tmp_path, env):
    error = expect("tune_no_values", load_tuned, tune={"blocked": {"ERRFIX_BLOCK": []}})
    assert "e.g. ERRFIX_BLOCK=[16, 32]" in str(error), error
    works_tuned(load_tuned(tune={"blocked": {"ERRFIX_BLOCK": [16, 32]}}))  # the example's values


@case("tune_plain_dict_options")
def _(tuned, tmp_path, env):
    keep = lambda config: True  # noqa: E731
    plain = {"blocked": {"ERRFIX_BLOCK": [16, 32], "constraints": keep}}
    expect("tune_plain_dict_options", load_tuned, tune=plain)
    through = {"blocked": jaxcc.Autotune(ERRFIX_BLOCK=[16, 32], constraints=keep)}
    works_tuned(load_tuned(tune=through))


@case("tune_twice")
def _(tuned, tmp_path, env):
    note = '// @jaxcc blocked tune="ERRFIX_BLOCK=16,32"'
    expect("tune_twice", load_tuned, TUNED_SOURCE.replace("// @jaxcc blocked", note))
    works_tuned(load_tuned(TUNED_SOURCE))  # the annotation's tune="..." dropped


@case("tune_budget_env")
def _(tuned, tmp_path, env):
    # The budget is read when a call tunes: a shape no other case calls (the session's cache is
    # its own, tests/conftest.py).
    x8 = np.arange(8, dtype=np.float32)
    env.setenv("JAXCC_TUNE_BUDGET_S", "long")
    expect("tune_budget_env", tuned.blocked, x8, gain=2.0)
    env.setenv("JAXCC_TUNE_BUDGET_S", "30")  # e.g. 30
    np.testing.assert_allclose(tuned.blocked(x8, gain=2.0), x8 * 2)
    env.delenv("JAXCC_TUNE_BUDGET_S")  # or unset it: another shape tunes
    x16 = np.arange(16, dtype=np.float32)
    np.testing.assert_allclose(tuned.blocked(x16, gain=2.0), x16 * 2)


def _tune_module(tmp_path, env) -> str:
    (tmp_path / "errfix_user_tune.py").write_text(
        f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "import test_error_fixes as t\nmod = t.load_tuned()\n"
    )
    env.syspath_prepend(str(tmp_path))
    return "errfix_user_tune"


@case("tune_attrs")
def _(tuned, tmp_path, env):
    module = _tune_module(tmp_path, env)
    status, err = cli("tune", module, "--shapes", "blocked=float32[4]")
    assert status == 2 and ROWS["tune_attrs"].pattern().search(err), err
    assert "--attrs blocked:gain=..." in err, err
    status, err = cli(
        "tune", module, "--shapes", "blocked=float32[4]", "--attrs", "blocked:gain=2.0"
    )
    assert status == 0, err


@case("tune_shapes")
def _(tuned, tmp_path, env):
    module = _tune_module(tmp_path, env)
    status, err = cli("tune", module)
    assert status == 1 and ROWS["tune_shapes"].pattern().search(err), err
    status, err = cli(
        "tune", module, "--shapes", "blocked=float32[4]", "--attrs", "blocked:gain=2.0"
    )
    assert status == 0, err


def tune_key(shapes, attributes) -> str:
    """A key= function: one tuning for every shape."""
    return "all"


KEYED = {"blocked": jaxcc.Autotune(ERRFIX_BLOCK=[16, 32], key=tune_key)}


@pytest.fixture(scope="module")
def tuned_bundle(tmp_path_factory):
    """`jaxcc build --module` of a module that loads the tuned module with a key= function:
    (the work directory, on sys.path while a case runs, and the bundle)."""
    work = tmp_path_factory.mktemp("tuned_bundle")
    (work / "errfix_user_keyed.py").write_text(
        f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "import test_error_fixes as t\nmod = t.load_tuned(tune=t.KEYED)\n"
    )
    assert build_keyed(work, work / "good") == 0
    return work, work / "good" / (NAME + "_tuned")


def build_keyed(work, out) -> int:
    """`jaxcc build --module errfix_user_keyed --out OUT` (it writes OUT/errfix_tuned) as a new
    process would run it: the module imported afresh."""
    sys.modules.pop("errfix_user_keyed", None)
    sys.path.insert(0, str(work))
    try:
        status, err = cli("build", "--module", "errfix_user_keyed", "--out", str(out))
    finally:
        sys.path.remove(str(work))
    assert status == 0 or "bundle" in err, err
    build_keyed.err = err
    return status


def works_tuned_bundle(out) -> None:
    works_tuned(jaxcc.load_library(str(out), tune=KEYED))


@case("tune_key_in_bundle")
def _(tuned_bundle, tmp_path, env):
    _, out = tuned_bundle
    expect("tune_key_in_bundle", jaxcc.load_library, str(out))
    mod = jaxcc.load_library(str(out), tune={"blocked": jaxcc.Autotune(key=tune_key)})  # again
    works_tuned(mod)


@case("bundle_tuned_altered")
def _(tuned_bundle, tmp_path, env):
    import shutil

    work, good = tuned_bundle
    out = pathlib.Path(shutil.copytree(good.parent, tmp_path / "b")) / good.name
    library = next(p for p in out.rglob("*.so"))
    library.write_bytes(library.read_bytes() + b"\0")
    expect("bundle_tuned_altered", jaxcc.load_library, str(out), tune=KEYED)
    assert build_keyed(work, out.parent) == 0  # rebuilt with `jaxcc build`
    works_tuned_bundle(out)


@case("bundle_tuned_out_not_empty")
def _(tuned_bundle, tmp_path, env):
    work, good = tuned_bundle
    (tmp_path / "full" / good.name).mkdir(parents=True)
    (tmp_path / "full" / good.name / "notes.txt").write_text("mine")
    assert build_keyed(work, tmp_path / "full") != 0
    assert ROWS["bundle_tuned_out_not_empty"].pattern().search(build_keyed.err), build_keyed.err
    assert build_keyed(work, tmp_path / "new") == 0  # a new directory
    works_tuned_bundle(tmp_path / "new" / good.name)


# -- several devices: one child process of 8 CPU devices tries each row's trigger and its fix

EIGHT_DEVICES_CHILD = r"""
import json, sys, warnings
import jax, jax.numpy as jnp, numpy as np
import jaxcc, test_error_fixes as t
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((8,), ("x",))
auto = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))


def run(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out, error = fn(*args), None
        except Exception as e:
            out, error = None, f"{type(e).__name__}: {e}"
    return out, [f"{w.category.__name__}: {w.message}" for w in caught], error


def row(name, before, after, out, expected):
    right = out is not None and np.allclose(np.asarray(out), expected)
    spec = str(getattr(getattr(after[0], "sharding", None), "spec", None))
    results[name] = {"before": before[1:], "after": after[1:], "right": bool(right), "spec": spec}


results = {}
x = np.arange(64, dtype=np.float32).reshape(8, 8)
rows = jax.device_put(x, NamedSharding(mesh, P("x", None)))
cols = jax.device_put(x, NamedSharding(mesh, P(None, "x")))
v8 = jax.ShapeDtypeStruct((8,), jnp.float32)
m88 = jax.ShapeDtypeStruct((8, 8), jnp.float32)
mod = t.load()
t.SHARED_MODULE[:] = [mod]

before = run(jax.jit(lambda a: mod.scale(a, factor=2.0)), rows)
ruled = t.load(sharding={**t.SHARDING, "scale": "b i -> b i"})  # sharding={'scale': 'b i -> b i'}
after = run(jax.jit(lambda a: ruled.scale(a, factor=2.0)), rows)
row("sharding_gather", before, after, after[0], x * 2)


def rowsum_split(a):
    a = jax.lax.with_sharding_constraint(a, NamedSharding(auto, P("x", None)))
    return mod.rowsum(a, outs=jax.ShapeDtypeStruct((a.shape[0],), jnp.float32))


x12 = x[:6].reshape(12, 4)
before = run(jax.jit(rowsum_split), x12)
after = run(jax.jit(rowsum_split), np.pad(x12, ((0, 4), (0, 0))))  # padded to a multiple of 8
row("sharding_indivisible", before, after, after[0] is not None and after[0][:12], x12.sum(1))

whole = t.load(sharding={**t.SHARDING, "rowsum": "r c -> r; need_replication: c"})
before = run(jax.jit(lambda a: whole.rowsum(a, outs=v8)), cols)
after = run(jax.jit(lambda a: whole.rowsum(a, outs=v8)), rows)  # split along another factor
row("sharding_split_factor", before, after, after[0], x.sum(1))

two = t.load(sharding={**t.SHARDING, "split": "r c -> r, r; reduction: c"})
before = run(jax.jit(lambda a: two.split(a, outs=[v8, v8])), cols)
after = run(jax.jit(lambda a: mod.rowsum(a, outs=v8)), cols)  # the sum in a function of one output
row("rule_reduction_outputs", before, after, after[0], x.sum(1))

bare = t._primitive("errfix_none_gathered")
before = run(jax.jit(lambda a: bare(a, outs=m88, factor=2.0)), rows)
given = jaxcc.XLACustomKernel("errfix_none_gathered_2", sharding="b i -> b i")  # as written
given.def_cpp_kernel(lambda **params: mod.scale)
after = run(jax.jit(lambda a: given(a, outs=m88, factor=2.0)), rows)
row("rule_none_gathered", before, after, after[0], x * 2)

bare = t._primitive("errfix_vmap")
before = run(jax.jit(jax.vmap(lambda r: bare(r, outs=v8, factor=2.0))), rows)
given = jaxcc.XLACustomKernel("errfix_vmap_2", sharding="i -> i")  # a rule given
given.def_cpp_kernel(lambda **params: mod.scale)
after = run(jax.jit(jax.vmap(lambda r: given(r, outs=v8, factor=2.0))), rows)
row("sharding_vmap", before, after, after[0], x * 2)

other = jaxcc.XLACustomKernel("errfix_disagree", sharding="r c -> r; reduction: c")
other.def_cpp_kernel(lambda **params: whole.rowsum)
before = run(jax.jit(lambda a: other(a, outs=v8)), cols)
same = jaxcc.XLACustomKernel("errfix_disagree_2", sharding="r c -> r; need_replication: c")
same.def_cpp_kernel(lambda **params: whole.rowsum)  # the function's rule
after = run(jax.jit(lambda a: same(a, outs=v8)), cols)
row("rule_function_disagrees", before, after, after[0], x.sum(1))
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def eight_devices(shared):
    import json
    import subprocess

    flags = "--xla_force_host_platform_device_count=8"
    done = subprocess.run(
        [sys.executable, "-c", EIGHT_DEVICES_CHILD], capture_output=True, text=True,
        env={**os.environ, "XLA_FLAGS": flags, "PYTHONPATH": str(ROOT / "tests")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _eight_devices_case(ident, results, split=None, after_may_warn=False):
    """The row's warning (or error) came on the trigger; with its fix applied the call gave the
    right values, its output split as `split` says (a gather's output is whole, P(); a warning is
    said once per function, so its absence alone proves little), and warned of nothing (or,
    `after_may_warn`, raised nothing)."""
    found = results[ident]
    before = found["before"][0] + ([found["before"][1]] if found["before"][1] else [])
    pattern = ROWS[ident].pattern()
    shown = [m for m in before if m.startswith(ROWS[ident].error + ": ") and pattern.search(m)]
    assert shown, f"{ident}: {before}"
    warned, error = found["after"]
    assert error is None and (after_may_warn or not warned), found["after"]
    assert found["right"], found
    assert split is None or found["spec"] == split, found


@case("sharding_gather")
def _(eight_devices, tmp_path, env):
    _eight_devices_case("sharding_gather", eight_devices, split="P('x', None)")


@case("sharding_indivisible")
def _(eight_devices, tmp_path, env):
    _eight_devices_case("sharding_indivisible", eight_devices, split="P('x',)")


@case("sharding_split_factor")
def _(eight_devices, tmp_path, env):
    _eight_devices_case("sharding_split_factor", eight_devices, split="P('x',)")


@case("rule_reduction_outputs")
def _(eight_devices, tmp_path, env):
    _eight_devices_case("rule_reduction_outputs", eight_devices)


@case("rule_none_gathered")
def _(eight_devices, tmp_path, env):
    _eight_devices_case("rule_none_gathered", eight_devices, split="P('x',)")


@case("sharding_vmap")
def _(eight_devices, tmp_path, env):
    _eight_devices_case("sharding_vmap", eight_devices, split="P('x',)")


@case("rule_function_disagrees")
def _(eight_devices, tmp_path, env):
    # The function's rule keeps `c` whole, so the input split along it is gathered (warned):
    # the call is right, not split.
    _eight_devices_case("rule_function_disagrees", eight_devices, after_may_warn=True)


@case("tune_budget_spent")
def _(tuned, tmp_path, env):
    from jaxcc.tune import store

    x24 = np.arange(24, dtype=np.float32)  # a shape no other case calls
    env.setenv("JAXCC_TUNE_BUDGET_S", "0.000001")  # spent after the reference's first run
    with pytest.warns(jaxcc.errors.AutotuneWarning) as caught:
        np.testing.assert_allclose(tuned.blocked(x24, gain=2.0), x24 * 2)
    assert any(ROWS["tune_budget_spent"].pattern().search(str(w.message)) for w in caught)
    env.setenv("JAXCC_TUNE_BUDGET_S", "30")  # the budget raised: the next call times the rest
    np.testing.assert_allclose(tuned.blocked(x24 + 1, gain=2.0), (x24 + 1) * 2)
    decided = [
        r
        for r in store.list_decisions(str(jaxcc.get_cache_dir()))
        if r.get("module") == NAME + "_tuned" and r.get("key") == "float32[24]"
    ]
    assert [(r["tried"], r["budget_exhausted"]) for r in decided] == [(2, False)], decided


@case("tune_reference_fails")
def _(tuned, tmp_path, env):
    x, at = np.array([1.0, 2.0], np.float32), np.arange(8, dtype=np.int32) % 2
    outs = jax.ShapeDtypeStruct((8,), jnp.float32)
    # tuned on random operands: indices up to 7 into two values
    mod = load_tuned(tune={**TUNE, "picked": {"ERRFIX_BLOCK": [16, 32]}})
    expect("tune_reference_fails", mod.picked, x, at, outs=outs)
    structured = lambda shapes, attributes: [  # noqa: E731
        np.ones(shapes[0].shape, np.float32),
        np.zeros(shapes[1].shape, np.int32),
    ]
    given = jaxcc.Autotune(ERRFIX_BLOCK=[16, 32], tune_inputs=structured)  # as told
    mod = load_tuned(tune={**TUNE, "picked": given})
    np.testing.assert_allclose(mod.picked(x, at, outs=outs), x[at])


@case("benchmark_no_call_run")
def _(prim_module, tmp_path, env):
    prim = _primitive("errfix_benchmark_no_call_run")
    prim.def_benchmark_data(lambda *, platform: [jaxcc.BenchmarkConfig("four", args=(X,))])
    run = lambda: prim.benchmark(platform="cpu", n_warmup=1, n_runs=2)  # noqa: E731
    expect("benchmark_no_call_run", run)
    prim.def_call(lambda x: prim(x, outs=OUT, factor=2.0))  # registered with def_call(fn)
    result = run()
    assert result is not None


# -- a kernel linked against a shared library of the user's

LINKED_SOURCE = r"""
#include "jaxcc/jaxcc.h"
extern "C" float errfix_twice(float);
void twice_it(const jaxcc::Tensor& x, jaxcc::Tensor y) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = errfix_twice(in[i]);
}
"""


def load_linked(flags):
    return jaxcc.load_cpp_inline(
        NAME + "_linked", LINKED_SOURCE, functions=["twice_it"], extra_ldflags=flags
    )


@pytest.fixture(scope="module")
def user_library(tmp_path_factory):
    """The directory of liberrfixtwice.so, off the loader path."""
    import subprocess

    work = tmp_path_factory.mktemp("userlib")
    (work / "twice.c").write_text("float errfix_twice(float v) { return 2 * v; }\n")
    command = ["cc", "-shared", "-fPIC", "twice.c", "-o", "liberrfixtwice.so"]
    subprocess.run(command, cwd=work, check=True)
    return work


@case("library_not_found")
def _(user_library, tmp_path, env):
    linked = [f"-L{user_library}", "-lerrfixtwice"]
    expect("library_not_found", load_linked, linked)
    mod = load_linked([*linked, f"-Wl,-rpath,{user_library}"])  # its directory added
    np.testing.assert_allclose(mod.twice_it(X), X * 2)


@case("compile_openmp_pragma")
def _(tmp_path, env):
    import subprocess

    # The user's library was compiled with -fopenmp: its `#pragma omp` loop calls libgomp.
    (tmp_path / "omp.c").write_text(
        "float errfix_twice(float v) {\n  float r = 0;\n"
        "#pragma omp parallel for reduction(+ : r)\n"
        "  for (int i = 0; i < 2; ++i) r += v;\n  return r;\n}\n"
    )
    subprocess.run(["cc", "-fopenmp", "-fPIC", "-c", "omp.c"], cwd=tmp_path, check=True)
    subprocess.run(["ar", "rcs", "liberrfixomp.a", "omp.o"], cwd=tmp_path, check=True)
    linked = [f"-L{tmp_path}", "-lerrfixomp"]
    expect("compile_openmp_pragma", load_linked, linked)
    options = dict(functions=["twice_it"], extra_ldflags=linked, extra_cflags=["-fopenmp"])
    mod = jaxcc.load_cpp_inline(NAME + "_linked", LINKED_SOURCE, **options)  # -fopenmp passed
    np.testing.assert_allclose(mod.twice_it(X), X * 2)


@case("bundle_resource_not_dir")
def _(shared, tmp_path, env, bundle_source):
    import importlib.resources
    import zipfile

    # A package installed as a zip ships the bundle: its resources are no os.PathLike.
    good = good_bundle(bundle_source)
    with zipfile.ZipFile(tmp_path / "errfix_pkg.zip", "w") as archive:
        archive.writestr("errfix_pkg/__init__.py", "")
        for path in good.rglob("*"):
            if path.is_file():
                archive.write(path, f"errfix_pkg/bundle/{path.relative_to(good)}")
    env.syspath_prepend(str(tmp_path / "errfix_pkg.zip"))
    shipped = importlib.resources.files("errfix_pkg") / "bundle"
    assert not isinstance(shipped, os.PathLike)
    expect("bundle_resource_not_dir", jaxcc.load_library, shipped / "jaxcc-bundle.json")
    mod = jaxcc.load_library(shipped)  # the bundle directory the package ships
    np.testing.assert_allclose(mod.scale(X, factor=2.0), X * 2)


@pytest.mark.parametrize("ident", sorted(CASES))
def test_the_fix_works_as_written(ident, request, tmp_path, monkeypatch):
    fn = CASES[ident]
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    fixtures = {"tmp_path": tmp_path, "env": monkeypatch}
    kwargs = {n: fixtures[n] if n in fixtures else request.getfixturevalue(n) for n in names}
    fn(**kwargs)
