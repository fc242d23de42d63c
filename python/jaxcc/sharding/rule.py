"""Sharding rules on jaxcc calls (docs/sharding.md): the rule as the core parsed it, the rank
check at trace time, and `partitioned`, which wraps a per-shard call in
`jax.experimental.custom_partitioning` so XLA keeps its operands sharded as the rule says."""

from __future__ import annotations

from jaxcc import _core
from jaxcc.errors import SpecError

from .gather_check import report_gather, report_uneven_split, spec_axes, tracing_rule

ELLIPSIS = "..."
RESHARDS = "reshards that input (an all-to-all or an all-gather)"
# Loader functions whose rule splits only leading dimensions take XLA's batch-partitionable
# path (sharding/batch_partition.py); False forces custom_partitioning (tests and the benchmark
# compare).
BATCH_PATH = [True]


class ShardingRule:
    """A parsed rule: `inputs`/`outputs` are operand -> dims -> factors ('...' for the
    ellipsis); `einsum` is what jax's `sharding_rule` takes."""

    def __init__(self, text: str, num_args: int = -1, num_rets: int = -1, function: str = ""):
        # num_args/num_rets < 0: not known yet (an XLACustomKernel's rule; checked per call).
        if not isinstance(text, str):
            raise SpecError(
                f'{function}: sharding must be a rule string such as "b i, i -> b i", '
                f"got {type(text).__name__}"
            )
        parsed = _core.parse_sharding_rule(text, num_args, num_rets, function)
        self.function = function
        self.text = parsed["text"]
        self.einsum = parsed["einsum"]
        self.inputs = [[tuple(d) for d in op] for op in parsed["inputs"]]
        self.outputs = [[tuple(d) for d in op] for op in parsed["outputs"]]
        self.reduction = tuple(parsed["reduction"])
        self.need_replication = tuple(parsed["need_replication"])
        self.permutation = tuple(parsed["permutation"])
        self.ellipsis_in = [bool(op) and op[0] == (ELLIPSIS,) for op in self.inputs + self.outputs]
        # Factors jaxcc never splits, with why (docs/sharding.md, "Factor kinds"): an operand
        # split along one is gathered first, and the user hears about it once.
        self.unsplit: dict[str, str] = {f: "the rule lists it in `need_replication`"
                                        for f in self.need_replication}  # fmt: skip
        for f in self.permutation:
            # A kernel given a piece cannot move data between pieces (decision 101).
            self.unsplit[f] = ("it is a `permutation` factor, and a kernel given a piece of it "
                               "cannot move data to another device's piece")  # fmt: skip
        for op in self.inputs + self.outputs:
            for d in op:
                if len(d) > 1:
                    for f in d:  # a split member would give the compound a ragged piece
                        self.unsplit.setdefault(f, f"it is part of the compound dimension "
                                                   f"({' '.join(d)})")  # fmt: skip
        if len(self.outputs) > 1:
            for f in self.reduction:
                # The rule does not say which outputs sum over it (decision 102).
                self.unsplit.setdefault(f, (
                    f"it is a `reduction` factor of a rule with {len(self.outputs)} outputs, "
                    "and the rule does not say which of them are sums over it (split it in a "
                    "function of one output)"))  # fmt: skip

    def __repr__(self) -> str:
        return f"ShardingRule({self.text!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, ShardingRule) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def batched(self, shapes=None) -> ShardingRule:
        """The rule of the same call under `jax.vmap` with the batch axis first everywhere: a
        fresh leading factor shared by every operand. `shapes` (the batched shapes of the inputs
        then the outputs) is needed when some operands start with `...` and others do not:
        there the ellipsis is written out as named factors, so the batch axis is one factor in
        every operand (it was the ellipsis's first factor in some and `vmap0` in the others,
        two factors XLA split independently: issue 25, case 4)."""
        used = {f for op in self.inputs + self.outputs for d in op for f in d}
        fresh = (f"vmap{i}" for i in range(len(used) + 64) if f"vmap{i}" not in used)
        name = next(fresh)
        operands = self.inputs + self.outputs
        mixed = any(self.ellipsis_in) and not all(self.ellipsis_in)
        spelled: list[str] = []
        if mixed:
            if shapes is None:
                raise SpecError(
                    f'`{self.function}`: sharding rule "{self.text}" mixes `...` and named '
                    "operands; its batched form needs the shapes"
                )
            i = self.ellipsis_in.index(True)
            lead = len(shapes[i]) - 1 - (len(operands[i]) - 1)
            spelled = [next(fresh) for _ in range(max(lead, 0))]

        def operand(op, has_ellipsis) -> str:
            dims = [" ".join(d) if len(d) == 1 else f"({' '.join(d)})" for d in op]
            if has_ellipsis and not mixed:
                return " ".join(dims)  # the ellipsis takes the batch axis as its first factor
            if has_ellipsis:
                dims = spelled + dims[1:]
            return " ".join([name] + dims)

        n = len(self.inputs)
        parts = [operand(op, e) for op, e in zip(operands, self.ellipsis_in, strict=True)]
        new = f"{', '.join(parts[:n])} -> {', '.join(parts[n:])}"
        sides = self.text.split(";", 1)
        new += f";{sides[1]}" if len(sides) > 1 else ""
        return ShardingRule(new, len(self.inputs), len(self.outputs), self.function)

    def check_counts(self, num_args: int, num_rets: int) -> None:
        """SpecError unless the rule has `num_args` inputs and `num_rets` outputs."""
        for side, have, want in (("input", len(self.inputs), num_args),
                                 ("output", len(self.outputs), num_rets)):  # fmt: skip
            if have != want:
                raise SpecError(
                    f'`{self.function}`: sharding rule "{self.text}" has {have} {side}(s), but '
                    f"the call has {want}; write one comma-separated operand per {side} on that "
                    "side of `->`."
                )

    def _check_factor_sizes(self, expanded, shapes) -> None:
        """SpecError unless every factor has one size in every operand that names it: XLA's
        partitioner cannot split a factor two operands disagree on (it failed inside XLA with an
        INTERNAL error), and a kernel given such operands reads past one of them."""
        seen: dict = {}
        n_in = len(self.inputs)
        for i, (factors, shape) in enumerate(zip(expanded, shapes, strict=True)):
            where = f"input {i + 1}" if i < n_in else f"output {i - n_in + 1}"
            for d, factor in enumerate(factors):
                if factor is None:
                    continue
                size = shape[d]
                if factor not in seen:
                    seen[factor] = (size, where, d)
                    continue
                first_size, first_where, first_d = seen[factor]
                if size != first_size:
                    shown = factor if not factor.startswith(ELLIPSIS) else ELLIPSIS
                    raise SpecError(
                        f'function `{self.function}`: sharding rule "{self.text}" gives factor '
                        f"`{shown}` size {first_size} in {first_where} (dimension {first_d}) but "
                        f"{size} in {where} (dimension {d}); one factor names one size. Pass "
                        "operands whose shapes agree, or give those dimensions different factors."
                    )

    def expand(self, shapes_in, shapes_out):
        """Per operand, one factor (or None for a compound dim) per dimension, the ellipsis
        expanded; SpecError when a rank does not fit the rule."""
        expanded = []
        ellipsis_ranks = set()
        for kind, ops, shapes in (("input", self.inputs, shapes_in),
                                  ("output", self.outputs, shapes_out)):  # fmt: skip
            for i, (op, shape) in enumerate(zip(ops, shapes, strict=True)):
                rank = len(shape)
                has_ellipsis = bool(op) and op[0] == (ELLIPSIS,)
                named = len(op) - (1 if has_ellipsis else 0)
                if rank < named or (not has_ellipsis and rank != named):
                    operand = " ".join(" ".join(d) if len(d) == 1 else f"({' '.join(d)})"
                                       for d in op) or "(scalar)"  # fmt: skip
                    raise SpecError(
                        f'function `{self.function}`: sharding rule "{self.text}" gives '
                        f"{kind} {i + 1} {named} dimension(s) (`{operand}`), but it has rank "
                        f"{rank} (shape {tuple(shape)}); write one factor per dimension, or "
                        "start the operand with `...` for any number of leading dimensions."
                    )
                lead = rank - named
                if has_ellipsis:
                    ellipsis_ranks.add(lead)
                factors = [f"{ELLIPSIS}{j}" for j in range(lead)]
                factors += [d[0] if len(d) == 1 else None for d in op[1 if has_ellipsis else 0 :]]
                expanded.append(factors)
        self._check_factor_sizes(expanded, list(shapes_in) + list(shapes_out))
        if len(ellipsis_ranks) > 1:
            raise SpecError(
                f'function `{self.function}`: sharding rule "{self.text}": `...` stands for '
                f"{sorted(ellipsis_ranks)} dimensions in different operands; jaxcc needs the same "
                "number in every operand (name the dimensions explicitly otherwise)."
            )
        return expanded[: len(self.inputs)], expanded[len(self.inputs) :]


def _choose_axes(rule: ShardingRule, in_factors, arg_shardings, mesh=None, shapes=None):
    """factor -> mesh axes, from the shardings XLA proposes for the inputs. Factors the rule
    keeps whole (`rule.unsplit`) and compound dims get none, and no mesh axis serves two factors;
    where operands disagree, the first operand split along a factor decides (the others are
    resharded to it). With the mesh and the input shapes, a factor whose size those axes do not
    divide gets none either. Each gather this forces is reported (ShardingWarning, or
    ShardingError under JAXCC_SHARDING_CHECK=error)."""
    axes_of: dict[str, tuple] = {}
    taken: set = set()
    sizes = dict(getattr(mesh, "shape", {}) or {})
    for i, (factors, sharding) in enumerate(zip(in_factors, arg_shardings, strict=True)):
        spec = tuple(getattr(sharding, "spec", ())) + (None,) * len(factors)
        for d, (factor, entry) in enumerate(zip(factors, spec, strict=False)):  # spec padded
            axes = tuple(a for a in spec_axes(entry) if sizes.get(a, 2) > 1)
            if factor is None and axes:
                report_gather(rule.function, rule.text, "(compound)", axes,
                              "jaxcc splits no compound dimension")  # fmt: skip
            if factor is None:
                continue
            if axes_of.get(factor):
                if axes and axes != axes_of[factor]:
                    report_gather(rule.function, rule.text, factor, axes,
                                  f"an earlier input splits it over {axes_of[factor]}",
                                  RESHARDS)  # fmt: skip
                continue
            if factor in rule.unsplit:
                if axes:
                    report_gather(rule.function, rule.text, factor, axes, rule.unsplit[factor])
                continue
            if any(a in taken for a in axes):
                report_gather(rule.function, rule.text, factor, axes,
                              "those mesh axes already split another factor", RESHARDS)  # fmt: skip
                axes = ()
            if axes and shapes is not None:
                devices = 1
                for a in axes:
                    devices *= sizes.get(a, 1)
                if shapes[i][d] % devices:
                    shown = factor if not factor.startswith(ELLIPSIS) else (
                        f"{ELLIPSIS} dimension {factor[len(ELLIPSIS):]}")  # fmt: skip
                    report_uneven_split(rule.function, rule.text, shown, shapes[i][d], axes,
                                        devices)  # fmt: skip
                    axes = ()
            if axes:
                axes_of[factor] = axes
                taken.update(axes)
    return axes_of


def _named(mesh, factors, axes_of):
    from jax.sharding import NamedSharding, PartitionSpec

    entries = []
    for f in factors:
        axes = axes_of.get(f, ()) if f is not None else ()
        entries.append(None if not axes else (axes[0] if len(axes) == 1 else axes))
    return NamedSharding(mesh, PartitionSpec(*entries))


def _inside_rule(call_local, xs, types):
    # Kernels called in here are the rule's per-shard body: no rule-less warning for them.
    tracing_rule[0] += 1
    try:
        return call_local(xs, types)
    finally:
        tracing_rule[0] -= 1


def _per_shard(rule: ShardingRule, call_local, mesh, axes_of, out_factors, result_types):
    """The output shardings the factor-to-axis choice implies, and the function each shard runs:
    the kernel on its pieces, then a sum over the axes of every split reduction factor. Shared by
    the custom_partitioning and shard_map lowerings, which differ only in who chooses `axes_of`."""
    import jax

    out_shardings = tuple(_named(mesh, f, axes_of) for f in out_factors)
    local_types = [
        jax.ShapeDtypeStruct(s.shard_shape(r.shape), r.dtype)
        for s, r in zip(out_shardings, result_types, strict=True)
    ]
    # A reduction factor is split only in rules of one output (`rule.unsplit` keeps it whole
    # otherwise, decision 102): that output is the sum of the devices' partial results.
    summed = tuple(a for f in rule.reduction for a in axes_of.get(f, ()))
    assert not summed or len(out_factors) == 1, rule.text

    def body(*xs):
        outs = _inside_rule(call_local, list(xs), local_types)
        if summed:
            outs = [jax.lax.psum(o, summed) for o in outs]
        return tuple(outs)

    return out_shardings, body


def _explicit_shardings(args, replicated=None):
    """The inputs' NamedShardings when their types carry them (a mesh with Explicit axes, under
    jit) and one of them is split; None otherwise (Auto axes: XLA decides, custom_partitioning
    follows). `replicated` (a list) is set to [True] when every input's type is on a mesh whose
    axes are all Explicit and none is split: the call needs no partitioning at all."""
    import jax
    from jax.sharding import AxisType

    shardings = []
    split = False
    every_axis_explicit = True
    for x in args:
        try:
            sharding = getattr(jax.typeof(x), "sharding", None)
        except TypeError:
            return None
        mesh = getattr(sharding, "mesh", None)
        spec = getattr(sharding, "spec", None)
        if mesh is None or spec is None or not getattr(mesh, "axis_names", ()):
            return None
        axis_types = tuple(getattr(mesh, "axis_types", ()))
        every_axis_explicit = every_axis_explicit and bool(axis_types) and all(
            t == AxisType.Explicit for t in axis_types)  # fmt: skip
        types = dict(zip(mesh.axis_names, axis_types, strict=False))
        sizes = dict(mesh.shape)
        for entry in spec:
            for axis in spec_axes(entry):
                if types.get(axis) != AxisType.Explicit:
                    return None
                split = split or sizes.get(axis, 1) > 1
        shardings.append(sharding)
    if not split and replicated is not None and args and every_axis_explicit:
        replicated.append(True)
    return shardings if split else None


def report_forbidden_splits(rule: ShardingRule, in_factors, args) -> None:
    """On XLA's batch-partitioning path XLA reshards an input split along a factor the rule
    keeps whole; where the shardings are known while tracing (Explicit axes), the user hears of
    it as on the other paths."""
    shardings = _explicit_shardings(args)
    if shardings is not None:
        _choose_axes(rule, in_factors, shardings, shardings[0].mesh)


def _shard_mapped(rule, call_local, args, result_types, in_factors, out_factors, shardings):
    """With Explicit mesh axes the inputs' shardings are known while tracing: the rule's
    per-shard call runs under jax.shard_map with the specs the rule implies, which also works
    where custom_partitioning's global body cannot be traced (a lax.scan over a split axis, as
    a sequential vmap makes; decision 82)."""
    import jax

    mesh = shardings[0].mesh
    axes_of = _choose_axes(rule, in_factors, shardings, mesh,
                           [a.shape for a in args])  # fmt: skip
    in_shardings = [_named(mesh, f, axes_of) for f in in_factors]
    out_shardings, body = _per_shard(rule, call_local, mesh, axes_of, out_factors, result_types)

    # An operand whose sharding differs from what the rule asks (one broadcast by vmap, or a
    # need_replication dimension that arrived split) is resharded to it first, as XLA does for
    # custom_partitioning's choice.
    args = [
        x if tuple(getattr(jax.typeof(x).sharding, "spec", ())) == tuple(wanted.spec)
        else jax.sharding.reshard(x, wanted)
        for x, wanted in zip(args, in_shardings, strict=True)
    ]  # fmt: skip
    in_specs = tuple(w.spec for w in in_shardings)
    out_specs = tuple(w.spec for w in out_shardings)
    return list(jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs)(*args))


def partitioned(rule: ShardingRule, call_local, args, result_types):
    """Calls `call_local(local_args, local_result_types) -> list of outputs` on each shard, as
    the rule says: custom_partitioning chooses per-shard shapes from the input shardings, and a
    sharded reduction factor is summed over its mesh axes afterwards."""
    from jax.experimental.custom_partitioning import custom_partitioning

    in_factors, out_factors = rule.expand([a.shape for a in args],
                                          [r.shape for r in result_types])  # fmt: skip
    replicated: list = []
    explicit = _explicit_shardings(args, replicated)
    if replicated:
        # Nothing is split and the mesh's axes are Explicit, so nothing can split it later
        # either: the plain call, which also exports (custom_partitioning's callback does not).
        return _inside_rule(call_local, list(args), list(result_types))
    if explicit is not None:
        return _shard_mapped(rule, call_local, args, result_types, in_factors, out_factors,
                             explicit)  # fmt: skip

    @custom_partitioning
    def op(*xs):
        return tuple(_inside_rule(call_local, list(xs), list(result_types)))

    def partition(mesh, arg_shapes, result_shape):
        axes_of = _choose_axes(rule, in_factors, [a.sharding for a in arg_shapes], mesh,
                               [a.shape for a in arg_shapes])  # fmt: skip
        arg_shardings = tuple(_named(mesh, f, axes_of) for f in in_factors)
        out_shardings, lower = _per_shard(rule, call_local, mesh, axes_of, out_factors,
                                          result_types)  # fmt: skip
        return mesh, lower, out_shardings, arg_shardings

    op.def_partition(
        partition=partition,
        sharding_rule=rule.einsum,
        # Shardy hears what jaxcc does: every factor it keeps whole is need_replication.
        reduction_factors=tuple(f for f in rule.reduction if f not in rule.unsplit),
        need_replication_factors=tuple(sorted(rule.unsplit)),
    )
    return list(op(*args))
