"""Declaring what may be tuned: `tune={"fn": {"BLOCK": [16, 32], ...}}` or `jaxcc.Autotune(...)`
per function, checked and expanded into configurations (decision 156a).

Each configuration reaches the kernel as `-D` macros (`-DBLOCK=32 -DUNROLL=2`) added to the
module's compile flags, so every configuration is an ordinary module build with its own cache key
and the core builds, keys and caches it as any other (nothing new crosses the C++ seam)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping

from jaxcc.errors import SpecError

# A macro name, and the tokens a value may be: what `-DNAME=VALUE` passes through every compiler
# unchanged and what a target name can spell.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_VALUE = re.compile(r"-?[A-Za-z0-9_]+\Z")
_RESERVED = {"constraints", "key", "tune_inputs", "reference", "rtol", "atol"}


class Autotune:
    """What may be tuned in one function, with the options a plain dict cannot carry.

    `Autotune(BLOCK=[16, 32, 64], UNROLL=[1, 2, 4], constraints=lambda c: ..., key=...,
    tune_inputs=..., reference=None, rtol=1e-4, atol=1e-6)`:
    - each keyword names a compile-time parameter (a `-DNAME=value` macro) and its candidates
      (ints, bools or identifier tokens), in the order given; configurations are their product;
    - `constraints(config: dict) -> bool` drops configurations before anything is built;
    - `key(shapes, attributes) -> str` says which tuning a call uses (`shapes`: a list of
      `jax.ShapeDtypeStruct`, one per operand; default: every operand's dtype and shape);
    - `tune_inputs(shapes, attributes) -> list of arrays`: the operands timing runs on (default:
      random values of those shapes and dtypes), for kernels that need structured inputs;
    - `reference`: the configuration (a dict) whose outputs the others must match, default the
      first; `rtol`/`atol`: how closely: |difference| <= atol + rtol * (largest magnitude of that
      reference output), elementwise; integer and bool outputs exactly.
    """

    def __init__(
        self,
        *,
        constraints: Callable[[dict], bool] | None = None,
        key: Callable | None = None,
        tune_inputs: Callable | None = None,
        reference: Mapping | None = None,
        rtol: float = 1e-4,
        atol: float = 1e-6,
        **params,
    ):
        self.params = params
        self.constraints = constraints
        self.key = key
        self.tune_inputs = tune_inputs
        self.reference = reference
        self.rtol = rtol
        self.atol = atol

    def __repr__(self) -> str:
        return f"Autotune({', '.join(f'{k}={v!r}' for k, v in self.params.items())})"


class TuneSpec:
    """One function's checked declaration: parameter names, configurations in order, options."""

    def __init__(self, function: str, declared: Autotune, configs: list[dict]):
        self.function = function
        self.names = list(declared.params)
        self.configs = configs
        self.options = declared
        self.where = ""  # `label:line:column` of a tune="..." annotation; "" for the loader's
        self.reference = configs[0]
        if declared.reference is not None:
            wanted = {k: _token(v) for k, v in dict(declared.reference).items()}
            if wanted not in configs:
                raise SpecError(
                    f"tune[{function!r}]: reference={dict(declared.reference)!r} is not one of "
                    f"the configurations ({len(configs)} after constraints); name one of them, "
                    f"e.g. {configs[0]!r}"
                )
            self.reference = wanted


def _token(value) -> str:
    return str(int(value)) if isinstance(value, bool) else str(value)


def config_tag(config: dict) -> str:
    """`BLOCK32-UNROLL2`: a configuration as it appears in target names and decision files."""
    return "-".join(f"{name}{value}" for name, value in config.items())


def config_text(config: dict) -> str:
    """`BLOCK=32,UNROLL=2`: a configuration as messages print it."""
    return ",".join(f"{name}={value}" for name, value in config.items())


def config_flags(config: dict) -> list[str]:
    return [f"-D{name}={value}" for name, value in config.items()]


def _candidates(where: str, fn: str, name, values) -> list[str]:
    if not isinstance(name, str) or not _NAME.match(name):
        raise SpecError(
            f"{where}: tune[{fn!r}]: parameter {name!r} is not a macro name (letters, digits, "
            "'_', not starting with a digit); e.g. tune={'matmul': {'BLOCK': [16, 32]}}"
        )
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, range)):
        raise SpecError(
            f"{where}: tune[{fn!r}][{name!r}] must be a list of candidate values, got {values!r}"
        )
    if not values:
        raise SpecError(
            f"{where}: tune[{fn!r}][{name!r}] has no candidate values; give at least one, e.g. "
            f"{name}=[16, 32]"
        )
    tokens = []
    for value in values:
        ok = isinstance(value, (int, str)) and _VALUE.match(_token(value))
        if not ok:
            raise SpecError(
                f"{where}: tune[{fn!r}][{name!r}]: candidate {value!r} is not an int, bool or "
                "identifier token (it becomes -D{name}=VALUE and part of a target name)"
            )
        if _token(value) in tokens:
            raise SpecError(f"{where}: tune[{fn!r}][{name!r}] lists {value!r} twice")
        tokens.append(_token(value))
    return tokens


def parse_tune(tune, where: str) -> dict[str, TuneSpec]:
    """`tune=` as given to a loader -> {function: TuneSpec}; SpecError naming what is wrong."""
    if tune is None:
        return {}
    example = "e.g. tune={'matmul': {'BLOCK': [16, 32, 64], 'UNROLL': [1, 2]}}"
    if not isinstance(tune, Mapping) or not tune:
        raise SpecError(
            f"{where}: tune must be a non-empty dict of function name -> parameters; {example}"
        )
    specs = {}
    for fn, declared in tune.items():
        if not isinstance(fn, str):
            raise SpecError(f"{where}: tune keys are function names, got {fn!r}; {example}")
        if isinstance(declared, Mapping):
            clash = _RESERVED & set(declared)
            if clash:
                raise SpecError(
                    f"{where}: tune[{fn!r}] names {sorted(clash)}: pass options through "
                    "jaxcc.Autotune(..., constraints=..., key=...), not the plain dict"
                )
            declared = Autotune(**dict(declared))
        if not isinstance(declared, Autotune):
            raise SpecError(
                f"{where}: tune[{fn!r}] must be a dict of parameter -> candidates or a "
                f"jaxcc.Autotune, got {type(declared).__name__}; {example}"
            )
        if not declared.params:
            raise SpecError(f"{where}: tune[{fn!r}] names no parameter; {example}")
        lists = {n: _candidates(where, fn, n, v) for n, v in declared.params.items()}
        configs = [
            dict(zip(lists, combo, strict=True)) for combo in itertools.product(*lists.values())
        ]
        if declared.constraints is not None:
            configs = [c for c in configs if declared.constraints(_typed(c, declared))]
        if not configs:
            raise SpecError(
                f"{where}: tune[{fn!r}]: constraints= rejected every configuration; nothing "
                "would be left to build"
            )
        specs[fn] = TuneSpec(fn, declared, configs)
    return specs


def from_annotations(declarations, where: str) -> dict[str, TuneSpec]:
    """`_core.TuneDeclaration`s (a source's `// @jaxcc fn tune="BLOCK=16,32; UNROLL=1,2"`, read
    and checked by the signature stage) -> {function: TuneSpec}, as `tune=` on the loader would
    give (decision 159a)."""
    tune = {d.function: {p.name: list(p.values) for p in d.parameters} for d in declarations}
    specs = parse_tune(tune, where)
    for d in declarations:
        specs[d.function].where = d.where
    return specs


def merge_annotations(loader: dict[str, TuneSpec], declarations, where: str) -> dict:
    """The loader's `tune=` and the sources' annotations together. One function declared both
    ways is a SpecError: which candidates were meant cannot be told (decision 159a)."""
    annotated = from_annotations(declarations, where)
    both = sorted(set(loader) & set(annotated))
    if both:
        places = "; ".join(f"{fn} at {annotated[fn].where}" for fn in both)
        raise SpecError(
            f'{where}: tune= on the loader and a tune="..." annotation both declare '
            f"{', '.join(both)} ({places}); keep one: drop the function from the loader's tune= "
            'or the annotation\'s tune="..."'
        )
    return {**annotated, **loader}


def _typed(config: dict, declared: Autotune) -> dict:
    """The configuration with the values as the user gave them (ints stay ints) for predicates."""
    out = {}
    for name, token in config.items():
        for value in declared.params[name]:
            if _token(value) == token:
                out[name] = value
    return out


def module_configs(specs: dict[str, TuneSpec]) -> list[dict]:
    """The module builds that cover every tuned function: each function's configurations, one
    build per distinct macro set (functions tuning the same parameters share builds). The first
    is the reference build: the union of every function's reference configuration."""
    reference: dict = {}
    for spec in specs.values():
        reference.update(spec.reference)
    builds = [reference]
    for spec in specs.values():
        for config in spec.configs:
            full = {**reference, **config}
            if full not in builds:
                builds.append(full)
    return builds
