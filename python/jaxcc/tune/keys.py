"""What a tuning decision is keyed on and how it is told: the shapes the kernel runs on (under
jax.vmap with broadcast_all/expand_dims the whole batch, decision 192; a traced call of those
methods is chosen at lowering, where the shapes are the batch's already, deferred.py and decision
230, so the vmap levels read here serve calls such as chosen_config under jax.vmap), configurations
with their declared types, and the user's line for warnings raised deep inside a trace (decision
195)."""

from __future__ import annotations

import os
import re
import sys

BATCHED_ONCE = ("broadcast_all", "expand_dims")


def _levels(x) -> list:
    """[(trace, axis size or None when unmapped there)] of the vmaps wrapping `x`, innermost
    first."""
    from jaxcc._jax_compat import batch_tracer

    BatchTracer = batch_tracer  # noqa: N806  # a class
    if BatchTracer is None:  # a JAX without it: the per-element shape is all that can be read
        return []
    levels = []
    while isinstance(x, BatchTracer):
        mapped = isinstance(x.batch_dim, int)  # else not mapped (None or a NotMapped)
        levels.append((x._trace, x.val.shape[x.batch_dim] if mapped else None))
        x = x.val
    return levels


def kernel_shapes(arrays, outs, vmap_method: str):
    """([ShapeDtypeStruct] of the operands, outs) as the kernel sees them. Under jax.vmap with
    `sequential` that is each element's; with broadcast_all/expand_dims JAX runs the kernel once
    on the whole batch, every vmap adding a leading axis of its size (expand_dims: 1 for an
    operand that vmap does not map; the outputs always get the size)."""
    import jax

    per_element = [jax.ShapeDtypeStruct(tuple(a.shape), a.dtype) for a in arrays]
    if vmap_method not in BATCHED_ONCE:
        return per_element, outs
    chains = [_levels(a) for a in arrays]
    traces, sizes = [], {}
    for chain in chains:
        for trace, size in chain:
            if all(trace is not t for t in traces):
                traces.append(trace)
            if size is not None:
                sizes[id(trace)] = size
    if not traces:
        return per_element, outs
    # Innermost first as chains list them; the kernel's leading axes are outermost first.
    order = sorted(traces, key=lambda t: max(c.index(e) for c in chains for e in c if e[0] is t))
    outer_first = list(reversed(order))

    def prefix(chain) -> tuple:
        mapped = {id(t) for t, size in chain if size is not None}
        expand = vmap_method == "expand_dims"
        return tuple(
            1 if expand and id(t) not in mapped else sizes.get(id(t), 1) for t in outer_first
        )

    shapes = [
        jax.ShapeDtypeStruct(prefix(c) + s.shape, s.dtype)
        for c, s in zip(chains, per_element, strict=True)
    ]
    full = tuple(sizes.get(id(t), 1) for t in outer_first)
    if outs is not None:
        many = isinstance(outs, (list, tuple))
        batched = [jax.ShapeDtypeStruct(full + tuple(o.shape), o.dtype)
                   for o in (outs if many else [outs])]  # fmt: skip
        outs = batched if many else batched[0]
    return shapes, outs


def typed_config(config: dict, declared: dict) -> dict:
    """The configuration with each value as declared (ints stay ints, bools bools); a value
    written in a source annotation (text) that spells an integer becomes one."""
    out = {}
    for name, token in config.items():
        value = token
        for candidate in declared.get(name, ()):
            if (str(int(candidate)) if isinstance(candidate, bool) else str(candidate)) == token:
                value = candidate
                break
        if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
            value = int(value)
        out[name] = value
    return out


def _library_roots() -> tuple[str, ...]:
    roots = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]  # jaxcc
    for name in ("jax", "jaxlib"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            roots.append(os.path.dirname(os.path.abspath(module.__file__)))
    return tuple(root + os.sep for root in roots)


def user_stacklevel() -> int:
    """The `stacklevel` for a warnings.warn in the caller of this function that points at the
    first frame outside jaxcc and JAX: the user's line, also when the call is traced by jax.jit
    (JAX's own frames between the user's function and jaxcc are walked out of)."""
    roots = _library_roots()
    frame = sys._getframe(1)
    level = 1
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(roots) and "contextlib" not in filename:
            return level
        frame = frame.f_back
        level += 1
    return 1
