"""Choosing a tuned function's variant (decision 156b): the first call (or trace, under jax.jit
or vmap) for a new tuning key times every variant on inputs of those shapes, drops the variants
whose outputs disagree with the reference configuration, and calls the fastest; the decision is
kept in memory and in the cache directory (store.py), so later traces and processes time
nothing."""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
import warnings

from jaxcc.call.kernel_function import KernelFunction
from jaxcc.errors import AutotuneError, AutotuneWarning, JaxccError, SpecError

from . import store
from .spec import TuneSpec, config_tag, config_text

_lock = threading.Lock()
_decisions: dict[str, dict] = {}  # decision id -> record, this process
_warned: set[tuple[str, str]] = set()  # (reference target, config tag): disagreement warned

# Timing: calls before measuring (the first compiles), then at least _MIN_RUNS and at most
# _MAX_RUNS measured calls, stopping once a variant has had _TARGET_S of measured time.
_WARMUP = 2
_MIN_RUNS = 5
_MAX_RUNS = 50
_TARGET_S = 0.2


def _budget_s() -> float | None:
    text = os.environ.get("JAXCC_TUNE_BUDGET_S", "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise SpecError(
            f"JAXCC_TUNE_BUDGET_S={text!r} is not a number of seconds; set e.g. 30, or unset it"
        ) from None
    return value if value > 0 else None


def _print(line: str) -> None:
    if os.environ.get("JAXCC_PRINT_AUTOTUNING", "") not in ("", "0"):
        print(line, file=sys.stderr, flush=True)


def default_key(shapes, attributes) -> str:
    del attributes
    return ",".join(f"{s.dtype}[{','.join(str(d) for d in s.shape)}]" for s in shapes)


class TunedFunction(KernelFunction):
    """A KernelFunction whose calls go to the variant chosen for the operands' tuning key.

    `variants`: {config tag: (config, that variant's KernelFunction)}, in candidate order.
    `target` stays the reference build's plain name; `chosen_target(*arrays, ...)` says which
    variant a call with such operands runs (tuning first if needed)."""

    def __init__(self, module, reference: KernelFunction, spec: TuneSpec, variants: dict):
        super().__init__(
            module.name, reference.target, reference.spec, reference.vmap_method,
            reference.platform,
        )  # fmt: skip
        self._module = module
        self.load_request, self.module_key = reference.load_request, reference.module_key
        self._tune = spec
        self._variants = variants
        self._shipped: dict[str, dict] = {}  # decision id -> record, from a bundle (159b)
        self._reference_tag = config_tag(spec.reference)
        if self._reference_tag not in variants:  # it failed to compile: the first one that built
            self._reference_tag = next(iter(variants))

    @property
    def variant_targets(self) -> dict[str, str]:
        """Config text -> FFI target of every variant that compiled."""
        return {config_text(c): fn.target for c, fn in self._variants.values()}

    # Under a sharding rule each shard chooses by its own operands (decision 159c), which only
    # custom_partitioning and shard_map show Python; XLA's batch partitioner would not.
    _batch_path_ok = False

    def __call__(self, *arrays, outs=None, **attributes):
        if len(arrays) != self.num_args or self.sharding is not None:
            return super().__call__(*arrays, outs=outs, **attributes)  # CallError, or per shard
        self._check_arrays(arrays)
        chosen = self._choose(arrays, outs, attributes)
        return self._variants[chosen][1](*arrays, outs=outs, **attributes)

    def _shard_target(self, xs, types, attributes) -> str:
        outs = types[0] if len(types) == 1 else list(types)
        return self._variants[self._choose(xs, outs, attributes)][1].target

    def chosen_config(self, *arrays, outs=None, **attributes) -> dict:
        return dict(self._variants[self._choose(arrays, outs, attributes)][0])

    def _choose(self, arrays, outs, attributes) -> str:
        import jax

        shapes = [jax.ShapeDtypeStruct(tuple(a.shape), a.dtype) for a in arrays]
        if not all(isinstance(d, int) for s in shapes for d in s.shape):
            return self._untunable(shapes)
        options = self._tune.options
        key = (options.key or default_key)(shapes, attributes)
        if not isinstance(key, str):
            key = repr(key)
        device = self._device_model()
        ident = store.decision_id(
            self._module.key, self.name, list(self._variants), self._reference_tag, key, device
        )
        cache_dir = self._module._tune_cache_dir
        with _lock:
            record = _decisions.get(ident)
            if record is None:
                record = self._shipped.get(ident) or store.read(cache_dir, ident)
                if record is not None and record.get("chosen") in self._variants:
                    _decisions[ident] = record
                    self._report(record, cached=True, shipped=ident in self._shipped)
                else:
                    record = self._tune_now(shapes, outs, attributes, key, device)
                    _decisions[ident] = record
                    store.write(cache_dir, ident, record)
                    self._report(record, cached=False)
        return record["chosen"]

    def _untunable(self, shapes) -> str:
        """Symbolic sizes (jax.export with shape polymorphism): nothing to time on, so the call
        uses the reference configuration, said once per function."""
        if (self.target, "symbolic") not in _warned:
            _warned.add((self.target, "symbolic"))
            warnings.warn(
                f"jaxcc: {self.__qualname__} is traced with symbolic sizes "
                f"({default_key(shapes, {})}), which cannot be timed; it calls the reference "
                f"configuration {config_text(self._variants[self._reference_tag][0])}. Export "
                "with concrete shapes to get the tuned variant",
                AutotuneWarning,
                stacklevel=4,
            )
        return self._reference_tag

    def _device_model(self) -> str:
        if self.platform == "cuda":
            import jax

            return f"gpu:{jax.devices('gpu')[0].device_kind}"
        return f"cpu:{store.cpu_model()}"

    def _report(self, record: dict, cached: bool, shipped: bool = False) -> None:
        _print(
            f"jaxcc autotune: {self.__qualname__} key={record['key']} "
            f"device={record['device']} -> {record['chosen_text']} "
            f"{record['time_s'] * 1e6:.1f} us (slowest {record['slowest_s'] * 1e6:.1f} us, "
            f"{record['tried']} tried)" + (" cached" if cached else "")
            + (" shipped" if shipped else "")
            + (" [budget exhausted]" if record.get("budget_exhausted") else "")
        )  # fmt: skip

    def _inputs(self, shapes, attributes):
        import numpy as np

        hook = self._tune.options.tune_inputs
        if hook is not None:
            xs = list(hook(shapes, attributes))
            if len(xs) != len(shapes):
                raise SpecError(
                    f"{self.name}: tune_inputs returned {len(xs)} arrays for {len(shapes)} operands"
                )
            return xs
        rng = np.random.default_rng(0)
        xs = []
        for s in shapes:
            dtype = np.dtype(s.dtype)
            if dtype.kind == "b":
                xs.append(rng.random(s.shape) < 0.5)
            elif dtype.kind in "iu":
                xs.append(rng.integers(0, 8, size=s.shape).astype(dtype))
            elif dtype.kind == "c":
                xs.append(
                    (rng.standard_normal(s.shape) + 1j * rng.standard_normal(s.shape)).astype(dtype)
                )
            else:
                xs.append(rng.standard_normal(s.shape).astype(dtype))
        return xs

    def _tune_now(self, shapes, outs, attributes, key, device) -> dict:
        import jax

        budget = _budget_s()
        start = time.perf_counter()
        order = [self._reference_tag] + [t for t in self._variants if t != self._reference_tag]
        # Under an outer jax.jit or vmap trace the timing runs eagerly, outside that trace.
        with jax.ensure_compile_time_eval():
            xs = [jax.device_put(x) for x in self._inputs(shapes, attributes)]
            runs, disagree, exhausted = {}, {}, False
            expected = None
            for tag in order:  # compile and check each variant; the reference first
                if budget is not None and runs and time.perf_counter() - start > budget:
                    exhausted = True
                    break
                run = jax.jit(self._timed_call(self._variants[tag][1], outs, attributes))
                try:
                    result = self._run(run, xs)
                except (jax.errors.JaxRuntimeError, JaxccError) as e:
                    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                    if expected is not None:
                        disagree[tag] = f"it raised: {first}"
                        continue
                    raise AutotuneError(
                        f"{self.__qualname__}: the reference configuration "
                        f"{config_text(self._variants[tag][0])} raised on the tuning inputs "
                        f"(random values of shapes {key}): {first}. If the kernel needs "
                        "structured inputs (indices, sorted data), give them with "
                        "jaxcc.Autotune(..., tune_inputs=lambda shapes, attributes: [...])"
                    ) from e
                if expected is None:
                    expected = result
                elif problem := self._compare(expected, result):
                    disagree[tag] = problem
                    continue
                runs[tag] = run
            tried = len(runs) + len(disagree)
            self._warn_disagreement(disagree, tried)
            times, cut = self._time(runs, xs, start, budget)
        exhausted = exhausted or cut
        chosen = min(times, key=times.get)
        elapsed = time.perf_counter() - start
        if exhausted:
            warnings.warn(
                f"jaxcc: tuning {self.__qualname__} for key {key} passed JAXCC_TUNE_BUDGET_S="
                f"{budget:g} after {tried} of {len(self._variants)} variants ({elapsed:.2f} s); "
                f"kept the best so far, {config_text(self._variants[chosen][0])}, and remembered "
                "it (delete the decision with `jaxcc cache clear` or raise the budget to time "
                "the rest)",
                AutotuneWarning,
                stacklevel=4,
            )
        return {
            "module": self._module.name,
            "function": self.name,
            "key": key,
            "device": device,
            "chosen": chosen,
            "chosen_text": config_text(self._variants[chosen][0]),
            "target": self._variants[chosen][1].target,
            "time_s": times[chosen],
            "slowest_s": max(times.values()),
            "tried": tried,
            "times_s": {config_text(self._variants[t][0]): v for t, v in times.items()},
            "excluded": {config_text(self._variants[t][0]): p for t, p in disagree.items()},
            "tuning_s": elapsed,
            "budget_exhausted": exhausted,
            "created_unix": time.time(),
        }

    @staticmethod
    def _time(runs: dict, xs, start: float, budget) -> tuple[dict, bool]:
        """Median seconds per call of each run. Interleaved rounds (one call of each variant per
        round) so that a burst of load from other processes falls on every variant alike rather
        than on whichever was being timed; at least _MIN_RUNS rounds, then rounds until each has
        about _TARGET_S of samples or _MAX_RUNS. Past the budget, the rounds done so far count."""
        import jax

        for run in runs.values():
            for _ in range(_WARMUP):
                jax.block_until_ready(run(*xs))
        samples: dict = {tag: [] for tag in runs}
        cut = False
        for rounds in range(_MAX_RUNS):
            for tag, run in runs.items():
                t0 = time.perf_counter()
                jax.block_until_ready(run(*xs))
                samples[tag].append(time.perf_counter() - t0)
            if rounds + 1 >= _MIN_RUNS and min(sum(v) for v in samples.values()) >= _TARGET_S:
                break
            if budget is not None and time.perf_counter() - start > budget:
                cut = len(runs) > 1 and rounds + 1 < _MIN_RUNS
                break
        return {tag: statistics.median(v) for tag, v in samples.items()}, cut

    @staticmethod
    def _timed_call(fn: KernelFunction, outs, attributes):
        """The variant's plain FFI call: no sharding rule (timing runs on one device, and may
        run inside a shard's partitioning, where a nested custom_partitioning would not do)."""
        import jax

        if fn.has_scratch:
            return lambda *a: fn(*a, outs=outs, **attributes)
        converted = fn._convert_attributes(attributes)

        def call(*a):
            types, _ = fn._output_types(a, outs)
            return jax.ffi.ffi_call(fn.target, types, vmap_method=fn.vmap_method)(*a, **converted)

        return call

    @staticmethod
    def _run(run, xs):
        import jax
        import numpy as np

        out = jax.block_until_ready(run(*xs))
        leaves = out if isinstance(out, (list, tuple)) else [out]
        return [np.asarray(leaf) for leaf in leaves]

    def _compare(self, expected, result) -> str:
        """'' when `result` matches the reference's outputs: integers and bools exactly, floats
        within atol + rtol * (the largest magnitude of that reference output). Relative to the
        output's scale, not each element's: a blocked sum reorders the additions, and an element
        that cancels to near zero carries the rounding of the large terms it summed."""
        import numpy as np

        options = self._tune.options
        for i, (want, got) in enumerate(zip(expected, result, strict=True)):
            if want.shape != got.shape:
                return f"output {i + 1} has shape {got.shape}, the reference {want.shape}"
            if want.dtype.kind in "biu":
                if not np.array_equal(want, got):
                    return f"output {i + 1} differs from the reference's (integers: exactly)"
                continue
            want64 = want.astype(np.complex128)
            diff = np.abs(got.astype(np.complex128) - want64)
            finite = np.isfinite(want64)
            if not np.array_equal(finite, np.isfinite(got.astype(np.complex128))):
                return f"output {i + 1} has non-finite values where the reference has none"
            scale = float(np.max(np.abs(want64[finite]), initial=0.0))
            worst = float(np.max(diff[finite], initial=0.0))
            if worst > options.atol + options.rtol * scale:
                return (
                    f"output {i + 1} differs from the reference by up to {worst:.3g} "
                    f"(largest reference magnitude {scale:.3g})"
                )
        return ""

    def _warn_disagreement(self, disagree: dict, tried: int) -> None:
        if not disagree:
            return
        reference = config_text(self._variants[self._reference_tag][0])
        if tried > 1 and len(disagree) == tried - 1:
            detail = "; ".join(
                f"{config_text(self._variants[t][0])}: {p}" for t, p in disagree.items()
            )
            raise AutotuneError(
                f"{self.__qualname__}: every variant disagrees with the reference configuration "
                f"{reference} ({detail}). Either the reference or the kernel's use of the tuned "
                "parameters is wrong; check the kernel, name a trusted configuration with "
                "jaxcc.Autotune(reference={...}), or loosen rtol=/atol= if the differences are "
                "rounding"
            )
        for tag, problem in disagree.items():
            with_key = (self.target, tag)
            if with_key in _warned:
                continue
            _warned.add(with_key)
            warnings.warn(
                f"jaxcc: {self.__qualname__}: variant {config_text(self._variants[tag][0])} is "
                f"left out of tuning: {problem} (reference {reference}, rtol="
                f"{self._tune.options.rtol:g}, atol={self._tune.options.atol:g})",
                AutotuneWarning,
                stacklevel=5,
            )
