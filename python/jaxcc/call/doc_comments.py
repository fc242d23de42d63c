"""The comment an author wrote above a C++ function (`///` or `//` lines, or a `/** */` block),
read from the request's source text by the function's name. The core does not keep comments, so
this runs in Python, only when a function's `__doc__` or stub is asked for (never on a load)."""

from __future__ import annotations

import re

# Words that can stand before `name(` in a statement that calls `name` rather than declares it.
_NOT_A_TYPE = {"return", "else", "case", "throw", "co_return", "co_yield", "new", "delete", "do"}
_HEAD = re.compile(r'^[\w\s:<>,*&"\[\]]*$')  # what a declaration's head may hold before the name
_ANNOTATION = re.compile(r"^\s*//+\s*@(BE|jaxcc)\b")  # `// @BE name ...`: jaxcc's, not prose


def doc_comment(text: str, name: str) -> str:
    """The comment directly above the declaration or definition of `name` in `text` ('' when
    there is none). A definition's comment wins over a declaration's; jaxcc's own annotation
    lines (`// @BE`, `// @jaxcc`) are left out."""
    lines = text.splitlines()
    found = ""
    for match in re.finditer(rf"(?<![\w.>:]){re.escape(name)}\s*\(", text):
        line_no = text.count("\n", 0, match.start())
        head = lines[line_no][: match.start() - _line_start(text, match.start())]
        first = _declaration_start(lines, line_no, head)
        if first is None:
            continue
        comment = _comment_above(lines, first)
        if comment and (not found or _is_definition(text, match.end())):
            found = comment
            if _is_definition(text, match.end()):
                break
    return found


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def _declaration_start(lines: list[str], line_no: int, head: str) -> int | None:
    """The first line of the declaration whose name sits on `line_no` after `head`, or None when
    `name(` there is a call (no type before it, or an operator, or a keyword like `return`)."""
    words = head
    first = line_no
    # A return type on the lines above: `static inline void\nname(` or `template <...>\nvoid`.
    while first > 0:
        above = lines[first - 1].strip()
        if not above or above.startswith(("//", "/*", "*", "#")) or above.endswith((";", "{", "}")):
            break
        if above.endswith("*/"):
            break
        words = above + " " + words
        first -= 1
    words = words.replace('extern "C"', " ").strip()
    if not words or not _HEAD.match(words):
        return None
    tokens = re.findall(r"\w+", words)
    if not tokens or tokens[-1] in _NOT_A_TYPE or tokens[0] in _NOT_A_TYPE:
        return None
    return first


def _comment_above(lines: list[str], first: int) -> str:
    """The comment ending on the line right above `first`: a `/* */` block or `//` lines."""
    at = first - 1
    while at >= 0 and _ANNOTATION.match(lines[at]):
        at -= 1  # `// @BE name` between the comment and the function
    if at < 0:
        return ""
    if lines[at].strip().endswith("*/"):
        block = []
        while at >= 0:
            block.insert(0, lines[at])
            if "/*" in lines[at]:
                break
            at -= 1
        return _clean_block("\n".join(block))
    comment = []
    while at >= 0 and lines[at].strip().startswith("//"):
        if not _ANNOTATION.match(lines[at]):
            comment.insert(0, re.sub(r"^\s*//+!?<? ?", "", lines[at]).rstrip())
        elif comment:
            break  # an annotation between two comments: only the nearer one is the doc
        at -= 1
    return _dedent(comment)


def _clean_block(block: str) -> str:
    body = block.strip()
    body = re.sub(r"^/\*+!? ?", "", body)
    body = re.sub(r"\*+/$", "", body)
    lines = [re.sub(r"^\s*\* ?", "", line).rstrip() for line in body.splitlines()]
    return _dedent(lines)


def _dedent(lines: list[str]) -> str:
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return "\n".join(line[cut:] for line in lines)


def _is_definition(text: str, after_paren: int) -> bool:
    """Whether the parameter list opened just before `after_paren` is followed by a body."""
    depth = 1
    at = after_paren
    while at < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[at], 0)
        at += 1
    rest = text[at : at + 200].lstrip()
    # Qualifiers (`noexcept`, `const`, attributes) may stand between `)` and the body.
    rest = re.sub(r"^(noexcept|const|override|final|__attribute__\s*\(\(.*?\)\)|\s)*", "", rest)
    return rest.startswith("{")
