"""Docs that cannot rot (issue 52 item 3): every ```python block of the README, the guide
(docs/guide/) and the reference runs, as written, in a fresh interpreter: each document's blocks in
order in one namespace (a later block uses an earlier one's names), on the session's cache. A block
that needs what CI lacks says so on the line above its fence, `<!-- skip: gpu ... -->` (run where a
GPU is present) or `<!-- skip: <reason> -->` (never run), and the reason is reported. The other
docs/*.md are reference prose whose blocks are fragments: each of their blocks must still be valid
Python.

The documents share one child interpreter (decision 240): importing JAX and jaxcc once, not once
per document, was most of this module's time. Each document still gets its own namespace, working
directory and warning filters; a document whose child died before it reported runs again alone."""

import ast
import fcntl
import json
import os
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


# The shared child: each document's program runs in a fresh namespace (the program makes its own),
# in its own working directory, under its own warning filters; its traceback, or None, goes to
# the results file as soon as it finishes, so a crash loses only the documents after it.
_SHARED_CHILD = """
import json, os, sys, traceback, warnings
programs, results_path = json.load(open(sys.argv[1])), sys.argv[2]
for name, cwd, program in programs:
    os.chdir(cwd)
    print(f"\\n===== {name} =====", flush=True)
    print(f"\\n===== {name} =====", file=sys.stderr, flush=True)
    with warnings.catch_warnings():
        try:
            exec(program, {"__name__": "__main__"})
            error = None
        except BaseException:
            error = traceback.format_exc()
            print(error, file=sys.stderr, flush=True)
    with open(results_path, "a") as results:
        results.write(json.dumps([name, error]) + "\\n")
"""


def _runnable(path: pathlib.Path):
    blocks = list(python_blocks(path))
    return blocks, [b for b in blocks if _runs_here(b[2])]


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory):
    """({document name: traceback or None}, the child's output) for every document with a
    runnable block, from one child interpreter per test session: pytest-xdist workers share one
    run through a directory they all see, the first to take its lock running the child."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's directory, above each worker's own
    work = base / "doc-blocks"
    work.mkdir(exist_ok=True)
    with open(work / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (work / "output.json").exists():
            _run_shared_child(work)
    results = (work / "results.jsonl").read_text().splitlines()
    return dict(json.loads(line) for line in results), json.loads(
        (work / "output.json").read_text()
    )


def _run_shared_child(work: pathlib.Path) -> None:
    programs = []
    for path in EXECUTED:
        _, runnable = _runnable(path)
        if runnable:
            cwd = work / path.stem
            cwd.mkdir()
            programs.append([str(path.relative_to(ROOT)), str(cwd), _program(path, runnable)])
    (work / "programs.json").write_text(json.dumps(programs))
    (work / "results.jsonl").touch()
    child = subprocess.run(
        [sys.executable, "-c", _SHARED_CHILD, str(work / "programs.json"), str(work / "results.jsonl")],
        capture_output=True, text=True, cwd=work, timeout=1200,
    )  # fmt: skip
    (work / "output.json").write_text(json.dumps({"stdout": child.stdout, "stderr": child.stderr}))


def _run_alone(path: pathlib.Path, runnable, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _program(path, runnable)],
        capture_output=True, text=True, cwd=cwd, timeout=600,
    )  # fmt: skip


def _section(output: str, name: str) -> str:
    """The part of the shared child's output that one document printed."""
    marker = f"\n===== {name} =====\n"
    return output.split(marker, 1)[1].split("\n===== ", 1)[0] if marker in output else output


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_block_runs(path, shared_run, tmp_path):
    blocks, runnable = _runnable(path)
    assert blocks or path.name == "README.md", f"{path.name} has no Python block"
    skipped = [f"line {line}: {reason}" for line, _, reason in blocks if not _runs_here(reason)]
    if not runnable:
        pytest.skip("; ".join(skipped) or "no Python block")
    name = str(path.relative_to(ROOT))
    results, child = shared_run
    if name in results:
        error, output = results[name], _section(child["stdout"], name)
        detail = error and _section(child["stderr"], name)
    else:  # the shared child died before this document reported: run it alone to see why
        alone = _run_alone(path, runnable, tmp_path)
        error, output, detail = alone.returncode != 0, alone.stdout, alone.stderr
    assert not error, (
        f"{name}: a Python block failed (skipped: {skipped or 'none'}):\n"
        f"{output[-2000:]}\n{detail[-6000:]}"
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
