"""One tuning key's decision (decisions 156b, 191-194): tuning inputs at the shapes the kernel
runs on, the variants measured in the tuning child (isolation.py; in this process only for a
variant loaded without a recipe), the reference rule, exclusions named (differs, raised,
crashed, timed out), the decision by median with ties within noise broken by rule, and the
record that store.py keeps."""

from __future__ import annotations

import os
import sys
import time
import warnings

from jaxcc.errors import AutotuneError, AutotuneWarning, SpecError

from . import isolation, keys, measure, runner, wire
from .spec import config_text

# One call of a variant may run this long without JAXCC_TUNE_BUDGET_S; with it, the budget
# (at least _MIN_BOUND_S: the first call compiles). Past it the variant is ended and named.
_DEFAULT_BOUND_S = 60.0
_MIN_BOUND_S = 1.0
_warned: set[tuple[str, str, str]] = set()  # (reference target, config tag, what): warned once


def budget_s() -> float | None:
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


def default_key(shapes, attributes) -> str:
    del attributes
    return ",".join(f"{s.dtype}[{','.join(str(d) for d in s.shape)}]" for s in shapes)


def quiet() -> bool:
    """Whether this machine is quiet enough to time on: the 1-minute load average under half
    its cores."""
    try:
        return os.getloadavg()[0] < 0.5 * (os.cpu_count() or 1)
    except OSError:
        return False


def budget_raised(record: dict) -> bool:
    """A decision cut short by JAXCC_TUNE_BUDGET_S is timed again, the variants it did not reach
    too, once the budget is raised above the one it was made under (or unset): what its warning
    tells the user to do."""
    if not record.get("budget_exhausted"):
        return False
    now = budget_s()
    return now is None or now > float(record.get("budget_s") or 0)


def retime_due(record: dict) -> bool:
    """A decision made under load is timed once more, by the next process that needs it on a
    quiet machine (on a busy one it would be noise again), unless JAXCC_TUNE_RETIME=0 keeps
    every stored decision as it is (runs that must not time, e.g. a test of the cache)."""
    if os.environ.get("JAXCC_TUNE_RETIME", "").strip() == "0":
        return False
    return bool(record.get("noisy")) and record.get("retimes", 0) < 1 and quiet()


def print_line(qualname: str, record: dict, cached: bool, shipped: bool) -> None:
    if os.environ.get("JAXCC_PRINT_AUTOTUNING", "") in ("", "0"):
        return
    line = (
        f"jaxcc autotune: {qualname} key={record['key']} device={record['device']} -> "
        f"{record['chosen_text']} {record['time_s'] * 1e6:.1f} us (slowest "
        f"{record['slowest_s'] * 1e6:.1f} us, {record['tried']} tried)"
    )
    if record.get("reference"):
        line += f" ref {record['reference']}"
    if record.get("ties"):
        line += f" tie {'|'.join(record['ties'])}"
    if record.get("excluded"):
        line += " excluded " + "; ".join(f"{c} ({w})" for c, w in record["excluded"].items())
    if record.get("noisy"):
        line += f" [under load: spread {record['spread'] * 100:.0f}%, "
        line += "retimed once]" if record.get("retimes") else "retimed by a later quiet process]"
    line += (" cached" if cached else "") + (" shipped" if shipped else "")
    line += " [budget exhausted]" if record.get("budget_exhausted") else ""
    print(line, file=sys.stderr, flush=True)


def tuning_inputs(fn, shapes, attributes) -> list:
    import numpy as np

    hook = fn._tune.options.tune_inputs
    if hook is not None:
        xs = list(hook(shapes, attributes))
        if len(xs) != len(shapes):
            raise SpecError(
                f"{fn.name}: tune_inputs returned {len(xs)} arrays for {len(shapes)} operands"
            )
        return [np.asarray(x) for x in xs]
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


def _outs_description(outs):
    if outs is None:
        return None
    many = isinstance(outs, (list, tuple))
    return many, [(tuple(o.shape), str(o.dtype)) for o in (outs if many else [outs])]


def _reference_cannot(fn, tag: str, key: str, why: str) -> AutotuneError:
    named = fn._tune.options.reference is not None
    return AutotuneError(
        f"{fn.__qualname__}: the reference configuration {config_text(fn._variants[tag][0])}"
        f"{' (named by reference=)' if named else ''} cannot run at key {key}: {why}. Nothing "
        "was decided or stored. Check that the kernel accepts these operands (dtype, shape), "
        "give structured inputs with jaxcc.Autotune(..., tune_inputs=...), or name another "
        "reference with jaxcc.Autotune(..., reference={...})"
    )


def _measure(fn, job: dict, key: str) -> dict:
    """The job measured in the tuning child, or here when a variant has no recipe. A crash or
    hang of the reference is an AutotuneError when it was named; otherwise the next
    configuration in candidate order becomes the reference (decision 194)."""
    import jax

    job["x64"] = bool(jax.config.jax_enable_x64)
    if any(tag not in fn._recipes for tag in job["order"]) or not _crosses(job["attributes"]):
        messages: list = []
        runner.run_job(job, {t: fn._variants[t][1] for t in job["order"]}, messages.append)
        return {**messages[-1][1], "failed": {}}

    def on_failure(tag: str, what: str, lines: list[str]) -> dict:
        if tag == job["order"][0] and (fn._tune.options.reference is not None
                                       or len(job["order"]) == 1):  # fmt: skip
            raise _reference_cannot(fn, tag, key, _what(what))
        job["order"] = [t for t in job["order"] if t != tag]
        job["recipes"] = {t: job["recipes"][t] for t in job["order"]}
        job.setdefault("crash_lines", {})[tag] = lines
        return job

    job["recipes"] = {tag: (fn._recipes[tag], fn.name) for tag in job["order"]}
    return isolation.measure(job, fn.platform, on_failure)


def _crosses(attributes: dict) -> bool:
    """Whether the attributes can go to the tuning child (wire.py carries Python and NumPy
    scalars; an attribute of another numbers.Real type is measured here)."""
    try:
        wire.encode(attributes)
    except TypeError:
        return False
    return True


def _what(problem: str) -> str:
    if problem.startswith(("SIG", "signal", "exited", "stopped")):
        return f"it crashed ({problem})"
    return f"it {problem}" if problem.startswith(("timed out", "raised")) else problem


def _fatal(problem: str) -> bool:
    """Whether an exclusion is one a retime must not run again: a crash or a time-out (each
    costs a tuning child, or its bound), or a raise (on a GPU it poisons the child's context)."""
    return problem.startswith(("it crashed", "it timed out", "it raised"))


def tune(fn, shapes, outs, attributes, key: str, device: str, retimes: int,
         earlier: dict | None = None) -> dict:  # fmt: skip
    """The decision for one key: measured, checked, chosen; warnings for what was left out.
    `earlier`: a retimed decision's exclusions (config text -> what happened); a variant that
    crashed, hung or raised then is not run again, and stays excluded."""
    budget = budget_s()
    fn._convert_attributes(attributes)  # a CallError for attributes it does not take, here
    start = time.time()
    text = {t: config_text(fn._variants[t][0]) for t in fn._variants}
    kept = {t: w for t in fn._variants if _fatal(w := (earlier or {}).get(text[t], ""))}
    order = [fn._reference_tag] + [t for t in fn._variants if t != fn._reference_tag]
    order = [t for t in order if t not in kept]
    job = {
        "qualname": fn.__qualname__, "order": order, "outs": _outs_description(outs),
        "attributes": dict(attributes), "inputs": tuning_inputs(fn, shapes, attributes),
        "rtol": fn._tune.options.rtol, "atol": fn._tune.options.atol,
        "budget_s": budget, "cache_dir": fn._module._tune_cache_dir,
        "fresh_after_raise": fn.platform == "cuda",
        "bound_s": _DEFAULT_BOUND_S if budget is None else max(budget, _MIN_BOUND_S),
    }  # fmt: skip
    result = _measure(fn, job, key)
    reference = job["order"][0]
    if "load_error" in result:
        raise AutotuneError(
            f"{fn.__qualname__}: the tuning process could not load the variants: "
            f"{result['load_error']}"
        )
    if "reference_raised" in result:
        raise _reference_cannot(fn, reference, key, f"it raised: {result['reference_raised']}")
    excluded = {**{t: _what(w) for t, w in result["failed"].items()}, **result["excluded"]}
    stats = result["stats"]
    checked = len(stats) + len(result["excluded"])
    if checked > 1 and len(stats) == 1 and result["excluded"]:
        detail = "; ".join(f"{config_text(fn._variants[t][0])}: {p}"
                           for t, p in result["excluded"].items())  # fmt: skip
        raise AutotuneError(
            f"{fn.__qualname__}: every variant disagrees with the reference configuration "
            f"{config_text(fn._variants[reference][0])} ({detail}). Either the reference or the "
            "kernel's use of the tuned parameters is wrong; check the kernel, name a trusted "
            "configuration with jaxcc.Autotune(reference={...}), or loosen rtol=/atol= if the "
            "differences are rounding"
        )
    chosen, ties = measure.decide(stats, order, reference)
    _warn(fn, excluded, reference, key)
    excluded.update(kept)  # warned of by the process that found them
    elapsed = time.time() - start
    exhausted = result["exhausted"]
    tried = checked + len(result["failed"])
    if exhausted:
        warnings.warn(
            f"jaxcc: tuning {fn.__qualname__} for key {key} passed JAXCC_TUNE_BUDGET_S="
            f"{budget:g} after {tried} of {len(fn._variants)} variants ({elapsed:.2f} s); kept "
            f"the best so far, {text[chosen]}, and remembered it (delete the decision with "
            "`jaxcc cache clear` or raise the budget to time the rest)",
            AutotuneWarning,
            stacklevel=keys.user_stacklevel(),
        )
    spread = stats[chosen]["spread"]
    return {
        "module": fn._module.name, "function": fn.name, "key": key, "device": device,
        "chosen": chosen, "chosen_text": text[chosen], "target": fn._variants[chosen][1].target,
        "reference": text[reference],
        "time_s": stats[chosen]["median"],
        "slowest_s": max(s["median"] for s in stats.values()),
        "tried": tried,
        "times_s": {text[t]: s["median"] for t, s in stats.items()},
        "spreads": {text[t]: round(s["spread"], 4) for t, s in stats.items()},
        "ratios": {text[t]: round(s["ratio"], 4) for t, s in stats.items() if "ratio" in s},
        "rounds": max(s["n"] for s in stats.values()),
        "ties": [text[t] for t in ties],
        "spread": spread, "noisy": spread > measure.NOISY_SPREAD, "retimes": retimes,
        "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "excluded": {text[t]: w for t, w in excluded.items()},
        "isolated": all(t in fn._recipes for t in order),
        "tuning_s": elapsed, "budget_exhausted": exhausted, "budget_s": budget,
        "created_unix": time.time(),
    }  # fmt: skip


def _warn(fn, excluded: dict, reference: str, key: str) -> None:
    """One AutotuneWarning per variant and kind of failure, at the user's line."""
    ref = config_text(fn._variants[reference][0])
    for tag, problem in excluded.items():
        kind = "crash" if "crashed" in problem else "hang" if "timed out" in problem else "check"
        seen = (fn.target, tag, kind)
        if seen in _warned:
            continue
        _warned.add(seen)
        warnings.warn(
            f"jaxcc: {fn.__qualname__}: variant {config_text(fn._variants[tag][0])} is left out "
            f"of tuning at key {key}: {problem} (reference {ref}, rtol="
            f"{fn._tune.options.rtol:g}, atol={fn._tune.options.atol:g}); the decision records "
            "it, so later processes never run it",
            AutotuneWarning,
            stacklevel=keys.user_stacklevel(),
        )
