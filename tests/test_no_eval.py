"""Nothing in jaxcc evaluates strings as code or unpickles data, and the C++ core starts
processes only with posix_spawn (argv lists, no shell).

The Python check reads every module of the package with `ast`; the C++ check reads every
non-test source under src/ and include/ with comments and string literals removed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "jaxcc"

EVALUATING_BUILTINS = {"eval", "exec", "compile", "execfile"}
UNSAFE_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle"}
# Calls whose argument names code to import rather than being code; each one is justified here.
ALLOWED_DYNAMIC_IMPORTS = {
    # `jaxcc benchmark --module mypkg.ops` imports the module the user named: no string is
    # evaluated, and importing a module the user chose is what the option is for.
    ("cli/benchmark.py", "import_module"),
    # `jaxcc build --module pkg.kernels` imports the module the user named, recording its loads.
    ("cli/build.py", "import_module"),
    # `jaxcc check mypkg.ops` imports the module the user named, to read its JAXCC_CHECKS.
    ("cli/check.py", "import_module"),
    # `jaxcc tune mypkg.ops --shapes ...` imports the module the user named, which loads its
    # tuned kernels.
    ("cli/tune.py", "import_module"),
    # `jaxcc stubs mypkg.ops` imports the module the user named, to write its functions' stubs.
    ("cli/stubs.py", "import_module"),
}


def dotted(node: ast.AST) -> str:
    """`a.b.c` for a Name/Attribute chain, else ""."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def is_literal_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def keyword_is_true(call: ast.Call, name: str) -> bool:
    return any(
        k.arg == name and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords
    )


def problems_in_python(path: Path, tree: ast.AST) -> tuple[list[str], int]:
    """(findings, number of calls inspected) for one module."""
    found, calls = [], 0

    def report(node, what):
        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {what}")

    unsafe = UNSAFE_MODULES
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in unsafe:
                    report(node, f"imports {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in unsafe:
                report(node, f"imports from {node.module}")
        if not isinstance(node, ast.Call):
            continue
        calls += 1
        name = dotted(node.func)
        last = name.rsplit(".", 1)[-1]
        if name in EVALUATING_BUILTINS or name in {f"builtins.{b}" for b in EVALUATING_BUILTINS}:
            report(node, f"calls {name}()")
        elif name.split(".")[0] in unsafe:
            report(node, f"calls {name}()")
        elif name == "__import__" and not (node.args and is_literal_string(node.args[0])):
            report(node, "calls __import__() on a computed name")
        elif last == "import_module" and not (node.args and is_literal_string(node.args[0])):
            if ("/".join(path.parts[-2:]), "import_module") not in ALLOWED_DYNAMIC_IMPORTS:
                report(node, "imports a module named by a computed string")
        elif name in {"yaml.load", "yaml.unsafe_load", "yaml.full_load"}:
            report(node, f"calls {name}() (use yaml.safe_load)")
        elif last in {"load", "loads"} and keyword_is_true(node, "allow_pickle"):
            report(node, f"calls {name}(allow_pickle=True)")
        elif name in {"os.system", "os.popen"} or name.startswith("os.exec"):
            report(node, f"calls {name}() (a shell or a process image replacement)")
        elif name.startswith("subprocess.") and keyword_is_true(node, "shell"):
            report(node, f"calls {name}(shell=True)")
    return found, calls


def test_no_python_module_evaluates_strings_or_unpickles():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) >= 20, files  # the walk really found the package
    findings, calls = [], 0
    for path in files:
        more, n = problems_in_python(path, ast.parse(path.read_text(), filename=str(path)))
        findings += more
        calls += n
    print(f"\nno-eval: {len(files)} Python files, {calls} calls checked, {len(findings)} findings")
    assert not findings, "\n".join(findings)


def test_the_checker_catches_what_it_looks_for():
    bad = (
        "import pickle\nfrom marshal import loads\n"
        "eval('1')\nexec(code)\ncompile(src, 'f', 'exec')\nbuiltins.eval(x)\n"
        "__import__(name)\nimportlib.import_module(name)\nyaml.load(text)\n"
        "np.load(f, allow_pickle=True)\nos.system('ls')\nsubprocess.run(cmd, shell=True)\n"
        "pickle.loads(b)\n"
    )
    found, _ = problems_in_python(PACKAGE / "fake.py", ast.parse(bad))
    assert len(found) == 13, "\n".join(found)
    fine = "re.compile('x')\n__import__('json')\nyaml.safe_load(t)\nsubprocess.run(['ls'])\n"
    assert problems_in_python(PACKAGE / "fake.py", ast.parse(fine))[0] == []


# Comments and string/char literals, so that prose such as "fork() without exec" is not code.
_CPP_NOISE = re.compile(
    r'//[^\n]*|/\*.*?\*/|R"(?P<d>[^(\s]*)\(.*?\)(?P=d)"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
    re.S,
)
_PROCESS_CALLS = re.compile(
    r"\b(?:std::)?(system|popen|fork|vfork|execl|execle|execlp|execv|execve|execvp|execvpe)\s*\("
)


_CRASH_EXECVE = "::execve(tool, argv, environ);"


def _line_of(statement: str) -> int:
    """The line of the crash report's one execve (the only process start outside subprocess.cc)."""
    text = (ROOT / "src" / "loader" / "crash_report.cc").read_text()
    assert text.count(statement) == 1, "the crash report's execve changed: review it"
    return text[: text.index(statement)].count("\n") + 1


def cpp_sources() -> list[Path]:
    files = [p for d in ("src", "include") for p in (ROOT / d).rglob("*") if p.is_file()]
    return sorted(
        p
        for p in files
        if p.suffix in {".cc", ".h", ".cu", ".cuh"}
        and not p.stem.endswith("_test")  # tests fork and run shell commands on purpose
        and "fuzz" not in p.relative_to(ROOT).parts  # fuzzing harnesses are not the core
        and "testdata" not in p.parts
    )


def test_the_cpp_core_spawns_processes_only_with_posix_spawn():
    files = cpp_sources()
    assert len(files) >= 40, files
    findings, spawners = [], []
    for path in files:
        code = _CPP_NOISE.sub(" ", path.read_text(errors="replace"))
        for match in _PROCESS_CALLS.finditer(code):
            line = code.count("\n", 0, match.start()) + 1
            findings.append(f"{path.relative_to(ROOT)}:{line}: calls {match.group(1)}()")
        if re.search(r"\bposix_spawnp?\s*\(", code):
            spawners.append(str(path.relative_to(ROOT)))
    print(
        f"\nno-shell: {len(files)} C++ files checked, posix_spawn in {spawners}, "
        f"{len(findings)} findings"
    )
    # The one exception: a kernel's crash report, in a process that is already dying, runs
    # addr2line by its absolute path with a fixed argv (no shell, no user text) from a raw fork,
    # because posix_spawn is not async-signal-safe (decision 150b). Exactly one execve, there.
    expected = ["src/loader/crash_report.cc:" + str(_line_of(_CRASH_EXECVE)) + ": calls execve()"]
    assert findings == expected, "\n".join(findings)
    assert spawners == ["src/util/subprocess.cc"], spawners
