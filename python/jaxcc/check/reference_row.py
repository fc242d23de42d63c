"""check_kernel's `reference` row (decision 201): the kernel against what it should compute, a
pure-JAX function called like the kernel (its arrays and attributes, no outs) or, for an
XLACustomKernel, another of its backends by name, on the sample and every extra shape.

Without a reference nothing says the values are right: every other row compares the kernel with
itself under a transform, so the row is skipped with a sentence that says exactly that."""

from __future__ import annotations

import numpy as np

from .rows import FAILED, PASSED, SKIPPED
from .subject import Subject, first_line

# (rtol, atol) by dtype; atol is relative to the reference output's largest magnitude (at least
# 1), since a kernel and its reference usually sum in different orders.
REFERENCE_TOLERANCES = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-9, 1e-12),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-9, 1e-12),
}

NOT_CHECKED = (
    "values were not checked against anything: pass reference= (a JAX function called like "
    "the kernel: its arrays and attributes, no outs; or an XLACustomKernel backend's name)"
)


def reference_outputs(subject: Subject, arrays) -> list:
    """The reference's outputs for `arrays`, as a flat list of numpy arrays."""
    import jax

    reference = subject.reference
    if isinstance(reference, str):
        result = subject.call(*arrays, backend=reference)
    else:  # one compile per shape, not one per operation (7 shapes of a softmax: 7 s to 0.1 s)
        try:
            result = _jitted(reference, subject.attrs)(*arrays)
        except Exception:  # noqa: BLE001  # not traceable (numpy, Python control flow): eager
            result = reference(*arrays, **subject.attrs)
    return [np.asarray(o) for o in jax.tree.leaves(result)]


_JITTED: dict = {}  # (reference, attributes) -> its jit, so a second check compiles nothing


def _jitted(reference, attrs: dict):
    import jax

    try:
        key = (reference, tuple(sorted(attrs.items())))
        hash(key)
    except TypeError:  # an unhashable attribute: a jit of its own
        return jax.jit(lambda *xs: reference(*xs, **attrs))
    if key not in _JITTED:
        if len(_JITTED) > 64:
            _JITTED.clear()
        _JITTED[key] = jax.jit(lambda *xs: reference(*xs, **attrs))
    return _JITTED[key]


def _as_kernel_types(expected: list, got: list) -> list:
    """The reference's outputs in the kernel's dtypes (a JAX reference without x64 gives float32
    where the kernel returns float64); shapes are left for the comparison to report."""
    return [e.astype(g.dtype) if e.shape == g.shape else e
            for e, g in zip(expected, got, strict=False)]  # fmt: skip


def reference_row(subject: Subject, reference) -> tuple[str, str]:
    if subject.reference is None:
        return SKIPPED, NOT_CHECKED
    if isinstance(subject.reference, str) and not subject.is_primitive:
        return FAILED, (f"reference={subject.reference!r} names a backend, which only an "
                        "XLACustomKernel has; give a JAX function")  # fmt: skip
    runs = [("the sample", subject, reference)]
    runs += [(case.label, subject.at(case), None) for case in subject.cases]
    compared, notes = [], []
    for label, at, got in runs:
        try:
            got = got if got is not None else [np.asarray(o) for o in at.call(*at.fresh())]
        except Exception as e:  # noqa: BLE001  # refusing a shape is the kernel's right
            notes.append(f"{label}: the kernel raised {first_line(e)}")
            continue
        try:
            expected = reference_outputs(at, at.fresh())
        except Exception as e:  # noqa: BLE001
            if at is subject:
                return FAILED, f"the reference raised on the sample: {first_line(e)}"
            notes.append(f"{label}: the reference raised {first_line(e)}")
            continue
        expected = _as_kernel_types(expected, got)
        diff = at.difference(expected, got, f"kernel vs reference at {label}",
                             scaled=REFERENCE_TOLERANCES)  # fmt: skip
        if diff:
            return FAILED, diff
        compared.append(label)
    dtype = np.dtype(subject.declared()[0].dtype).name if subject.declared() else "float32"
    rtol, atol = REFERENCE_TOLERANCES.get(dtype, (0.0, 0.0))
    rtol = rtol if subject.rtol is None else subject.rtol
    atol = atol if subject.atol is None else subject.atol
    detail = (f"equals the reference at {len(compared)} shape(s) ({dtype}: rtol {rtol:g}, "
              f"atol {atol:g} x the largest magnitude)")  # fmt: skip
    if notes:
        detail += "; not compared: " + "; ".join(notes)
    return PASSED, detail
