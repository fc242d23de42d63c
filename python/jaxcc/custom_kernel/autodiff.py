"""defjvp: per-input JVP rules for primitives with one or several results."""

from __future__ import annotations

from jaxcc.errors import CallError


def _contribution_list(primitive, index: int, value, n_outs: int) -> list:
    if hasattr(value, "shape") and hasattr(value, "dtype") and n_outs == 1:
        return [value]
    if isinstance(value, (list, tuple)) and len(value) == n_outs:
        return list(value)
    raise CallError(
        f"{primitive.name}: the JVP rule of input {index} must return a list of {n_outs} "
        f"tangent(s) (one per output), got {type(value).__name__}"
        + (f" of length {len(value)}" if isinstance(value, (list, tuple)) else "")
    )


def defjvp(primitive, *jvp_rules):
    """Installs a JVP for `primitive` from one rule per input: `rule(tangent, *primals, **params)`
    returns that input's contribution to each output's tangent (a list, or one array when the
    primitive has one output); None marks an input with no contribution. Contributions are
    summed; inputs with symbolic-zero tangents are skipped."""
    import jax

    from jaxcc._jax_compat import ad

    rules = list(jvp_rules)
    for index, rule in enumerate(rules):
        if rule is not None and not callable(rule):
            raise CallError(
                f"{primitive.name}: JVP rule {index} must be callable or None, got "
                f"{type(rule).__name__}"
            )

    def jvp(primals, tangents, **params):
        if len(primals) != len(rules):
            raise CallError(
                f"{primitive.name}: {len(rules)} JVP rule(s) were defined but the primitive "
                f"was called with {len(primals)} input(s); give one rule (or None) per input"
            )
        result = primitive.bind(*primals, **params)
        # A plain JAX primitive with one result (brainevent's rules take those too) binds to one
        # array and wants one tangent back; the rules' contributions are summed the same way.
        single = not primitive.multiple_results
        outputs = [result] if single else result
        total = None
        for index, (rule, tangent) in enumerate(zip(rules, tangents, strict=True)):
            if rule is None or type(tangent) is ad.Zero:
                continue
            part = _contribution_list(
                primitive, index, rule(tangent, *primals, **params), len(outputs)
            )
            total = (
                part
                if total is None
                else [ad.add_tangents(a, b) for a, b in zip(total, part, strict=True)]
            )
        if total is None:
            total = [ad.Zero(jax.typeof(v).to_tangent_aval()) for v in outputs]
        return (result, total[0]) if single else (result, total)

    ad.primitive_jvps[primitive] = jvp
    return jvp
