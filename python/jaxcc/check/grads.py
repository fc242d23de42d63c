"""check_kernel's derivative rows, for an XLACustomKernel with a JVP rule or any JAX function
(a jax.custom_vjp / custom_jvp around kernels: decision 205).

`jvp`: forward mode against central finite differences of the kernel itself. `transpose`:
reverse mode against forward mode, <ct, J t> == <J^T ct, t>. Together they cover
`jax.test_util.check_grads(order=1, modes=("fwd", "rev"))`: reverse mode is right when it is the
transpose of a right forward mode. Split this way a wrong JVP fails `jvp` alone (its transpose is
consistent with it) and a wrong transpose rule fails `transpose` alone. A function with no
forward mode (a custom_vjp) has `transpose` check reverse mode against finite differences:
<ct, (f(x + h t) - f(x - h t)) / 2h> == <J^T ct, t>."""

from __future__ import annotations

import numpy as np

from .rows import FAILED, PASSED, SKIPPED
from .subject import Subject, first_line

# Per dtype: (finite-difference step, rtol, atol), as loose as jax.test_util's defaults.
_GRAD_TOLERANCES = {"float16": (1e-1, 1e-1, 1e-1), "bfloat16": (1e-1, 1e-1, 1e-1),
                    "float32": (1e-3, 2e-2, 2e-3), "float64": (1e-6, 1e-5, 1e-7)}  # fmt: skip


def _rules(subject: Subject) -> tuple[bool, bool]:
    from jaxcc._jax_compat import ad

    primitive = getattr(subject.fn, "primitive", None)
    return primitive in ad.primitive_jvps, primitive in ad.primitive_transposes


def _setup(subject: Subject):
    """(function of the floating inputs to the floating outputs, those inputs, tangents,
    cotangents, tolerances) or a skip reason."""
    import jax

    if not subject.is_primitive and not subject.is_callable:
        return ("a loaded kernel function has no derivative rules (make it an XLACustomKernel, "
                "or check the jax.custom_vjp / custom_jvp function around it)")  # fmt: skip
    if subject.is_primitive and not _rules(subject)[0]:
        return "no JVP rule (def_jvp_rule / def_jvp_rule2)"
    args = subject.host_args
    floating = [i for i, a in enumerate(args) if a.dtype.kind == "f" or a.dtype.name == "bfloat16"]
    out_kinds = [np.dtype(t.dtype) for t in subject.declared()]
    out_float = [i for i, d in enumerate(out_kinds) if d.kind == "f" or d.name == "bfloat16"]
    if not floating or not out_float:
        return "no floating-point input or output to differentiate"

    def f(*xs):
        full = list(args)
        for i, x in zip(floating, xs, strict=True):
            full[i] = x
        outs = subject.call(*full)
        return tuple(outs[i] for i in out_float)

    rng = np.random.default_rng(0)
    primals = [args[i] for i in floating]
    tangents = [rng.standard_normal(p.shape).astype(p.dtype) for p in primals]
    cotangents = [rng.standard_normal(tuple(subject.declared()[i].shape)).astype(out_kinds[i])
                  for i in out_float]  # fmt: skip
    step, rtol, atol = _GRAD_TOLERANCES.get(primals[0].dtype.name, (1e-3, 2e-2, 2e-3))
    if subject.rtol is not None:
        rtol = subject.rtol
    if subject.atol is not None:
        atol = subject.atol
    f.inputs = floating  # the argument index of each primal
    return jax, f, primals, tangents, cotangents, (step, rtol, atol)


def _differences(hi, lo, mid, step: float, atol: float):
    """(central differences, where the function has a kink along the tangent): the forward and
    backward one-sided differences disagree by more than half their size (a smooth function's
    differ by about step * its curvature), where no finite difference is the derivative
    (decision 203)."""
    hi, lo, mid = (np.asarray(v, np.float64) for v in (hi, lo, mid))
    forward, backward = (hi - mid) / step, (mid - lo) / step
    scale = np.maximum(np.abs(forward), np.abs(backward))
    kinks = np.abs(forward - backward) > 0.5 * scale + atol
    return (hi - lo) / (2 * step), kinks


def jvp_row(subject: Subject, reference) -> tuple[str, str]:
    """Per floating input (the others' tangents zero), so the detail names the input. An input
    whose JVP is exactly zero everywhere is one its rule declares not differentiable (a None
    rule in def_jvp_rule2: a connection probability, a structural parameter), where finite
    differences measure a jump in structure: it is named in the detail, not compared."""
    setup = _setup(subject)
    if isinstance(setup, str):
        return SKIPPED, setup
    jax, f, primals, tangents, _, (step, rtol, atol) = setup
    s = np.asarray(step, primals[0].dtype)
    compared, constant, kinked = [], [], 0
    for k in range(len(tangents)):
        alone = [t if j == k else np.zeros_like(t) for j, t in enumerate(tangents)]
        where = f"input {f.inputs[k] + 1}"
        try:
            _, forward = jax.jvp(f, tuple(primals), tuple(alone))
        except Exception as e:  # noqa: BLE001
            if subject.is_callable:  # a custom_vjp has no forward mode, by design
                return SKIPPED, (f"no forward mode ({first_line(e)}); reverse mode is checked "
                                 "against finite differences in `transpose`")  # fmt: skip
            return FAILED, f"jax.jvp ({where}) raised {first_line(e)}"
        if not any(np.any(np.asarray(t)) for t in forward):
            constant.append(where)
            continue
        plus = f(*[p + s * t for p, t in zip(primals, alone, strict=True)])
        minus = f(*[p - s * t for p, t in zip(primals, alone, strict=True)])
        center = f(*primals)
        for i, (got, hi, lo, mid) in enumerate(zip(forward, plus, minus, center, strict=True)):
            numeric, kinks = _differences(hi, lo, mid, step, atol)
            got = np.asarray(got, np.float64)
            bad = ~np.isclose(got, numeric, rtol=rtol, atol=atol) & ~kinks
            kinked += int(kinks.sum())
            if bad.any():
                at = tuple(int(j) for j in np.argwhere(bad)[0])
                ratio = got[at] / numeric[at] if numeric[at] else float("inf")
                return FAILED, (
                    f"{where}: JVP of output {i + 1} at index {at} is {got[at]:.6g}, finite "
                    f"differences give {numeric[at]:.6g} (ratio {ratio:.4g}; "
                    f"{int(bad.sum())} of {bad.size} elements)"
                )
        compared.append(where)
    detail = f"forward mode equals finite differences (step {step:g}, rtol {rtol:g})"
    if constant:
        detail += f"; zero JVP, not compared: {', '.join(constant)}"
    if kinked:
        detail += (f"; {kinked} output element(s) left out where the one-sided differences "
                   "disagree (a kink, e.g. ReLU at 0)")  # fmt: skip
    if not compared:
        return SKIPPED, f"every floating input has a zero JVP ({', '.join(constant)})"
    return PASSED, detail


def transpose_row(subject: Subject, reference) -> tuple[str, str]:
    setup = _setup(subject)
    if isinstance(setup, str):
        return SKIPPED, setup
    jax, f, primals, tangents, cotangents, (step, rtol, atol) = setup
    has_transpose = subject.is_callable or _rules(subject)[1]
    if subject.is_callable and not _has_forward_mode(jax, f, primals, tangents):
        return _reverse_against_differences(jax, f, primals, tangents, cotangents,
                                            (step, rtol, atol))  # fmt: skip
    try:
        _, pullback = jax.vjp(f, *primals)
        backward = pullback(tuple(cotangents))
    except Exception as e:  # noqa: BLE001
        if not has_transpose:
            return SKIPPED, f"no transpose rule: reverse mode unavailable ({first_line(e)})"
        return FAILED, f"jax.vjp raised {first_line(e)}"

    def inner(xs, ys) -> float:
        return sum(float(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)))
                   for x, y in zip(xs, ys, strict=True))  # fmt: skip

    # One input at a time (the others' tangents zero): summed over inputs, a wrong rule for
    # one input can hide behind the others' terms.
    shown = []
    for i, tangent in enumerate(tangents):
        alone = [t if j == i else np.zeros_like(t) for j, t in enumerate(tangents)]
        _, forward = jax.jvp(f, tuple(primals), tuple(alone))
        lhs, rhs = inner(cotangents, forward), inner([backward[i]], [tangent])
        if not np.isclose(lhs, rhs, rtol=rtol, atol=atol):
            what = "reverse mode" if subject.is_callable else "the transpose rule"
            return FAILED, (
                f"input {f.inputs[i] + 1}: <ct, J t> = {lhs:.6g} but <J^T ct, t> = {rhs:.6g}: "
                f"{what} is not the transpose of the JVP"
            )
        shown.append(f"{lhs:.4g}")
    return PASSED, f"<ct, J t> == <J^T ct, t> per input ({', '.join(shown)})"


def _inner(xs, ys) -> float:
    return sum(float(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)))
               for x, y in zip(xs, ys, strict=True))  # fmt: skip


def _has_forward_mode(jax, f, primals, tangents) -> bool:
    try:
        jax.jvp(f, tuple(primals), tuple(tangents))
    except Exception:  # noqa: BLE001  # a custom_vjp: "can't apply forward-mode autodiff"
        return False
    return True


def _reverse_against_differences(jax, f, primals, tangents, cotangents, tolerances):
    """Reverse mode of a function without forward mode, per input: <J^T ct, t> against
    <ct, central differences along t>, output elements at a kink (decision 203) left out of
    ct."""
    step, rtol, atol = tolerances
    try:
        _, pullback = jax.vjp(f, *primals)
    except Exception as e:  # noqa: BLE001
        return SKIPPED, f"neither forward nor reverse mode ({first_line(e)})"
    shown, kinked = [], 0
    for i, tangent in enumerate(tangents):
        alone = [t if j == i else np.zeros_like(t) for j, t in enumerate(tangents)]
        s = np.asarray(step, primals[i].dtype)
        plus = f(*[p + s * t for p, t in zip(primals, alone, strict=True)])
        minus = f(*[p - s * t for p, t in zip(primals, alone, strict=True)])
        center = f(*primals)
        numeric, cts = [], []
        for hi, lo, mid, ct in zip(plus, minus, center, cotangents, strict=True):
            differences, kinks = _differences(hi, lo, mid, step, atol)
            numeric.append(differences)
            cts.append(np.where(kinks, 0, ct).astype(ct.dtype))
            kinked += int(kinks.sum())
        backward = pullback(tuple(cts))
        lhs, rhs = _inner(cts, numeric), _inner([backward[i]], [tangent])
        if not np.isclose(lhs, rhs, rtol=rtol, atol=atol):
            return FAILED, (
                f"input {f.inputs[i] + 1}: <J^T ct, t> = {rhs:.6g} but finite differences give "
                f"<ct, J t> = {lhs:.6g} (ratio {rhs / lhs if lhs else float('inf'):.4g}): "
                "reverse mode (the custom_vjp's backward rule?) is wrong"
            )
        shown.append(f"{lhs:.4g}")
    detail = (f"no forward mode: reverse mode equals finite differences, <J^T ct, t> == "
              f"<ct, J t> per input ({', '.join(shown)})")  # fmt: skip
    if kinked:
        detail += f"; {kinked} output element(s) at a kink left out"
    return PASSED, detail
