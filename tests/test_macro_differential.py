"""Differential test of jaxcc's reading of macro-stamped entry points against `g++ -E`
(issue 37, point 4; decision 147). Hypothesis draws sources whose entry point's tensor
qualifier and attribute type are chosen by `#if`/`#ifdef`/`#elif` groups (unsigned arithmetic,
`defined`, `defined` produced by a macro, nested macros) and `-D`/`-U` flags; jaxcc's inferred
signature must equal the one in the preprocessed declaration, except where a condition names a
macro neither the flags nor the source define (a header's, as far as jaxcc knows): there jaxcc
may refuse (a by-value tensor), or guess a type the compiler then proves (checked by a real load,
which must raise SignatureError when the guess is wrong)."""

import re
import shutil
import subprocess
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxcc
from jaxcc import _core
from jaxcc.build import options
from jaxcc.errors import SignatureError

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="needs g++")

NAMES = ["A", "B", "C"]  # candidate macros; one never defined anywhere is "unknown" to jaxcc
LITERALS = ["0", "1", "2", "-1", "0u", "1u", "3U", "0xFFFFFFFFFFFFFFFF", "-1u", "(0u - 1)"]
BINARY = ["+", "-", "*", "<", ">", "<=", ">=", "==", "!=", "&&", "||", "&", "|", "^"]
TYPES = {"float": "float32", "double": "float64", "int32_t": "int32", "int64_t": "int64"}


def expressions():
    atom = st.one_of(
        st.sampled_from(LITERALS),
        st.sampled_from(NAMES),
        st.sampled_from([f"defined({n})" for n in NAMES] + [f"defined {n}" for n in NAMES]),
        st.sampled_from([f"HAS_{n}" for n in NAMES]),  # `defined` produced by a macro
        st.sampled_from([f"TWICE({n})" for n in NAMES]),  # a function-like macro
    )

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(BINARY), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            st.tuples(st.sampled_from(["-", "!", "~"]), inner).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
            st.tuples(inner, st.sampled_from(["<<", ">>"]), st.sampled_from(["0", "1", "3"])).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
        )

    return st.recursive(atom, extend, max_leaves=5)


@st.composite
def cases(draw):
    defined_in_source = draw(st.dictionaries(st.sampled_from(NAMES), st.sampled_from(LITERALS)))
    flags = []
    for name in NAMES:
        choice = draw(st.sampled_from(["none", "plain", "value", "undef"]))
        if choice == "plain":
            flags.append(f"-D{name}")
        elif choice == "value":
            flags.append(f"-D{name}={draw(st.sampled_from(LITERALS))}")
        elif choice == "undef":
            flags += ["-U", name]
    lines = ['#include "brainevent/common.h"']
    for name, value in defined_in_source.items():
        guard = draw(st.booleans())  # `#ifndef X` / `#define X`: a -D must win
        lines += (
            [f"#ifndef {name}", f"#define {name} {value}", "#endif"]
            if guard
            else [
                f"#undef {name}",
                f"#define {name} {value}",
            ]
        )
    lines += [f"#define HAS_{n} defined({n})" for n in NAMES]
    lines += ["#define TWICE(x) ((x) + (x))"]
    types = list(TYPES)
    lines += [
        f"#if {draw(expressions())}",
        f"#define REAL {draw(st.sampled_from(types))}",
        f"#elif {draw(expressions())}",
        f"#define REAL {draw(st.sampled_from(types))}",
        "#else",
        f"#define REAL {draw(st.sampled_from(types))}",
        "#endif",
        f"#if {draw(expressions())}",
        "#define INQ const",
        "#else",
        "#define INQ",
        "#endif",
        "#define SCALAR(x) REAL x",
    ]
    by_value = draw(st.booleans())
    ref = "" if by_value else "&"
    lines += [
        "#define FFI(SUFFIX) \\",
        f"void k##SUFFIX(INQ BE::Tensor{ref} x, BE::Tensor& out, SCALAR(alpha)) {{}}",
        "// @BE k_a",
        "FFI(_a)",
        "",
    ]
    return "\n".join(lines), flags


def preprocessed_signature(source, flags):
    """(kinds, attr type) of `k_a` as g++ -E sees it, or None when g++ rejects the source."""
    text = source.replace('#include "brainevent/common.h"', "")
    run = subprocess.run(
        [GXX, "-E", "-P", "-x", "c++", "-std=c++17", *flags, "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        return None
    match = re.search(r"void\s+k_a\s*\(([^)]*)\)", run.stdout)
    assert match, run.stdout
    params = [p.strip() for p in match.group(1).split(",")]
    x = params[0]
    kind = "arg" if re.match(r"const\b", x) else "ret"
    scalar = params[2].rsplit(" ", 1)[0].strip()
    return [kind, "ret", f"attr.alpha:{TYPES[scalar]}"]


def jaxcc_reading(source, flags):
    request = options.make_request(
        "test",
        name="t_diff",
        platform="cpu",
        sources=[("<module>", source)],
        functions=None,
        extra_cflags=flags,
    )
    try:
        spec = _core.resolve_specs(request)[0]
    except SignatureError as e:
        return e
    tokens = []
    for p in spec.params:
        tokens.append(f"attr.{p.name}:{p.attr_type}" if p.kind == "attr" else p.kind)
    return tokens


def names_unknown_to_jaxcc(source, flags):
    """Candidate macros that neither a flag nor an unconditional `#undef`/`#define` of the
    source decides: jaxcc cannot know them (a header might define them, and the `#define` under
    `#ifndef X` is then only possibly live)."""
    known = set(re.findall(r"-[DU]\s*([A-Z])\b", " ".join(flags)))
    known |= set(re.findall(r"#undef ([A-Z])\b", source))
    return [n for n in NAMES if n not in known]


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cases())
def test_jaxcc_reads_macro_stamped_signatures_as_gxx_preprocesses_them(case):
    source, flags = case
    expected = preprocessed_signature(source, flags)
    if expected is None:
        return  # g++ rejects the conditions (e.g. a shift it calls invalid): nothing to compare
    got = jaxcc_reading(source, flags)
    unknown = names_unknown_to_jaxcc(source, flags)
    if got == expected:
        return
    # Only a condition on a macro jaxcc cannot know may make it refuse or guess...
    assert unknown, f"jaxcc read {got}, g++ -E {expected}\nflags {flags}\n{source}"
    if isinstance(got, SignatureError):
        assert "is a tensor taken by value" in str(got), str(got)
        return
    # ...and a guess must be one the compiler can prove wrong: a by-value tensor's role (x, the
    # first parameter) never is, so it must be right even where the rest was guessed (a wrong
    # scalar type beside it is the proof's to catch at load).
    if "BE::Tensor x" in source:
        assert got[0] == expected[0], f"guessed a by-value role: {got} vs {expected}\n{source}"
    with pytest.raises(SignatureError, match="jaxcc signature proof"):
        jaxcc.load_cpp_inline(f"t_diff_{uuid.uuid4().hex[:8]}", source, extra_cflags=flags)
