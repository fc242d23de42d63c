"""check_kernel's `bounds` row (decision 160): the kernel's module built again under the debug
profile (decision 150c: -O0 -g, 4096 guard bytes before and after every output and Scratch
workspace, checked when the function returns) and run on the sample arguments, so that a write
past either end of an output is found where XLA's end-to-end buffers would hide it.

Inputs are on padded copies too, their guard bytes filled with JAXCC_DEBUG_INPUT_FILL (decision
220): the row runs the debug build with two fills, and outputs that change with the fill alone
(and not between two runs with the same fill) come from a read outside an input; one zone at a
time then names the input and the side. Synchronous and `jaxcc::Async` bodies alike.

The debug build is its own cache entry (the key names `debug=1`) registered under its own
target prefix, `<prefix>_jaxcc_debug_<first 12 of the module's key>`: a new name per version of
the code, so the user's targets, the versioned names of decision 155 and their ReloadWarning never
see it. After the first check of a version it is a warm load."""

from __future__ import annotations

import contextlib
import os

import numpy as np

from .rows import FAILED, PASSED, SKIPPED
from .subject import Subject, differing, first_line

# The debug runtime's message (include/jaxcc/detail/debug_guards.h) starts with this.
_GUARD_MESSAGE = "jaxcc debug profile: "
_OUTSIDE = "outside"  # _guarded_run's status for a guard's finding
_GUARD_BYTES = 4096  # debug_guards.h's kGuardBytes, for the row's text
_PREFIX_CHARS = 100  # of the user's prefix: with the suffix, within the 128 a prefix may have
_FILL_VARIABLE = "JAXCC_DEBUG_INPUT_FILL"  # read by debug_guards.h at every call
# The two fills of the inputs' guard bytes: 0x4B4B4B4B is 1.3e7 as a float32 and 0xC7C7C7C7 is
# -1.0e5 (float64: 4e53 and -6e37; int32: 1263225675 and -943208505): large, of opposite signs,
# neither a NaN, so a read of either changes a sum, a product, a max or a comparison.
_FILLS = (75, 199)


def _twin_prefix(prefix: str, key: str) -> str:
    return f"{prefix[:_PREFIX_CHARS]}_jaxcc_debug_{key[:12]}"


def _debug_twin(fn):
    """`fn` from its module built under the debug profile, or a reason string why there is none."""
    from jaxcc.build import load_request
    from jaxcc.build.options import RunOptions

    request = fn.load_request
    if request is None:
        return "its module was not loaded by load_* in this process (a bundle?)"
    if request.debug:
        return fn  # built under the debug profile already (debug=True or JAXCC_DEBUG)
    twin = request.debug_twin(_twin_prefix(request.target_prefix, fn.module_key))
    return load_request.load(twin, RunOptions())[fn.name]


def _cannot_check(fn) -> str | None:
    """Why the debug profile's guards cannot watch `fn`'s outputs here, or None."""
    from .rows import _gpu_present

    if fn.platform == "cuda":
        if not _gpu_present():
            return "a CUDA kernel and no GPU in this process"
        return (
            "a CUDA kernel: the debug profile guards host buffers only (decision 150c); run "
            "the script under compute-sanitizer with JAXCC_DEBUG=1 for device writes"
        )
    return None


@contextlib.contextmanager
def _input_fill(value: str):
    """JAXCC_DEBUG_INPUT_FILL set to `value` for the calls inside, then as it was."""
    before = os.environ.get(_FILL_VARIABLE)
    os.environ[_FILL_VARIABLE] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[_FILL_VARIABLE]
        else:
            os.environ[_FILL_VARIABLE] = before


def _run_twin(twin, make_arrays, outs, attributes, fill: str) -> list:
    with _input_fill(fill):
        result = twin(*make_arrays(), outs=outs, **attributes)
        # np.asarray: the error of an asynchronous dispatch surfaces here, under the fill.
        leaves = result if isinstance(result, (list, tuple)) else [result]
        return [np.asarray(leaf) for leaf in leaves]


def _moved(first: list, second: list, again: list, tolerance) -> bool:
    """Whether an output differs between `first` and `second` (run under two fills) beyond
    `tolerance(dtype)` where `first` and `again` (the first fill once more) agree: elements the
    kernel never writes, or whose last bits vary from run to run, are not the fill's doing."""
    for a, b, c in zip(first, second, again, strict=True):
        steady = ~differing(a, c, tolerance(a.dtype))
        if (differing(a, b, tolerance(a.dtype)) & steady).any():
            return True
    return False


def _read_outside(fn, twin, make_arrays, outs, attributes, outputs, tolerance) -> str | None:
    """The input zones whose fill alone changes the outputs, named, or None: the debug build run
    under the second fill, and where that moves an output, one zone at a time under each fill."""
    low, high = (str(fill) for fill in _FILLS)
    if not _moved(outputs, _run_twin(twin, make_arrays, outs, attributes, high), outputs,
                  tolerance):  # fmt: skip
        return None
    again = _run_twin(twin, make_arrays, outs, attributes, low)
    if not _moved(outputs, _run_twin(twin, make_arrays, outs, attributes, high), again,
                  tolerance):  # fmt: skip
        return None  # the outputs vary from run to run, whatever the fill
    names = [p.name for p in fn.spec.params if p.kind == "arg"]
    found = []
    for i, name in enumerate(names):
        for side, words in (("before", "before the start"), ("after", "past the end")):
            one = [_run_twin(twin, make_arrays, outs, attributes, f"{fill}@{i}:{side}")
                   for fill in _FILLS]  # fmt: skip
            if _moved(one[0], one[1], one[0], tolerance):
                found.append(f"reads {words} of input `{name}`")
    what = "; ".join(found) or "reads outside an input (no one input's guard zone alone)"
    return (f"function '{fn.name}' {what}: its outputs change with the {_GUARD_BYTES} guard "
            "bytes there alone (two fills, the rest of the call the same); check the index "
            "arithmetic that reads it")  # fmt: skip


def _guarded_run(fn, make_arrays, outs, attributes, tolerance) -> tuple[str, object]:
    """Runs the debug build of `fn`: (PASSED, its outputs as numpy arrays), (SKIPPED, why),
    (FAILED, the error it raised) or (OUTSIDE, the guards' finding: a write outside an output
    or an input, or a read outside an input)."""
    twin = _debug_twin(fn)
    if isinstance(twin, str):
        return SKIPPED, twin
    try:
        outputs = _run_twin(twin, make_arrays, outs, attributes, str(_FILLS[0]))
        read = _read_outside(fn, twin, make_arrays, outs, attributes, outputs, tolerance)
    except Exception as e:  # noqa: BLE001  # the guard's error is the finding
        text = str(e)
        if _GUARD_MESSAGE not in text:
            return FAILED, f"the debug build (-O0 -g) raised {first_line(e)}"
        finding = text.split(_GUARD_MESSAGE, 1)[1].splitlines()[0]
        return _OUTSIDE, finding.split("; check the index arithmetic", 1)[0]
    if read:
        return _OUTSIDE, read
    return PASSED, outputs


def _kernel_functions(subject: Subject):
    """(backend, its jaxcc KernelFunction or None, the attributes it takes) for each backend of
    an XLACustomKernel on this process's platform, its kernel generator called as lowering calls
    it (run_kernel)."""
    import jax

    from jaxcc._jax_compat import ShapedArray
    from jaxcc.call.kernel_function import KernelFunction

    platform = "gpu" if jax.default_backend() == "gpu" else jax.default_backend()
    table = subject.fn.kernel_table
    outs = tuple(ShapedArray(tuple(t.shape), t.dtype) for t in subject.declared())
    for backend in table.backends(platform):
        entry = table.entries()[platform][backend]
        try:
            kernel = entry.kernel_generator(outs=outs, **subject.attrs)
        except Exception:  # noqa: BLE001  # the backends row reports a failing backend
            kernel = None
        if not isinstance(kernel, KernelFunction):
            yield backend, None, {}
            continue
        attributes = {k: v for k, v in subject.attrs.items() if k in kernel.attribute_types}
        if kernel.has_scratch and "scratch_bytes" in subject.attrs:
            attributes["scratch_bytes"] = subject.attrs["scratch_bytes"]
        yield backend, kernel, attributes


def _kernels(subject: Subject, skipped: list) -> list:
    """(label, kernel function, its attributes, outs of a subject) per kernel to guard."""
    if not subject.is_primitive:
        return [("", subject.fn, subject.attrs, lambda at: at.outs)]
    kernels = []
    for backend, kernel, attributes in _kernel_functions(subject):
        if kernel is None:
            skipped.append(f"backend {backend!r}: not a jaxcc C++/CUDA kernel function")
        else:
            kernels.append((f"backend {backend!r}: ", kernel, attributes, Subject.declared))
    return kernels


def bounds_row(subject: Subject, reference=None) -> tuple[str, str]:
    """Runs before the sample call (check_kernel), at the sample and every extra shape. A write
    outside an output (or an input) sets `subject.writes_outside`, and the kernel's own build is
    then never run: there the write lands in XLA's neighbouring buffers or the allocator's
    bookkeeping. A read outside an input sets it too: the release build would read XLA's
    neighbouring buffers, and every row's finding would be that read's by chance."""
    if subject.is_callable:
        return SKIPPED, ("a JAX function: the kernels it calls are not known here (check each "
                         "with check_kernel(mod.fn, ...))")  # fmt: skip
    skipped, done, notes = [], [], []
    shapes = [(None, subject)] + [(case, subject.at(case)) for case in subject.cases]
    for label, fn, attributes, outs_of in _kernels(subject, skipped):
        reason = _cannot_check(fn)
        if reason:
            skipped.append(label + reason)
            continue
        for case, at in shapes:
            where = "" if case is None else f"at {case.label}: "
            status, reason = _guarded_run(fn, at.fresh, outs_of(at), attributes, at.tolerance)
            if status == _OUTSIDE:
                subject.writes_outside = True  # check_kernel then runs nothing else
                subject.reads_outside = " reads " in reason
                return FAILED, label + where + reason
            if status == PASSED:
                if case is None and not subject.is_primitive:
                    subject.debug_outputs = reason  # for `determinism`'s comparison of builds
                continue
            if status == FAILED and case is None:
                return FAILED, label + reason
            if status == FAILED:  # refusing a shape is the kernel's right; not a bounds finding
                notes.append(label + where + reason)
            elif status == SKIPPED:
                skipped.append(label + reason)
                break
        else:
            done.append(label.rstrip(": "))
    if not done:
        return SKIPPED, "; ".join(dict.fromkeys(skipped)) or "no kernel on this platform"
    where = f" ({', '.join(done)})" if any(done) else ""
    more = f" at the sample and {len(subject.cases)} more shape(s)" if subject.cases else ""
    note = f"; not checked: {'; '.join(skipped)}" if skipped else ""
    if notes:
        note += f"; raised: {'; '.join(notes)}"
    return PASSED, (f"the debug build (-O0 -g, {_GUARD_BYTES} guard bytes each side) writes "
                    f"nothing outside its outputs and reads nothing outside its inputs (two "
                    f"fills){more}{where}{note}")  # fmt: skip
