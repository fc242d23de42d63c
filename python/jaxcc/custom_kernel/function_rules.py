"""A jaxcc function with its own sharding rule as an XLACustomKernel's kernel (decision 162).

The two rules compose this way: a primitive without a rule lets the function's rule decide how
each call splits (the function partitions itself inside the primitive's lowering); a primitive
with a rule decides itself, and the function runs on each shard's pieces, where the function's
rule must allow every split the primitive's rule makes. Also the primitive's check for calls
that XLA would gather, which must not fire where the function's rule keeps the call split."""

from __future__ import annotations

import threading

from jaxcc.errors import SpecError
from jaxcc.sharding.gather_check import check_rule_less

# The eager call this thread is running, as (XLACustomKernel, its concrete input arrays): an
# eager call's lowering runs inside the call, and sees there the input shardings that its
# traced avals lose on meshes with Auto axes.
_eager = threading.local()


def function_rule(kernel):
    """The sharding rule of a jaxcc function returned by a kernel generator; None otherwise."""
    from jaxcc.call.kernel_function import KernelFunction

    return kernel.sharding if isinstance(kernel, KernelFunction) else None


class eager_inputs:
    """`with eager_inputs(kernel, arrays):` around an eager call of `kernel` on `arrays`."""

    def __init__(self, kernel, arrays):
        self.entry = (kernel, arrays)

    def __enter__(self):
        self.outer = getattr(_eager, "call", None)
        _eager.call = self.entry

    def __exit__(self, *exc):
        _eager.call = self.outer


def check_gathered(primitive, kernel, args) -> None:
    """For a primitive without a rule: warns (or raises) as a rule-less jaxcc function does when
    its inputs are sharded, unless its kernel is a jaxcc function with a rule of its own, which
    keeps the call split. Checked in the lowering because only there is the kernel known."""
    if function_rule(kernel) is not None:
        return
    eager = getattr(_eager, "call", None)
    if eager is not None and eager[0] is primitive:
        args = eager[1]
    name = primitive.name
    check_rule_less(name, name, args, declare=(
        f"give the primitive a rule, jaxcc.XLACustomKernel('{name}', sharding='b i -> b i') "
        "(or def_kernel(..., sharding=...); one operand per input and output, one factor per "
        "dimension, docs/sharding.md), or return from its generator a jaxcc function loaded "
        "with a rule"))  # fmt: skip


def check_rules_compose(name: str, primitive_rule, kernel, in_shapes, out_shapes) -> None:
    """With a rule on the primitive, a kernel that is a jaxcc function with its own rule gets
    the pieces the primitive's rule cuts: a dimension the primitive's rule may split must be
    one the function's rule may split the same way (a reduction factor in both, or in
    neither). Otherwise a SpecError naming both rules, at the first lowering on any mesh."""
    rule = function_rule(kernel)
    if rule is None or primitive_rule is None:
        return
    p_in, p_out = primitive_rule.expand(in_shapes, out_shapes)
    f_in, f_out = rule.expand(in_shapes, out_shapes)
    operands = [f"input {i + 1}" for i in range(len(p_in))]
    operands += [f"output {i + 1}" for i in range(len(p_out))]
    for operand, p_factors, f_factors in zip(operands, p_in + p_out, f_in + f_out, strict=True):
        for dim, (p, f) in enumerate(zip(p_factors, f_factors, strict=True)):
            if p is None or p in primitive_rule.unsplit:
                continue  # the primitive keeps it whole: the function gets it whole
            if f is None:
                why = "it is part of a compound dimension"
            elif f in rule.unsplit:
                why = rule.unsplit[f]
            elif (p in primitive_rule.reduction) != (f in rule.reduction):
                why = (f"one rule sums over it (`reduction`) and the other does not "
                       f"(`{p}` in the primitive's, `{f}` in the function's)")  # fmt: skip
            else:
                continue
            raise SpecError(
                f'{name}: its kernel `{kernel.name}` has its own sharding rule "{rule.text}", '
                f"which does not allow splitting dimension {dim} of {operand} ({why}), but the "
                f'primitive\'s rule "{primitive_rule.text}" may split it (factor `{p}`). The '
                "primitive's rule decides how its calls split and the function runs on each "
                "shard's pieces, so this could compute on partial data. Fix: give the "
                f'primitive the function\'s rule (XLACustomKernel("{name}", sharding='
                f'"{rule.text}")), or leave the primitive without a rule so that the '
                'function\'s own rule applies (docs/custom_kernel.md, "Sharding").'
            )
