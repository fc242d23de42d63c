#!/usr/bin/env python3
"""Checks that ARCHITECTURE.md's Python stage table is the real import graph of python/jaxcc.

The table ("### Python stages", lowest first) names every stage of the package: the two rows of
loose modules (`foundation: ...` and `facade: ...`, their files listed) and one row per
subpackage (`jaxcc/<stage>/`). Its "may import" column is exactly the set of other stages the
stage's modules import, lazy imports inside functions included, and:
  - every module of the package belongs to a row;
  - every stage imports only stages listed before it (lower stages never import higher ones);
  - nothing inside the package imports the facade (the package root `jaxcc/__init__.py`, or
    `jaxcc.__main__`): `from jaxcc import get_cache_dir` inside jaxcc is refused,
    `from jaxcc import _core` (a module) is not.

Usage: scripts/check_python_layering.py [--root DIR]; exits 1 and lists each disagreement.
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import re
import sys

HEADING = "### Python stages"
ROW = re.compile(r"^\|([^|]*)\|[^|]*\|([^|]*)\|\s*$")
FOLDER = re.compile(r"^`jaxcc/([a-z_]+)/`$")
LOOSE = re.compile(r"^(foundation|facade):(.*)$")
FACADE = "facade"
EXTENSION_MODULES = {"_core"}  # built by CMake: no .py file in the source tree


def read_table(architecture: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(stage -> declared imports, in table order; loose module name -> its stage)."""
    if HEADING not in architecture:
        raise SystemExit(f"check_python_layering: ARCHITECTURE.md has no '{HEADING}' table")
    lines = architecture.split(HEADING, 1)[1].splitlines()
    table: dict[str, list[str]] = {}
    loose: dict[str, str] = {}
    started = False
    for line in lines:
        match = ROW.match(line)
        if not match:
            if started and not line.strip().startswith("|"):
                break
            continue
        started = True
        cell, imports = match.group(1).strip(), match.group(2).strip()
        folder, named = FOLDER.match(cell), LOOSE.match(cell)
        if folder:
            stage = folder.group(1)
        elif named:
            stage = named.group(1)
            for module in re.findall(r"`([A-Za-z_]+)(?:\.py)?`", named.group(2)):
                loose[module] = stage
        else:
            continue  # the header and separator rows
        imports = re.sub(r"\([^)]*\)", "", imports)  # notes in parentheses are prose
        table[stage] = [d.strip(" `") for d in imports.split(",") if d.strip(" `—-")]
    return table, loose


def stage_of(module: str, loose: dict[str, str]) -> str | None:
    """`jaxcc.build.options` -> "build"; `jaxcc.errors` -> "foundation"; None if unplaced."""
    parts = module.split(".")
    if len(parts) == 1:
        return FACADE  # the package root itself
    return loose.get(parts[1]) if len(parts) == 2 and parts[1] in loose else parts[1]


def imports_of(path: pathlib.Path, package_root: pathlib.Path) -> list[tuple[int, str, bool]]:
    """(line, imported module, whether a name was taken from the package root) per import."""
    parts = list(path.relative_to(package_root.parent).with_suffix("").parts)
    package = parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("jaxcc")]
            found += [(node.lineno, name, False) for name in names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if target != "jaxcc" and not target.startswith("jaxcc."):
                continue
            for alias in node.names:
                sub = package_root.parent / target.replace(".", "/") / alias.name
                is_module = (
                    sub.with_suffix(".py").exists()
                    or (sub / "__init__.py").exists()
                    or (target == "jaxcc" and alias.name in EXTENSION_MODULES)
                )
                if is_module:
                    found.append((node.lineno, f"{target}.{alias.name}", False))
                else:
                    found.append((node.lineno, target, target == "jaxcc"))
    return found


def check(root: pathlib.Path) -> list[str]:
    package_root = root / "python" / "jaxcc"
    table, loose = read_table((root / "ARCHITECTURE.md").read_text())
    order = list(table)
    problems = []
    for stage, declared in table.items():
        for dep in declared:
            if dep not in table:
                problems.append(f"the row of {stage} names {dep}, which is not a stage")
            elif order.index(dep) >= order.index(stage):
                problems.append(f"{stage} may import {dep}, which the table lists after it")
    used: dict[str, set[str]] = {stage: set() for stage in table}
    for path in sorted(package_root.rglob("*.py")):
        rel = path.relative_to(package_root)
        module = ".".join(("jaxcc",) + rel.with_suffix("").parts).removesuffix(".__init__")
        where = f"python/jaxcc/{rel.as_posix()}"
        stage = stage_of(module, loose)
        if stage not in table:
            problems.append(f"{where} belongs to no stage of ARCHITECTURE.md's Python table")
            continue
        for line, target, from_root in imports_of(path, package_root):
            target_stage = stage_of(target, loose)
            if target_stage == FACADE and stage != FACADE:
                what = "the package root" if target == "jaxcc" else target
                problems.append(
                    f"{where}:{line} imports {what}"
                    + (" (a name taken from jaxcc/__init__.py)" if from_root else "")
                    + "; import the module that defines it instead"
                )
            elif target_stage is None or target_stage not in table:
                problems.append(f"{where}:{line} imports {target}, which belongs to no stage")
            elif target_stage != stage:
                used[stage].add(target_stage)
                if stage != FACADE and order.index(target_stage) > order.index(stage):
                    problems.append(
                        f"{where}:{line} imports {target}: {stage} sits below {target_stage}"
                    )
    for stage in order:
        if stage == FACADE:
            continue
        declared = set(table[stage])
        for dep in sorted(used[stage] - declared):
            problems.append(f"{stage} imports {dep}, not in its ARCHITECTURE.md row")
        for dep in sorted(declared - used[stage]):
            problems.append(f"{stage}'s ARCHITECTURE.md row names {dep}, which it never imports")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent)
    root = pathlib.Path(parser.parse_args().root)
    problems = check(root)
    for problem in problems:
        print(f"check_python_layering: {problem}", file=sys.stderr)
    if problems:
        print(
            "check_python_layering: make python/jaxcc and ARCHITECTURE.md's Python table agree",
            file=sys.stderr,
        )
        return 1
    print("check_python_layering: ARCHITECTURE.md matches the import graph of python/jaxcc")
    return 0


if __name__ == "__main__":
    sys.exit(main())
