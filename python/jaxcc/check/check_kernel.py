"""jaxcc.check_kernel: one kernel checked against everything JAX does to it, one row per check
(docs/usage.md, "Checking a kernel: check_kernel"; decision 154).

The rows live in rows.py (one process, one device), outputs_row.py (outputs written),
reference_row.py (against reference=), dtypes_row.py (the kernel's other dtypes), grads.py
(derivatives), bounds.py (the debug build's guard zones) and deploy_rows.py (meshes, export,
bundles, backends); cases.py finds the extra shapes the outputs, bounds and reference rows run
at. This file runs the rows in order and keeps the report."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np

from jaxcc.errors import CallError, KernelCheckError

from . import bounds, cases, deploy_rows, dtypes_row, grads, outputs_row, reference_row
from . import rows as row_checks
from .rows import FAILED, PASSED, SKIPPED
from .subject import Subject, first_line

# Every row, in the order it runs. The rows after `determinism` compare two ways of running the
# kernel, which means nothing when one way does not repeat: they are skipped then. `bounds`
# rebuilds the module under the debug profile (one -O0 compile per version of a module, cached).
CHECKS = {
    "outputs": outputs_row.outputs_row,
    "inputs": row_checks.inputs_row,
    "bounds": bounds.bounds_row,
    "determinism": row_checks.determinism_row,
    "reference": reference_row.reference_row,
    "dtypes": dtypes_row.dtypes_row,
    "jit": row_checks.jit_row,
    "vmap": row_checks.vmap_row,
    "jvp": grads.jvp_row,
    "transpose": grads.transpose_row,
    "sharding": deploy_rows.sharding_row,
    "export": deploy_rows.export_row,
    "bundle": deploy_rows.bundle_row,
    "backends": deploy_rows.backends_row,
    "threads": row_checks.threads_row,
    "cuda_graph": row_checks.cuda_graph_row,
    "stream": row_checks.stream_row,
}
_NEED_DETERMINISM = frozenset(CHECKS) - {"outputs", "inputs", "bounds", "determinism"}


@dataclasses.dataclass(frozen=True)
class CheckRow:
    name: str
    status: str  # "passed", "failed" or "skipped"
    detail: str


@dataclasses.dataclass
class KernelReport:
    """The rows of one check_kernel call; `ok` when none failed. `str(report)` is a table."""

    kernel: str
    rows: list[CheckRow]

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def failed(self) -> list[CheckRow]:
        return [r for r in self.rows if r.status == FAILED]

    def __getitem__(self, name: str) -> CheckRow:
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(f"no row {name!r}; rows: {', '.join(r.name for r in self.rows)}")

    def __str__(self) -> str:
        width = max([len(r.name) for r in self.rows] + [5])
        lines = [f"check_kernel({self.kernel}): {'ok' if self.ok else 'FAILED'}"]
        lines += [f"  {r.name:<{width}}  {r.status:<7}  {r.detail}" for r in self.rows]
        return "\n".join(lines)


def _kind(fn) -> str:
    """The kind of `fn`: "kernel" (a loaded kernel function), "primitive" (an XLACustomKernel)
    or "callable" (any other JAX function: a jax.custom_vjp / custom_jvp around kernels, a
    function calling them); CallError for anything else."""
    from jaxcc.call.kernel_function import KernelFunction

    if isinstance(fn, KernelFunction):
        return "kernel"
    if hasattr(fn, "kernel_table") and hasattr(fn, "primitive"):
        return "primitive"
    if callable(fn):
        return "callable"
    raise CallError(
        f"check_kernel: fn must be a loaded kernel function (jaxcc.load_cpp_inline(...).name), "
        f"a jaxcc.XLACustomKernel or a JAX function calling kernels, got {type(fn).__name__}"
    )


def _selected(checks, skip) -> list[str]:
    names = list(CHECKS) if checks is None else list(checks)
    for name in [*names, *(skip or ())]:
        if name not in CHECKS:
            raise CallError(
                f"check_kernel: unknown check {name!r}; the checks: {', '.join(CHECKS)}"
            )
    return [n for n in names if n not in set(skip or ())]


def check_kernel(
    fn,
    *args,
    outs=None,
    checks: Iterable[str] | None = None,
    skip: Iterable[str] = (),
    atol: float | None = None,
    rtol: float | None = None,
    backend: str | None = None,
    reference=None,
    samples=None,
    extra_shapes: bool = True,
    **attrs,
) -> KernelReport:
    """Runs `fn(*args, outs=outs, **attrs)` and checks it as JAX uses it; returns the report.

    `fn` is a loaded kernel function, a `jaxcc.XLACustomKernel` (which needs `outs`) or any
    JAX function of arrays (a `jax.custom_vjp`/`custom_jvp` around kernels, a function calling
    them; no `outs`), whose derivatives are checked in the modes it supports.
    `checks=` picks rows (default: all of CHECKS), `skip=` drops some; `rtol=`/`atol=` replace the
    per-dtype tolerances of the comparisons (exact for integers; `determinism` is always
    bitwise); `backend=` is the XLACustomKernel backend calls use and `backends` compares with
    (default: the platform's default). `reference=` is what the kernel must compute: a JAX
    function called like the kernel (its arrays and attributes, no outs), or an XLACustomKernel
    backend's name. `outs` may be a function of the input arrays; the outputs, bounds and
    reference rows also run at smaller shapes along the dimensions known to be free
    (`extra_shapes=False`: only the sample) and at each of `samples=[args, ...]`. Rows that
    cannot apply are `skipped` with the reason."""
    kind = _kind(fn)
    is_primitive = kind == "primitive"
    if is_primitive and outs is None:
        raise CallError("check_kernel: an XLACustomKernel needs outs=... (as its call does)")
    if kind == "callable" and outs is not None:
        raise CallError(
            "check_kernel: outs= is for kernels; a JAX function's outputs are what it returns "
            "(leave outs out)"
        )
    if reference is not None and not (callable(reference) or isinstance(reference, str)):
        raise CallError(
            "check_kernel: reference= must be a function called like the kernel (its arrays and "
            f"attributes) or an XLACustomKernel backend's name, got {type(reference).__name__}"
        )
    selected = _selected(checks, skip)
    host = [np.array(a, copy=True) for a in args]
    outs_fn = outs if callable(outs) and not hasattr(outs, "shape") else None
    if outs_fn is not None:
        outs = outs_fn(*host)
    subject = Subject(fn, host, outs, attrs, is_primitive, rtol, atol, backend,
                      outs_fn=outs_fn, reference=reference,
                      is_callable=kind == "callable")  # fmt: skip
    _add_cases(subject, extra_shapes, samples)
    report = KernelReport(subject.name, [])
    # `bounds` first, on the debug build: a kernel that writes outside its outputs must not run
    # its own build, whose write would land in memory XLA or the allocator owns; one that reads
    # outside an input would give every row a finding of chance (decision 220).
    if "dtypes" in selected:
        try:
            dtypes_row.prestart(subject)  # the x64 child imports JAX while the rows run
        except Exception:  # noqa: BLE001  # the row itself says what is wrong
            pass
    first = {"bounds": _run_row("bounds", subject, None)} if "bounds" in selected else {}
    if subject.writes_outside:
        why = "it writes outside an output (see bounds); its own build would corrupt memory"
        if subject.reads_outside:
            why = ("it reads outside an input (see bounds); its own build would read memory XLA "
                   "owns, and every row's finding would be that read's")  # fmt: skip
        report.rows += [CheckRow(n, SKIPPED, why) if n not in first else first[n]
                        for n in selected]  # fmt: skip
        return report
    try:
        reference = [np.asarray(o) for o in subject.call(*subject.fresh())]
    except Exception as e:  # noqa: BLE001  # the report says the sample call fails
        report.rows.append(CheckRow("call", FAILED, f"the sample call raised {first_line(e)}"))
        report.rows += [CheckRow(n, SKIPPED, "the sample call fails") for n in selected]
        return report
    deterministic = True
    for name in selected:
        if name in _NEED_DETERMINISM and not deterministic:
            report.rows.append(CheckRow(name, SKIPPED, "not deterministic (see determinism)"))
            continue
        row = first.get(name) or _run_row(name, subject, reference)
        if name == "determinism" and row.status == FAILED:
            deterministic = False
        report.rows.append(row)
    return report


def _add_cases(subject: Subject, extra_shapes: bool, samples) -> None:
    """The extra shapes of the outputs, bounds and reference rows (cases.py)."""
    found, note = [], "extra_shapes=False"
    if extra_shapes:
        try:
            found, note = cases.derived_cases(subject)
        except Exception as e:  # noqa: BLE001  # e.g. an outs function refusing a size
            note = f"no extra shapes: deriving them raised {first_line(e)}"
    subject.cases = found + cases.user_cases(subject, samples)
    subject.cases_note = note


def _run_row(name: str, subject: Subject, reference) -> CheckRow:
    try:
        status, detail = CHECKS[name](subject, reference)
    except Exception as e:  # noqa: BLE001  # a check that cannot run is a finding
        status, detail = FAILED, f"raised {first_line(e)}"
    return CheckRow(name, status, detail)


def assert_kernel_ok(fn, *args, **kwargs) -> KernelReport:
    """check_kernel, raising KernelCheckError listing every failed row (for tests)."""
    report = check_kernel(fn, *args, **kwargs)
    if not report.ok:
        failed = "\n".join(f"  {r.name}: {r.detail}" for r in report.failed)
        raise KernelCheckError(
            f"check_kernel({report.kernel}): {len(report.failed)} check(s) failed:\n{failed}\n"
            f"{report}",
            report,
        )
    return report


__all__ = ["CHECKS", "CheckRow", "KernelReport", "PASSED", "FAILED", "SKIPPED",
           "assert_kernel_ok", "check_kernel"]  # fmt: skip
