#!/usr/bin/env python3
"""Proves data_ptr<T>()'s dtype rule (decision 149) against every typed `data_ptr<X>()` of
brainevent 0.3's CUDA sources, without a GPU: the compiler instantiates every stamped entry point
and checks each use against the dtype the kernel's own checks give its buffer.

brainevent's host code states each buffer's dtype before taking a typed pointer to it:
`BE_CHECK(x.dtype() == E)` where E is a constant (`BE::DType::Int32`), a trait of the same
template parameter (`ValueTraits<ValueT>::dtype`, `TensorDType<ValueT>::value`), a template
parameter (`DType`), a local `const BE::DType` computed from one, or another buffer's dtype; or it
binds X from the buffer's own dtype (`BE_DISPATCH_*(x.dtype(), X, ...)`), whose bindings
dtype_view_test.cc proves accepted. For each use this script finds that statement in the file's
text, then writes a copy of the file in which the use reads

    (::jaxcc_audit::Expect<X, (E)>::ok, x.data_ptr<X>())

(same line, so the compiler's line numbers are the file's), and compiles it with nvcc. `Expect`
static_asserts `jaxcc::dtype_view_accepts<X>(E)` in every instantiation the macros stamp out, so
the compiler, not this script, resolves X and E for each of them. Uses whose dtype statement it
cannot find are listed as unpaired and fail the audit.

    python scripts/brainevent_dtype_audit.py [--jobs N] [--keep DIR] [FILE.cu ...]

Prints one line per file and exits 1 when any use is refused, unpaired or a file does not
compile. Needs brainevent 0.3.0, jaxcc and nvcc (no GPU). tests/test_brainevent_dtype_audit.py
runs it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

AUDIT_HEADER = """\
// jaxcc dtype audit (scripts/brainevent_dtype_audit.py): each typed data_ptr<X>() below is
// checked against the dtype the kernel's own checks give its buffer.
#include "brainevent/common.h"
#include "jaxcc/dtype_view.h"
namespace jaxcc_audit {
template <class X, ::jaxcc::DType D>
struct Expect {
  static_assert(::jaxcc::dtype_view_accepts<X>(D),
                "JAXCC_DTYPE_AUDIT: data_ptr<X>() on a buffer of dtype D is refused by the rule");
  static constexpr bool ok = true;
};
}  // namespace jaxcc_audit
#line 1
"""

USE = re.compile(r"\b(\w+)\s*\.\s*data_ptr\s*<")
DISPATCH_ONE = re.compile(r"\b(?:BE|JAXCC)_DISPATCH_\w+\s*\(\s*(\w+)\s*\.\s*dtype\(\)\s*,\s*(\w+)")
DISPATCH_PAIR = re.compile(
    r"\bBE_DISPATCH_\w*PAIR\w*\s*\(\s*(\w+)\s*\.\s*dtype\(\)\s*,\s*(\w+)\s*\.\s*dtype\(\)\s*,"
    r"\s*(\w+)\s*,\s*(\w+)"
)


# nvcc's note on a failed Expect: the instantiation (X, D) and the line of the use.
REFUSED = re.compile(r"Expect<X, D> \[with X=([^,\]]+), D=([\w:]+)\]\" at line (\d+)")


@dataclasses.dataclass
class Use:
    line: int
    tensor: str
    type: str
    how: str  # "checked" (Expect inserted), "dispatch" (bound by the buffer's dtype), "untyped"
    dtypes: list[str] = dataclasses.field(default_factory=list)


def balanced(text: str, start: int, open_: str, close: str) -> int:
    """Index just past the `close` matching the `open_` at text[start]."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError(f"unbalanced {open_}{close} at offset {start}")


def flatten(expr: str) -> str:
    return " ".join(expr.replace("\\\n", " ").split())


def expression_after(text: str, pos: int) -> str:
    """The operand that starts at text[pos]: up to a depth-0 &&, ||, ), ',', ';' or <<."""
    depth = 0
    i = pos
    while i < len(text):
        c = text[i]
        two = text[i : i + 2]
        if depth == 0 and (two in ("&&", "||", "<<") or c in "),;"):
            break
        if c in "(<[":
            # `<` opens a template argument list only after an identifier (ValueTraits<ValueT>).
            if c != "<" or re.match(r"\w", text[i - 1] if i else " "):
                depth += 1
        elif c in ")>]" and depth > 0:
            depth -= 1
        i += 1
    return flatten(text[pos:i])


def dtype_statements(text: str, tensor: str) -> list[tuple[int, list[str]]]:
    """Where the text compares `tensor.dtype()` with something: (offset, [E, ...]); a
    condition `t.dtype() == A || t.dtype() == B` gives both."""
    found = []
    pattern = re.compile(r"\b" + re.escape(tensor) + r"\s*\.\s*dtype\(\)\s*==\s*")
    for m in pattern.finditer(text):
        found.append((m.start(), [expression_after(text, m.end())]))
    # Merge the operands of one `||` chain (statements a few characters apart on one check).
    merged: list[tuple[int, list[str]]] = []
    for offset, exprs in found:
        if merged and "||" in text[merged[-1][0] : offset] and offset - merged[-1][0] < 200:
            between = text[merged[-1][0] : offset]
            if ";" not in between:
                merged[-1][1].extend(exprs)
                continue
        merged.append((offset, exprs))
    return merged


def local_constant(text: str, name: str, before: int) -> str | None:
    """The initializer of the last `const BE::DType name = ...;` before `before`."""
    pattern = re.compile(r"const\s+(?:BE|jaxcc)::DType\s+" + re.escape(name) + r"\s*=\s*")
    best = None
    for m in pattern.finditer(text, 0, before):
        best = m
    if best is None:
        return None
    end = text.index(";", best.end())
    return flatten(text[best.end() : end])


# What resolve() returns for a buffer whose dtype is another buffer's, which a dispatch binds X
# from: X is then that dtype's own type.
DISPATCHED = ["dispatch"]


def resolve(text: str, tensor: str, at: int, core: str = "", depth: int = 0) -> list[str] | None:
    """The dtype expressions the kernel's checks give `tensor` for a use at `at`: the nearest
    statement before the use, else the nearest after it (checks in the macro that calls a
    launcher defined above it). DISPATCHED when the statement equates it with a buffer whose
    dtype a dispatch binds `core` (the use's type) from."""
    statements = dtype_statements(text, tensor)
    if not statements or depth > 4:
        return None
    before = [s for s in statements if s[0] < at]
    offset, exprs = before[-1] if before else statements[0]
    resolved = []
    for expr in exprs:
        other = re.fullmatch(r"(\w+)\s*\.\s*dtype\(\)", expr)
        if other:
            if core and dispatch_bound(text, other.group(1), core):
                if len(exprs) == 1:
                    return DISPATCHED
                return None
            inner = resolve(text, other.group(1), offset, core, depth + 1)
            if inner is DISPATCHED:
                return None if len(exprs) > 1 else DISPATCHED
            if inner is None:
                return None
            resolved.extend(inner)
            continue
        if re.fullmatch(r"[a-z_]\w*", expr):  # a local variable: its initializer
            value = local_constant(text, expr, offset)
            if value is None:
                return None
            expr = f"({value})"
        resolved.append(expr)
    return resolved


def dispatch_bound(text: str, tensor: str, type_name: str) -> bool:
    for m in DISPATCH_ONE.finditer(text):
        if m.group(1) == tensor and m.group(2) == type_name:
            return True
    for m in DISPATCH_PAIR.finditer(text):
        if (m.group(1), m.group(3)) == (tensor, type_name):
            return True
        if (m.group(2), m.group(4)) == (tensor, type_name):
            return True
    return False


def core_type(type_text: str) -> str:
    words = [w for w in type_text.split() if w not in ("const", "volatile", "typename")]
    return " ".join(words)


def rewrite(text: str) -> tuple[str, list[Use]]:
    """The audit copy of a source and what it found for each typed use."""
    uses: list[Use] = []
    out = []
    last = 0
    for m in USE.finditer(text):
        open_at = m.end() - 1
        close = balanced(text, open_at, "<", ">")
        type_text = flatten(text[open_at + 1 : close - 1])
        if not text[close:].lstrip().startswith("()"):
            continue
        call_end = text.index(")", close) + 1
        line = text.count("\n", 0, m.start()) + 1
        tensor = m.group(1)
        core = core_type(type_text)
        if core == "void":
            uses.append(Use(line, tensor, type_text, "untyped"))
            continue
        if dispatch_bound(text, tensor, core):
            uses.append(Use(line, tensor, type_text, "dispatch"))
            continue
        exprs = resolve(text, tensor, m.start(), core)
        if exprs is DISPATCHED:
            uses.append(Use(line, tensor, type_text, "dispatch"))
            continue
        if exprs is None:
            uses.append(Use(line, tensor, type_text, "unpaired"))
            continue
        uses.append(Use(line, tensor, type_text, "checked", exprs))
        checks = "".join(f"::jaxcc_audit::Expect<{type_text}, ({e})>::ok, " for e in exprs)
        out.append(text[last : m.start()])
        out.append(f"((void)({checks}0), {text[m.start() : call_end]})")
        last = call_end
    out.append(text[last:])
    return "".join(out), uses


@dataclasses.dataclass
class FileResult:
    rel: str
    uses: list[Use]
    ok: bool
    detail: str


def nvcc_command(rel: str, root: pathlib.Path, source: pathlib.Path, output: str) -> list[str]:
    import brainevent_corpus
    import jax

    import jaxcc

    _, kwargs = brainevent_corpus.load_options(rel, ["8.0"], str(root / "include"))
    nvcc = jaxcc._core.find_nvcc([]).path  # noqa: SLF001 - the search a build uses
    # The working tree's headers: the rule under audit is this checkout's, whatever jaxcc the
    # interpreter has installed.
    include = [
        str(HERE.parent / "include"),
        *kwargs["extra_include_paths"],
        str((root / rel).parent),
    ]
    return [
        nvcc,
        "-std=c++17",
        "-arch=sm_80",
        "-c",
        "-diag-suppress=174",  # the inserted `(void)(Expect<...>::ok, 0)` has no effect
        *[f"-I{d}" for d in include],
        f"-I{jax.ffi.include_dir()}",
        *kwargs.get("extra_cuda_cflags", []),
        str(source),
        "-o",
        output,
    ]


def audit_file(root: pathlib.Path, rel: str, keep: pathlib.Path | None) -> FileResult:
    import brainevent_corpus

    text = (root / rel).read_text(encoding="utf-8")
    audited, uses = rewrite(text)
    missing = brainevent_corpus.UNBUILDABLE.get(rel)
    if missing:
        # brainevent ships this file without a header it includes: no build of it exists, on
        # brainevent or on jaxcc, so none of its operators can run (scripts/brainevent_corpus.py).
        return FileResult(rel, uses, True, f"unbuildable anywhere (lacks {missing}); not compiled")
    unpaired = [u for u in uses if u.how == "unpaired"]
    if unpaired:
        listed = ", ".join(f"{u.tensor}.data_ptr<{u.type}>() at line {u.line}" for u in unpaired)
        return FileResult(rel, uses, False, f"no dtype statement found for {listed}")
    if not any(u.how == "checked" for u in uses):
        return FileResult(rel, uses, True, "nothing to compile")
    with tempfile.TemporaryDirectory() as tmp:
        where = keep or pathlib.Path(tmp)
        source = where / (rel.replace("/", "__"))
        source.write_text(AUDIT_HEADER + audited, encoding="utf-8")
        command = nvcc_command(rel, root, source, str(where / (source.name + ".o")))
        result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode == 0:
        return FileResult(rel, uses, True, "")
    log = result.stdout + result.stderr
    refused = sorted(set(REFUSED.findall(log)), key=lambda r: int(r[2]))
    if refused:
        listed = "; ".join(f"line {line}: data_ptr<{x}>() on {d}" for x, d, line in refused)
        return FileResult(rel, uses, False, f"refused by the rule: {listed}")
    return FileResult(rel, uses, False, f"the audit copy did not compile:\n{log[-6000:]}")


def typed_sources(root: pathlib.Path) -> list[str]:
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.cu")
        if re.search(r"data_ptr\s*<", p.read_text(encoding="utf-8"))
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="paths relative to the brainevent package")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=pathlib.Path, help="write the audit copies here")
    args = parser.parse_args(argv)
    import brainevent

    root = pathlib.Path(brainevent.__file__).parent
    files = args.files or typed_sources(root)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda rel: audit_file(root, rel, args.keep), files))
    totals = {"checked": 0, "dispatch": 0, "untyped": 0, "unpaired": 0}
    uncompiled = 0  # paired uses of a file no one can build
    failed = 0
    for r in results:
        counts = {k: sum(u.how == k for u in r.uses) for k in totals}
        if r.detail.startswith("unbuildable"):
            uncompiled += counts["checked"]
            counts_total = dict(counts, checked=0)
        else:
            counts_total = counts
        for k, v in counts_total.items():
            totals[k] += v
        status = "ok" if r.ok else "FAIL"
        failed += not r.ok
        print(
            f"{status:4} {r.rel}: {counts['checked']} checked against the kernel's dtype "
            f"statements, {counts['dispatch']} bound by a dtype dispatch, {counts['untyped']} "
            f"data_ptr<void>" + (f"\n     {r.detail}" if r.detail else "")
        )
    print(
        f"total: {len(files)} files, {totals['checked']} uses checked in every instantiation, "
        f"{totals['dispatch']} dispatch-bound, {totals['untyped']} untyped, "
        f"{totals['unpaired']} unpaired, {uncompiled} in an unbuildable file; "
        f"{failed} file(s) failed"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
