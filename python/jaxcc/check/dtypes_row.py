"""check_kernel's `dtypes` row (issue 50 item 5, decision 222): a kernel whose tensor parameters
declare no dtype takes whatever it is given, and its other dtype paths (a `JAXCC_DISPATCH_*`
branch, an `if (x.dtype() == ...)`) are code no other row runs. The row runs the loaded kernel
with the sample's float32 inputs as float64 (and float64 as float32, int32 as int64, int64 as
int32) and compares with `reference=`, or without one with the sample's own outputs, at the
tolerance of the less precise dtype. A dtype the kernel refuses (INVALID_ARGUMENT: a
DTypeError from a dispatch macro or data_ptr<T>(), a CheckError) is "not accepted", not a
failure. 64-bit dtypes need JAX's x64 mode; where this process is not in it they run in a child
process that loads the module's bundle with JAX_ENABLE_X64=1 (x64_child.py; one child for the
process's life), its results kept per kernel, attributes and inputs so a second check of the
same kernel sends it nothing.

float16 and bfloat16 are not tried: a kernel that accumulates in half precision differs from any
reference by more than a tolerance that still catches a wrong branch, so the row could only
guess (decision 222)."""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import select
import subprocess
import sys
import tempfile
import threading

import numpy as np

from .reference_row import REFERENCE_TOLERANCES, reference_outputs
from .rows import FAILED, PASSED, SKIPPED
from .subject import Subject, first_line, on_device

# The dtype each sample dtype is also tried as.
_OTHER = {"float32": "float64", "float64": "float32", "int32": "int64", "int64": "int32"}
_WIDE = {"float64", "int64"}  # need x64
# Without a reference the other dtype is compared with the sample's own outputs, which carry
# the sample dtype's rounding (a long float32 sum against its float64 twin): ten times the
# reference tolerance, which a wrong branch still exceeds by orders of magnitude.
_WITHOUT_REFERENCE = 10.0
_CHILD_TIMEOUT_S = 120
_CHILD_RESULTS: dict = {}  # (kernel, attributes, inputs, outs) -> the x64 child's results


def _refused(text: str) -> bool:
    """The kernel refused the inputs (INVALID_ARGUMENT: DTypeError, CheckError), rather than
    failing on them."""
    return "INVALID_ARGUMENT" in text or "DTypeError" in text


def _x64() -> bool:
    import jax

    return bool(jax.config.jax_enable_x64)


def _untyped_inputs(fn) -> list[bool]:
    """Per input: whether its parameter declares no dtype (the kernel takes any)."""
    return [p.dtype is None for p in fn.spec.params if p.kind == "arg"]


def _variants(subject: Subject) -> list[tuple[str, str]]:
    """(from, to) dtype pairs to try: each dtype of an untyped input that _OTHER names."""
    untyped = _untyped_inputs(subject.fn)
    found = []
    for i, array in enumerate(subject.host_args):
        name = np.dtype(array.dtype).name
        if i < len(untyped) and untyped[i] and name in _OTHER and name not in dict(found):
            found.append((name, _OTHER[name]))
    return found


def _converted(subject: Subject, source: str, target: str):
    """(the sample's inputs with `source` arrays as `target`, outs likewise or None)."""
    import jax

    untyped = _untyped_inputs(subject.fn)
    arrays = [a.astype(target) if i < len(untyped) and untyped[i] and a.dtype.name == source
              else a for i, a in enumerate(subject.host_args)]  # fmt: skip
    if subject.outs_fn is not None:
        outs = subject.outs_fn(*arrays)
    else:
        outs = subject.outs
    if outs is None:
        return arrays, None

    def retyped(o):
        dtype = target if np.dtype(o.dtype).name == source else o.dtype
        return jax.ShapeDtypeStruct(tuple(o.shape), dtype)

    return arrays, jax.tree.map(retyped, outs)


def _run_here(subject: Subject, arrays, outs) -> tuple:
    """("ok", outputs) or ("error", text) for the kernel on `arrays` in this process."""

    try:
        result = subject.fn(*[on_device(a) for a in arrays], outs=outs, **subject.attrs)
        leaves = result if isinstance(result, (list, tuple)) else [result]
        return "ok", [np.asarray(o) for o in leaves]
    except Exception as e:  # noqa: BLE001  # refused or failed: the row tells which
        return "error", f"{type(e).__name__}: {e}"


def _child_key(subject: Subject, jobs) -> str | None:
    digest = hashlib.sha256()
    try:
        digest.update(repr((subject.fn.module_key, subject.fn.name,
                            sorted(subject.attrs.items()))).encode())  # fmt: skip
    except TypeError:
        return None
    for arrays, outs in jobs:
        digest.update(repr(outs).encode())
        for a in arrays:
            digest.update(f"{a.dtype}{a.shape}".encode())
            digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest()


class _Child:
    """The x64 child process (x64_child.py --serve), started on first need and kept for the
    process's life: importing JAX and jaxcc is most of a child's cost (about 2 s on 2 cores), so
    one child serves every check. A job is a directory; the child answers a line per job."""

    def __init__(self):
        self.process = None
        self.log = None
        self.lock = threading.Lock()
        self.jobs = 0

    def _start(self):
        self.log = tempfile.TemporaryFile(prefix="jaxcc-check-x64-")
        env = {**os.environ, "JAX_ENABLE_X64": "1", "JAX_PLATFORMS": "cpu"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jaxcc.check.x64_child", "--serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env, text=True,
        )  # fmt: skip
        atexit.register(self.stop)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def _log_tail(self) -> str:
        self.log.seek(0)
        lines = self.log.read().decode(errors="replace").strip().splitlines()
        return lines[-1][:200] if lines else "no output"

    def start(self) -> None:
        """Starts the child unless it runs: check_kernel calls this before its first row, so the
        child's import of JAX overlaps the other rows."""
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                self._start()

    def run(self, work: str) -> str | None:
        """Runs the job in `work`; None when done, else why not (a crash starts a new child
        for the next job)."""
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                self._start()
            self.jobs += 1
            try:
                self.process.stdin.write(f"{self.jobs} {work}\n")
                self.process.stdin.flush()
            except OSError:
                pass
            ready, _, _ = select.select([self.process.stdout], [], [], _CHILD_TIMEOUT_S)
            answer = self.process.stdout.readline() if ready else ""
            if answer.strip() == "done":
                return None
            if not ready:
                self.process.kill()
            code = self.process.wait()
            why = f"the x64 child process {'timed out' if not ready else 'died'} (exit {code})"
            return f"{why}: {self._log_tail()}"


_CHILD = _Child()


def prestart(subject: Subject) -> None:
    """Starts the x64 child now when this check's `dtypes` row will need it."""
    if subject.is_primitive or subject.is_callable or _x64():
        return
    if getattr(subject.fn, "platform", "cpu") == "cuda":
        return
    if any(target in _WIDE for _, target in _variants(subject)):
        _CHILD.start()


def _send(work: str) -> str | None:
    return _CHILD.run(work)


def _json_attrs(attrs: dict) -> dict | None:
    """The attributes as JSON values (numbers, bools), or None when one is not."""
    out = {}
    for name, value in attrs.items():
        value = value.item() if isinstance(value, np.generic) else value
        if not isinstance(value, (bool, int, float)):
            return None
        out[name] = value
    return out


def _outs_to_json(outs):
    """outs for the child (x64_child.outs_from_json): None, or its kind and (shape, dtype)s."""
    if outs is None:
        return None
    kind = "tuple" if isinstance(outs, tuple) else "list" if isinstance(outs, list) else "one"
    items = [outs] if kind == "one" else list(outs)
    return {"kind": kind, "items": [[list(o.shape), np.dtype(o.dtype).name] for o in items]}


def _run_in_child(subject: Subject, jobs) -> list[tuple] | str:
    """Each (arrays, outs) of `jobs` run by the module's bundle in the x64 child process: per
    job ("ok", outputs) or ("error", text); a string says why the child could not run them."""
    from jaxcc import _core
    from jaxcc.environment import discovery

    key = _child_key(subject, jobs)
    if key is not None and key in _CHILD_RESULTS:
        return _CHILD_RESULTS[key]
    request = subject.fn.load_request
    if request is None:
        return "its module was not loaded by load_* in this process (a bundle?)"
    environment = discovery.build_environment(
        request, verbose=False, force_rebuild=False, ninja_workers=0
    )
    attrs = _json_attrs(subject.attrs)
    if attrs is None:
        return "an attribute is not a number or a bool (the child gets them as JSON)"
    with tempfile.TemporaryDirectory(prefix="jaxcc-check-x64-") as work:
        _core.write_bundle(request, environment, os.path.join(work, "bundle"), lambda *a: None)
        job = {"prefix": f"{request.target_prefix}_x64_", "name": subject.fn.name,
               "attrs": attrs, "outs": [_outs_to_json(outs) for _, outs in jobs]}  # fmt: skip
        with open(os.path.join(work, "job.json"), "w") as f:
            json.dump(job, f)
        for j, (arrays, _) in enumerate(jobs):
            np.savez(os.path.join(work, f"inputs_{j}.npz"), *arrays)
        failure = _send(work)
        if failure is not None:
            return failure
        with open(os.path.join(work, "result.json")) as f:
            answers = json.load(f)
        results = []
        for j, answer in enumerate(answers):
            if answer["status"] != "ok":
                results.append(("error", answer["text"]))
                continue
            with np.load(os.path.join(work, f"outputs_{j}.npz")) as saved:
                results.append(("ok", [saved[f"arr_{i}"] for i in range(len(saved.files))]))
    if key is not None:
        if len(_CHILD_RESULTS) > 64:
            _CHILD_RESULTS.clear()
        _CHILD_RESULTS[key] = results
    return results


def _expected(subject: Subject, arrays, sample_outputs, target: str) -> tuple[list, str]:
    """What the `target` run must equal, and against what: the reference on the converted
    inputs, else the sample's own outputs."""
    if subject.reference is not None:
        fresh = [on_device(a) for a in arrays]
        return reference_outputs(subject, fresh), "the reference"
    return sample_outputs, "the sample's own outputs (no reference=)"


def _tolerance_dtype(source: str, target: str, in_child: bool) -> str:
    """The less precise of the two floating dtypes (a reference computed here without x64 is
    float32 too); integers compare exactly."""
    if source.startswith("int"):
        return "int64"
    return "float32" if "float32" in (source, target) or in_child else target


def dtypes_row(subject: Subject, reference) -> tuple[str, str]:
    if subject.is_primitive or subject.is_callable:
        return SKIPPED, ("a loaded kernel function's row (an XLACustomKernel's outs and a JAX "
                         "function's dtypes are declared by their caller)")  # fmt: skip
    if subject.fn.platform == "cuda":
        return SKIPPED, "a CUDA kernel: its other dtypes are not tried here"
    variants = _variants(subject)
    if not variants:
        return SKIPPED, ("no input of float32, float64, int32 or int64 without a declared dtype "
                         "(the kernel takes only what it declares)")  # fmt: skip
    jobs = [_converted(subject, source, target) for source, target in variants]
    child = [v for v in variants if v[1] in _WIDE and not _x64()]
    results: list = [None] * len(variants)
    if child:
        indices = [variants.index(v) for v in child]
        ran = _run_in_child(subject, [jobs[i] for i in indices])
        for i in indices:
            results[i] = ran if isinstance(ran, str) else ran[indices.index(i)]
    for i, (arrays, outs) in enumerate(jobs):
        if results[i] is None:
            results[i] = _run_here(subject, arrays, outs)
    done, notes = [], []
    for (source, target), (arrays, _), result in zip(variants, jobs, results, strict=True):
        where = " (in an x64 child process)" if (source, target) in child else ""
        if isinstance(result, str) and "died (exit -" in result:  # a signal: the kernel crashed
            return FAILED, f"{source} inputs as {target}{where}: {result}"
        if isinstance(result, str):
            notes.append(f"{target}: not run ({result})")
            continue
        if result[0] == "error":
            text = result[1]
            if _refused(text):
                notes.append(f"{target}: not accepted ({_first(text)})")
                continue
            return FAILED, f"{source} inputs as {target}{where}: the kernel raised {_first(text)}"
        try:
            expected, against = _expected(subject, arrays, reference, target)
        except Exception as e:  # noqa: BLE001
            notes.append(f"{target}: the reference raised {first_line(e)}")
            continue
        got = result[1]
        tolerance_dtype = _tolerance_dtype(source, target, bool(where))
        expected = [np.asarray(e).astype(g.dtype) if np.shape(e) == g.shape else np.asarray(e)
                    for e, g in zip(expected, got, strict=False)]  # fmt: skip
        loose = _WITHOUT_REFERENCE if subject.reference is None else 1.0
        diff = _difference(subject, expected, got, tolerance_dtype, loose,
                           f"{source} inputs as {target}{where} vs {against}")  # fmt: skip
        if diff:
            return FAILED, diff
        compared = "compared with the reference" if subject.reference is not None else (
            "compared with the sample's outputs (no reference=), at 10x")  # fmt: skip
        done.append(f"{target}{where}: {compared} at {tolerance_dtype}'s tolerance")
    if not done:
        return PASSED, "no other dtype accepted: " + "; ".join(notes)
    note = f"; {'; '.join(notes)}" if notes else ""
    return PASSED, "; ".join(done) + note


def _difference(subject: Subject, expected, got, tolerance_dtype: str, loose: float,
                what: str) -> str | None:  # fmt: skip
    """subject.difference at REFERENCE_TOLERANCES of `tolerance_dtype` times `loose` (atol
    relative to the expected output's largest magnitude)."""
    rtol, atol = (loose * t for t in REFERENCE_TOLERANCES.get(tolerance_dtype, (0.0, 0.0)))
    table = {np.dtype(g.dtype).name: (rtol, atol) for g in got}
    return subject.difference(expected, got, what, scaled=table)


def _first(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[0] if lines else text)[:240]
