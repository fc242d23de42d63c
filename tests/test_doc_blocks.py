"""Docs that cannot rot (issue 52 item 3): every ```python block of the README, the guide
(docs/guide/) and the reference runs, as written, in a fresh interpreter: one child per document,
its blocks in order in one namespace (a later block uses an earlier one's names), on the
session's cache. A block that needs what CI lacks says so on the line above its fence,
`<!-- skip: gpu ... -->` (run where a GPU is present) or `<!-- skip: <reason> -->` (never run),
and the reason is reported. The other docs/*.md are reference prose whose blocks are fragments:
each of their blocks must still be valid Python."""

import ast
import pathlib
import re
import subprocess
import sys

import pytest
from conftest import has_gpu

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXECUTED = [
    ROOT / "README.md",
    *sorted((ROOT / "docs" / "guide").glob("*.md")),
    ROOT / "docs" / "reference.md",
    *([ROOT / "docs" / "performance.md"] if (ROOT / "docs" / "performance.md").exists() else []),
]
FENCE = re.compile(r"^```python\n(.*?)^```", re.M | re.S)
SKIP = re.compile(r"<!--\s*skip:\s*(.*?)\s*-->\s*\n$", re.S)


def python_blocks(path: pathlib.Path):
    """(first line number, source, skip reason or None) of each ```python block."""
    text = path.read_text()
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start(1)) + 1
        skip = SKIP.search(text[max(0, match.start() - 300) : match.start()])
        yield line, match.group(1), skip.group(1) if skip else None


def _runs_here(reason: str | None) -> bool:
    return reason is None or (reason.startswith("gpu") and has_gpu())


def _program(path: pathlib.Path, blocks) -> str:
    """One script running each block compiled under the document's name, its lines at their
    lines in the document, so a traceback points at the document's own line."""
    name = str(path.relative_to(ROOT))
    calls = [
        f"exec(compile({chr(10) * (line - 1) + source!r}, {name!r}, 'exec'), namespace)"
        for line, source, _ in blocks
    ]
    return "\n".join(["namespace = {'__name__': '__main__'}", *calls])


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_block_runs(path, tmp_path):
    blocks = list(python_blocks(path))
    assert blocks or path.name == "README.md", f"{path.name} has no Python block"
    runnable = [b for b in blocks if _runs_here(b[2])]
    skipped = [f"line {line}: {reason}" for line, _, reason in blocks if not _runs_here(reason)]
    if not runnable:
        pytest.skip("; ".join(skipped) or "no Python block")
    result = subprocess.run(
        [sys.executable, "-c", _program(path, runnable)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, (
        f"{path.relative_to(ROOT)}: a Python block failed (skipped: {skipped or 'none'}):\n"
        f"{result.stdout[-2000:]}\n{result.stderr[-6000:]}"
    )


@pytest.mark.parametrize(
    "path",
    [p for p in sorted((ROOT / "docs").glob("*.md")) if p not in EXECUTED],
    ids=lambda p: p.name,
)
def test_every_python_block_of_the_other_docs_is_valid_python(path):
    bad = []
    for line, source, _ in python_blocks(path):
        # A signature listing `f(a, *, b=None)` is a call with its bare `*` marker taken out.
        source = re.sub(r",\s*\*\s*,", ",", source)
        try:
            ast.parse(source)
        except SyntaxError as e:
            bad.append(f"{path.name}:{line + (e.lineno or 1) - 1}: {e.msg}")
    assert not bad, bad


def test_the_block_reader_finds_markers_and_lines(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("# t\n\n```python\nx = 1\n```\n\n<!-- skip: gpu (needs CUDA) -->\n"
                   "```python\nimport nothing_here\n```\n\n```bash\nexit 1\n```\n")  # fmt: skip
    blocks = list(python_blocks(doc))
    assert [(line, reason) for line, _, reason in blocks] == [(4, None), (9, "gpu (needs CUDA)")]
    program = _program(ROOT / "README.md", [(4, "raise ValueError('at four')\n", None)])
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert 'README.md", line 4' in result.stderr and "at four" in result.stderr
