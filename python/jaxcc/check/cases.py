"""The shapes check_kernel runs a kernel at besides the sample: sizes a reviewer would try (0, 1,
an odd size, one less than the sample's) along the dimensions check_kernel knows are free, and the
user's own `samples=[...]` (decision 200).

A dimension is known to be free when the call's output types follow from its inputs: a loaded
kernel function called without `outs` (one output shaped like its first input), `outs` given as
a function of the inputs, or a sharding rule, whose factors name which dimensions of the inputs
and outputs are one size (the factors jaxcc may split: the kernel must take any piece of them).
Without one of these only the sample's shapes run, and the rows say so."""

from __future__ import annotations

import dataclasses

import numpy as np

# Sizes below this are left alone when only equal sizes say which dimensions go together (no
# rule): a 3 is more often a fixed size (xyz, RGB) than a free one.
_SMALLEST_FREE = 5
_MAX_GROUPS = 3  # dimension groups varied, the largest sizes first


@dataclasses.dataclass(frozen=True)
class Case:
    """One set of arguments the kernel runs at: numpy arrays, the outs of the call, a label."""

    args: tuple
    outs: object
    label: str


def shape_text(args) -> str:
    return ", ".join(f"{np.dtype(a.dtype).name}{list(a.shape)}" for a in args)


def reviewer_sizes(size: int) -> list[int]:
    """0, 1, an odd size and one less than `size`, each smaller than it, in that order."""
    odd = (size // 2) | 1
    chosen = [0, 1] + ([odd] if (size - 1) % 2 == 0 else []) + [size - 1]
    return [s for s in dict.fromkeys(chosen) if 0 <= s < size]


def _resized(array: np.ndarray, dims: list[int], size: int) -> np.ndarray:
    """`array`'s first `size` entries along each of `dims` (`size` is below the sample's)."""
    index = tuple(slice(0, size) if d in dims else slice(None) for d in range(array.ndim))
    return np.ascontiguousarray(array[index])


def _groups_by_size(args) -> list[tuple[int, list[list[int]]]]:
    """Per dimension size (largest first, at least _SMALLEST_FREE), per input the dims of it."""
    sizes = sorted({s for a in args for s in a.shape if s >= _SMALLEST_FREE}, reverse=True)
    return [(s, [[d for d, n in enumerate(a.shape) if n == s] for a in args]) for s in sizes]


def _groups_by_rule(rule, args, outs_types):
    """Per factor the rule lets jaxcc split: its size, per input the dims it names, per output
    the dims it names."""
    in_factors, out_factors = rule.expand([a.shape for a in args],
                                          [tuple(t.shape) for t in outs_types])  # fmt: skip
    factors = dict.fromkeys(f for fs in [*in_factors, *out_factors] for f in fs if f)
    for factor in factors:
        if factor in rule.unsplit:
            continue
        dims_in = [[d for d, f in enumerate(fs) if f == factor] for fs in in_factors]
        dims_out = [[d for d, f in enumerate(fs) if f == factor] for fs in out_factors]
        sizes = {args[i].shape[d] for i, ds in enumerate(dims_in) for d in ds}
        if len(sizes) == 1 and (size := sizes.pop()) >= 2:
            yield factor, size, dims_in, dims_out


def derived_cases(subject) -> tuple[list[Case], str]:
    """The reviewer's shapes for `subject` and how they were found (or why there are none)."""
    import jax

    args = subject.host_args
    if not args:
        return [], "no inputs"
    rule = _rule_of(subject)
    cases: list[Case] = []
    if subject.outs is None or subject.outs_fn is not None:
        how = "outs inferred from the inputs" if subject.outs is None else "outs=function"
        for size, dims in _groups_by_size(args)[:_MAX_GROUPS]:
            for n in reviewer_sizes(size):
                new = tuple(_resized(a, ds, n) for a, ds in zip(args, dims, strict=True))
                outs = subject.outs_fn(*new) if subject.outs_fn is not None else None
                cases.append(Case(new, outs, shape_text(new)))
        return cases, how
    if rule is not None:
        declared = subject.declared()
        groups = list(_groups_by_rule(rule, args, declared))[:_MAX_GROUPS]
        for _factor, size, dims_in, dims_out in groups:
            for n in reviewer_sizes(size):
                new = tuple(_resized(a, ds, n) for a, ds in zip(args, dims_in, strict=True))
                types = [jax.ShapeDtypeStruct(tuple(n if d in ds else s
                                                    for d, s in enumerate(t.shape)), t.dtype)
                         for t, ds in zip(declared, dims_out, strict=True)]  # fmt: skip
                outs = types if isinstance(subject.outs, (list, tuple)) else types[0]
                cases.append(Case(new, outs, shape_text(new)))
        return cases, f'sharding rule "{rule.text}"'
    return [], ("outs is fixed (give outs as a function of the inputs, a sharding rule, or "
                "samples=[...] for more shapes)")  # fmt: skip


def _rule_of(subject):
    from .kernel_rule import kernel_rule

    try:
        return kernel_rule(subject)
    except Exception:  # noqa: BLE001  # a rule that does not fit is the sharding row's finding
        return None


def user_cases(subject, samples) -> list[Case]:
    """`samples=[...]`: each a tuple of arguments (outs derived as for the sample: None, the
    outs function) or a dict {"args": (...), "outs": ...}."""
    from jaxcc.errors import CallError

    cases = []
    for k, sample in enumerate(samples or ()):
        if isinstance(sample, dict):
            if "args" not in sample:
                raise CallError(f"check_kernel: samples[{k}] is a dict without 'args'")
            args = tuple(np.array(a, copy=True) for a in sample["args"])
            outs = sample.get("outs", subject.outs)
        elif isinstance(sample, (list, tuple)):
            args = tuple(np.array(a, copy=True) for a in sample)
            outs = subject.outs_fn(*args) if subject.outs_fn is not None else subject.outs
        else:
            raise CallError(
                f"check_kernel: samples[{k}] must be a tuple of arguments or a dict "
                f'{{"args": (...), "outs": ...}}, got {type(sample).__name__}'
            )
        cases.append(Case(args, outs, f"samples[{k}]: {shape_text(args)}"))
    return cases
