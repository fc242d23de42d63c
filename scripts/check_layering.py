#!/usr/bin/env python3
"""Checks that ARCHITECTURE.md's stage table is the real dependency graph of src/.

For every stage folder src/<stage>/ three lists must agree:
  - the stages whose headers its files include (`#include "<stage>/..."`),
  - the jaxcc_<stage> libraries its CMakeLists.txt links (DEPS of jaxcc_add_stage or
    jaxcc_add_fuzzer, or target_link_libraries of the _core extension),
  - the "depends on" column of its row in ARCHITECTURE.md,
and every dependency must come earlier in the table (stages are listed lowest first).

Usage: scripts/check_layering.py [--root DIR]; exits 1 and lists each disagreement.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)/', re.MULTILINE)
TABLE_ROW = re.compile(r"^\|\s*`([a-z_]+)/`\s*\|[^|]*\|\s*([^|]*)\|\s*$", re.MULTILINE)
CMAKE_CALL = re.compile(
    r"(jaxcc_add_stage|jaxcc_add_fuzzer|target_link_libraries)\s*\(([^)]*)\)", re.DOTALL
)
LIBRARY = re.compile(r"\bjaxcc_([a-z_]+)\b")


def table_dependencies(architecture: str) -> dict[str, list[str]]:
    """Stage -> dependencies, in table order, from the rows "| `stage/` | ... | deps |"."""
    table = {}
    for stage, deps in TABLE_ROW.findall(architecture):
        deps = re.sub(r"\([^)]*\)", "", deps)  # notes in parentheses are prose
        table[stage] = [d.strip(" `") for d in deps.split(",") if d.strip(" `—-")]
    return table


def included_stages(stage_dir: pathlib.Path, stages: set[str]) -> set[str]:
    found = set()
    for path in sorted(stage_dir.glob("*.[ch]*")):
        found.update(m for m in INCLUDE.findall(path.read_text(errors="replace")) if m in stages)
    found.discard(stage_dir.name)
    return found


def linked_stages(cmake: pathlib.Path, stages: set[str]) -> set[str]:
    if not cmake.exists():
        return set()
    text = re.sub(r"#[^\n]*", "", cmake.read_text())
    linked = set()
    for command, args in CMAKE_CALL.findall(text):
        if command == "target_link_libraries" and "${" in args.split()[0]:
            continue  # the helper functions' own generic calls
        words = args.split()
        if command != "target_link_libraries":
            # jaxcc_add_stage(<stage> DEPS a b LIBS x): only what follows DEPS, up to LIBS.
            if "DEPS" not in words:
                continue
            words = words[words.index("DEPS") + 1 :]
            words = words[: words.index("LIBS")] if "LIBS" in words else words
        linked.update(m for w in words for m in LIBRARY.findall(w) if m in stages)
    linked.discard(cmake.parent.name)
    return linked


def check(root: pathlib.Path) -> list[str]:
    src = root / "src"
    stages = {p.name for p in src.iterdir() if p.is_dir() and (p / "CMakeLists.txt").exists()}
    table = table_dependencies((root / "ARCHITECTURE.md").read_text())
    problems = []
    for stage in sorted(stages - set(table)):
        problems.append(f"src/{stage}/ has no row in ARCHITECTURE.md's stage table")
    for stage in sorted(set(table) - stages):
        problems.append(f"ARCHITECTURE.md lists `{stage}/`, which is not a folder of src/")
    order = list(table)
    for stage in sorted(stages & set(table)):
        includes = included_stages(src / stage, stages)
        links = linked_stages(src / stage / "CMakeLists.txt", stages)
        declared = set(table[stage])
        for name, found in (("includes", includes), ("CMakeLists.txt links", links)):
            missing = sorted(found - declared)
            extra = sorted(declared - found)
            if missing:
                problems.append(
                    f"{stage}/ {name} {', '.join(missing)}, not in its ARCHITECTURE.md row"
                )
            if extra:
                problems.append(
                    f"{stage}/'s ARCHITECTURE.md row names {', '.join(extra)}, which it never "
                    f"{'includes' if name == 'includes' else 'links'}"
                )
        for dep in sorted(declared & set(order)):
            if order.index(dep) > order.index(stage):
                problems.append(f"{stage}/ depends on {dep}/, which the table lists after it")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent)
    root = pathlib.Path(parser.parse_args().root)
    problems = check(root)
    for problem in problems:
        print(f"check_layering: {problem}", file=sys.stderr)
    if problems:
        print(
            "check_layering: make the code, src/*/CMakeLists.txt and ARCHITECTURE.md agree",
            file=sys.stderr,
        )
        return 1
    print(f"check_layering: ARCHITECTURE.md matches the include and link graph of {root / 'src'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
