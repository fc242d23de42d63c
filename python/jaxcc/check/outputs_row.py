"""check_kernel's `outputs` row: each output has the declared shape and dtype, every element is
written, and nothing in it depends on what the buffer held before the call; at the sample and
at every extra shape (cases.py).

The call runs under jit with each output's buffer donated from a filled array, so the kernel
writes into the filled buffer (decision 154a). Two large fills: an element equal to its fill both
times was not written, or was read and written back (`out[i] += x[i]` absorbs a small x into
-1.2e30); two small fills then tell the two apart. An element that differs between fills without
equalling them was read before it was written (decision 202)."""

from __future__ import annotations

import numpy as np

from .rows import FAILED, PASSED
from .subject import Subject, first_line, on_device

# Fill patterns for the output buffers: two no sane result equals, then two small ones.
_SENTINELS = {"f": (-1.2345e30, 9.8765e29, 3.0, -5.0), "i": (-0x5A5A5A5A, 0x25252525, 3, -5),
              "u": (0xA5, 0x5A, 3, 5), "b": (True, False, True, False),
              "c": (-1.2345e30 + 1j, 9.8765e29 - 1j, 3 + 1j, -5 - 1j)}  # fmt: skip


def _sentinel(dtype, which: int):
    import ml_dtypes  # noqa: F401  # bfloat16 as a numpy dtype

    dtype = np.dtype(dtype)
    kind = "f" if dtype.name == "bfloat16" else dtype.kind
    value = _SENTINELS.get(kind, (1, 2, 3, 4))[which]
    if kind in "iu":
        info = np.iinfo(dtype)
        value = int(np.clip(value, info.min, info.max)) if kind == "i" else value % (info.max + 1)
        if which == 1 and value == _sentinel(dtype, 0):
            value = info.max
    if kind == "f" and dtype.itemsize <= 2 and which < 2:
        value = (-1000.0, 3000.0)[which]  # within float16/bfloat16 range
    return np.asarray(value).astype(dtype)


_COMPILED: dict = {}  # (jitted program, output types, input shapes) -> compiled or None


def _program(subject: Subject):
    """The kernel under jit with each output's buffer a donated extra parameter, compiled once
    per shape (`keep_unused=True` keeps the otherwise unused parameter, and JAX aliases a
    donated input to the output of its type: the kernel then writes into the donated buffer);
    None where XLA did not alias them (the lowering has no `tf.aliasing_output`)."""
    import jax

    types = subject.declared()
    n = len(types)

    def make(call):
        def program(*operands):
            return call(*operands[n:])

        return jax.jit(program, donate_argnums=tuple(range(n)), keep_unused=True)

    jitted = subject.transformed(f"donated {n}", make)
    key = (jitted, repr(types), tuple((a.shape, a.dtype.str) for a in subject.host_args))
    if key not in _COMPILED:  # kept across checks, as the jitted program is
        fills = [on_device(np.zeros(t.shape, t.dtype)) for t in types]
        lowered = jitted.lower(*fills, *subject.fresh())
        aliased = lowered.as_text().count("tf.aliasing_output") >= n
        if len(_COMPILED) > 256:
            _COMPILED.clear()
        _COMPILED[key] = (lowered.compile(), types) if aliased else None
    return _COMPILED[key]


def _run_into(subject: Subject, which: int, program):
    """The compiled `program` with every output's buffer filled with fill `which`; None where
    XLA did not consume the donated buffers."""

    compiled, types = program
    # Made on the host and transferred: `jnp.full` compiles a broadcast per shape.
    fills = [on_device(np.full(t.shape, _sentinel(t.dtype, which), t.dtype)) for t in types]
    outputs = compiled(*fills, *subject.fresh())
    if not all(f.is_deleted() for f in fills):
        return None
    return [np.asarray(o) for o in outputs]


def _differs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    same = a == b
    if a.dtype.kind in "fc" or a.dtype.name == "bfloat16":
        wide = np.complex128 if a.dtype.kind == "c" else np.float64
        same |= np.isnan(a.astype(wide)) & np.isnan(b.astype(wide))
    return ~same


def _first(where: np.ndarray) -> tuple:
    return tuple(int(j) for j in np.argwhere(where)[0])


def _written(subject: Subject):
    """(problems, masks) of one shape; None when XLA did not alias the outputs."""
    program = _program(subject)
    if program is None:
        return None
    runs = [_run_into(subject, 0, program), _run_into(subject, 1, program)]
    if runs[0] is None or runs[1] is None:
        return None
    declared = subject.declared()
    problems, masks, small, again = [], [], None, None
    for i, (a, b, t) in enumerate(zip(*runs, declared, strict=True)):
        like_fill = (a == _sentinel(t.dtype, 0)) & (b == _sentinel(t.dtype, 1))
        read_first = _differs(a, b) & ~like_fill
        if read_first.any():  # or not deterministic: the first fill once more tells them apart
            again = again or _run_into(subject, 0, program)
            read_first &= ~_differs(a, again[i])
        unwritten = np.zeros_like(like_fill)
        if like_fill.any():
            small = small or [_run_into(subject, 2, program), _run_into(subject, 3, program)]
            c, d = small[0][i], small[1][i]
            unwritten = like_fill & (c == _sentinel(t.dtype, 2)) & (d == _sentinel(t.dtype, 3))
            read_first |= like_fill & ~unwritten
        bad = unwritten | read_first
        masks.append(~bad if bad.any() else None)
        if unwritten.any():
            problems.append(
                f"output {i + 1}: {int(unwritten.sum())} of {unwritten.size} elements never "
                f"written (first at index {_first(unwritten)})"
            )
        if read_first.any():
            problems.append(
                f"output {i + 1}: {int(read_first.sum())} of {read_first.size} elements depend "
                f"on the output's initial contents (first at index {_first(read_first)}): read "
                "before written, e.g. accumulated into without being zeroed first"
            )
    return problems, masks


def _types_problem(got: list, declared: list) -> str | None:
    if len(got) != len(declared):
        return f"{len(got)} outputs, {len(declared)} declared"
    for i, (r, t) in enumerate(zip(got, declared, strict=True)):
        if r.shape != tuple(t.shape) or r.dtype != np.dtype(t.dtype):
            return (f"output {i + 1} is {r.dtype}{list(r.shape)}, declared "
                    f"{np.dtype(t.dtype)}{list(t.shape)}")  # fmt: skip
    return None


def outputs_row(subject: Subject, reference) -> tuple[str, str]:
    problem = _types_problem(reference, subject.declared())
    if problem:
        return FAILED, problem
    found = _written(subject)
    if found is None:
        return (
            PASSED,
            "shapes and dtypes match; XLA did not alias the outputs (unwritten not checked)",
        )
    problems, masks = found
    # Later rows compare only what the kernel writes: the rest is whatever memory held.
    subject.masks = masks if any(m is not None for m in masks) else None
    if problems:
        return FAILED, "; ".join(problems)
    checked, notes = [], []
    for case in subject.cases:
        at = subject.at(case)
        try:
            got = [np.asarray(o) for o in at.call(*at.fresh())]
            found = _written(at)
        except Exception as e:  # noqa: BLE001  # refusing a shape is the kernel's right
            notes.append(f"{case.label}: raised {first_line(e)}")
            continue
        problem = _types_problem(got, at.declared())
        if problem:
            return FAILED, f"at {case.label}: {problem}"
        if found is None:
            continue
        problems, masks = found
        subject.case_masks[case.label] = masks
        if problems:
            return FAILED, f"at {case.label}: " + "; ".join(problems)
        checked.append(case.label)
    detail = "shapes and dtypes match; every element written (two sentinel fills)"
    if checked:
        detail += f"; also at {', '.join(checked)} ({subject.cases_note})"
    elif subject.cases_note:
        detail += f"; only the sample's shapes: {subject.cases_note}"
    if notes:
        detail += "; not checked: " + "; ".join(notes)
    return PASSED, detail
