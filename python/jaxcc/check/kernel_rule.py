"""The sharding rule a kernel under check runs under: its own, or for an XLACustomKernel without
one, the rule of the jaxcc function its kernel generator returns (decision 162). Used by the
sharding row (deploy_rows.py) and to find free dimensions (cases.py)."""

from __future__ import annotations

from .subject import Subject


def kernel_rule(subject: Subject):
    """The sharding rule that splits `subject`'s calls, or None."""
    rule = getattr(subject.fn, "sharding", None)
    if rule is not None or not subject.is_primitive:
        return rule
    return _kernel_function_rule(subject)


def _kernel_function_rule(subject: Subject):
    """For an XLACustomKernel without a rule: the rule of the jaxcc function its calls' kernel
    generator returns, which splits those calls (decision 162); None for any other kernel."""
    import jax

    from jaxcc._jax_compat import ShapedArray
    from jaxcc.custom_kernel.function_rules import function_rule

    platform = "gpu" if jax.default_backend() == "gpu" else jax.default_backend()
    table = subject.fn.kernel_table
    outs = tuple(ShapedArray(tuple(t.shape), t.dtype) for t in subject.declared())
    try:
        entry = table.select(platform, subject.backend, table.selection(warn=False))
        return function_rule(entry.kernel_generator(outs=outs, **subject.attrs))
    except Exception:  # noqa: BLE001  # the other rows report a failing generator
        return None
