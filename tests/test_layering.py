"""The code's layout rules, checked: ARCHITECTURE.md's stage table is the include and link graph
(scripts/check_layering.py), python/jaxcc has no import cycles, and no source file is long."""

import ast
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHECK = ROOT / "scripts" / "check_layering.py"
MAX_LINES = 400
EXTENSION_MODULES = {"jaxcc._core"}  # built by CMake: no .py file to find


def run_check(root: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(CHECK), "--root", str(root)], capture_output=True, text=True
    )


def test_architecture_table_is_the_include_and_link_graph():
    result = run_check(ROOT)
    assert result.returncode == 0, result.stderr


def copy_layout(tmp_path: pathlib.Path) -> pathlib.Path:
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "src", copy / "src", ignore=shutil.ignore_patterns("corpus"))
    shutil.copy(ROOT / "ARCHITECTURE.md", copy / "ARCHITECTURE.md")
    return copy


def test_check_fails_on_an_undeclared_include(tmp_path):
    copy = copy_layout(tmp_path)
    planted = copy / "src" / "cache" / "planted.cc"
    planted.write_text('#include "pipeline/load_module.h"\n')
    result = run_check(copy)
    assert result.returncode == 1
    assert "cache/ includes pipeline, not in its ARCHITECTURE.md row" in result.stderr
    # cache/ sits before pipeline/ in the table: a dependency upwards is named too, once declared.
    text = (copy / "ARCHITECTURE.md").read_text()
    (copy / "ARCHITECTURE.md").write_text(
        text.replace("of the size cap) | util |", "of the size cap) | util, pipeline |")
    )
    planted.parent.joinpath("CMakeLists.txt").write_text(
        "jaxcc_add_stage(cache DEPS jaxcc_util jaxcc_pipeline)\n"
    )
    result = run_check(copy)
    assert result.returncode == 1
    assert "cache/ depends on pipeline/, which the table lists after it" in result.stderr


def test_check_fails_on_a_stale_table_row(tmp_path):
    copy = copy_layout(tmp_path)
    cmake = copy / "src" / "build" / "CMakeLists.txt"
    cmake.write_text("jaxcc_add_stage(build DEPS jaxcc_util jaxcc_toolchain)\n")
    result = run_check(copy)
    assert result.returncode == 1
    assert "build/ CMakeLists.txt links toolchain, not in its ARCHITECTURE.md row" in result.stderr


def module_imports(path: pathlib.Path, package_root: pathlib.Path) -> set[str]:
    """jaxcc modules `path` imports anywhere in it (lazy imports inside functions included)."""
    parts = list(path.relative_to(package_root.parent).with_suffix("").parts)
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("jaxcc"))
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if not target.startswith("jaxcc"):
                continue
            for alias in node.names:
                # `from . import _core` imports a module; `from .x import name` imports from one.
                sub = package_root.parent / (target.replace(".", "/") + "/" + alias.name)
                is_module = (
                    sub.with_suffix(".py").exists()
                    or (sub / "__init__.py").exists()
                    or f"{target}.{alias.name}" in EXTENSION_MODULES
                )
                found.add(f"{target}.{alias.name}" if is_module else target)
    found.discard(".".join(parts))
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if state.get(nxt) is None:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if state.get(node) is None:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def package_graph(package_root: pathlib.Path) -> dict[str, set[str]]:
    graph = {}
    for path in package_root.rglob("*.py"):
        parts = list(path.relative_to(package_root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        # A package's __init__ re-exports its modules; edges into a package mean its __init__.
        graph[".".join(parts)] = module_imports(path, package_root)
    return graph


def package_cycle(package_root: pathlib.Path) -> list[str] | None:
    """An import cycle of the package, through its __init__ modules too: an __init__'s edges to
    its submodules are kept, so a submodule that imports a name from its own package (its
    __init__) while that __init__ imports it closes a cycle (issue 25: those edges were dropped
    and such a cycle went unseen)."""
    graph = package_graph(package_root)
    assert "jaxcc.load.loaders" in graph and graph["jaxcc.load.loaders"], (
        "the scan found no imports"
    )
    return find_cycle(graph)


def test_python_package_has_no_import_cycles():
    cycle = package_cycle(ROOT / "python" / "jaxcc")
    assert cycle is None, " -> ".join(cycle)


def test_a_cycle_through_a_package_init_is_seen(tmp_path):
    package = tmp_path / "jaxcc"
    shutil.copytree(ROOT / "python" / "jaxcc", package, ignore=shutil.ignore_patterns("*.so"))
    assert package_cycle(package) is None
    # custom_kernel/__init__ imports .primitive; primitive now takes a name from that __init__.
    primitive = package / "custom_kernel" / "primitive.py"
    primitive.write_text(primitive.read_text() + "\nfrom . import XLACustomKernel  # planted\n")
    cycle = package_cycle(package)
    assert cycle is not None
    assert "jaxcc.custom_kernel" in cycle and "jaxcc.custom_kernel.primitive" in cycle, cycle


def test_cycle_finder_finds_a_planted_cycle(tmp_path):
    package = tmp_path / "jaxcc"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("def f():\n    from .a import thing\n")
    cycle = find_cycle(package_graph(package))
    assert cycle in (["jaxcc.a", "jaxcc.b", "jaxcc.a"], ["jaxcc.b", "jaxcc.a", "jaxcc.b"])


def test_no_source_file_is_longer_than_the_limit():
    long_files = []
    for folder in ("src", "include", "python"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".cc", ".h", ".cu", ".cuh", ".py"} and "testdata" not in path.parts:
                lines = path.read_text(errors="replace").count("\n")
                if lines > MAX_LINES:
                    long_files.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not long_files, f"split these (limit {MAX_LINES} lines): {long_files}"


PYTHON_CHECK = ROOT / "scripts" / "check_python_layering.py"


def run_python_check(root: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(PYTHON_CHECK), "--root", str(root)], capture_output=True, text=True
    )


def copy_python_layout(tmp_path: pathlib.Path) -> pathlib.Path:
    copy = tmp_path / "repo"
    shutil.copytree(
        ROOT / "python" / "jaxcc",
        copy / "python" / "jaxcc",
        ignore=shutil.ignore_patterns("*.so", "__pycache__"),
    )
    shutil.copy(ROOT / "ARCHITECTURE.md", copy / "ARCHITECTURE.md")
    return copy


def test_architecture_python_table_is_the_import_graph():
    result = run_python_check(ROOT)
    assert result.returncode == 0, result.stderr


def test_python_check_fails_on_a_planted_upward_import(tmp_path):
    copy = copy_python_layout(tmp_path)
    discovery = copy / "python" / "jaxcc" / "environment" / "discovery.py"
    # A lazy import inside a function counts as much as one at the top.
    discovery.write_text(
        discovery.read_text() + "\n\ndef planted():\n    from jaxcc.tune import store\n"
    )
    result = run_python_check(copy)
    assert result.returncode == 1
    assert "environment/discovery.py" in result.stderr
    assert "imports jaxcc.tune.store: environment sits below tune" in result.stderr
    assert "environment imports tune, not in its ARCHITECTURE.md row" in result.stderr


def test_python_check_fails_on_an_import_of_the_package_root(tmp_path):
    copy = copy_python_layout(tmp_path)
    options = copy / "python" / "jaxcc" / "build" / "options.py"
    options.write_text(options.read_text() + "\nfrom jaxcc import get_cache_dir  # planted\n")
    result = run_python_check(copy)
    assert result.returncode == 1
    assert "build/options.py" in result.stderr
    assert "imports the package root (a name taken from jaxcc/__init__.py)" in result.stderr
    # A module taken from the root's namespace is no import of the root.
    options.write_text(options.read_text().replace("import get_cache_dir", "import _core"))
    assert run_python_check(copy).returncode == 0


def test_python_check_fails_on_a_stale_row_and_an_unplaced_module(tmp_path):
    copy = copy_python_layout(tmp_path)
    architecture = copy / "ARCHITECTURE.md"
    text = architecture.read_text()
    row = "| foundation, environment, sharding |"  # call/'s row
    assert text.count(row) == 1
    architecture.write_text(text.replace(row, "| foundation, environment, sharding, check |"))
    (copy / "python" / "jaxcc" / "_planted.py").write_text("")
    result = run_python_check(copy)
    assert result.returncode == 1
    assert "call may import check, which the table lists after it" in result.stderr
    assert "call's ARCHITECTURE.md row names check, which it never imports" in result.stderr
    assert "python/jaxcc/_planted.py belongs to no stage" in result.stderr
