"""check_kernel's `bounds` row (decision 160): the kernel's module built again under the debug
profile (decision 150c: -O0 -g, 4096 guard bytes before and after every output and Scratch
workspace, checked when the function returns) and run on the sample arguments, so that a write
past either end of an output is found where XLA's end-to-end buffers would hide it.

The debug build is its own cache entry (the key names `debug=1`) registered under its own
target prefix, `<prefix>_jaxcc_debug_<first 12 of the module's key>`: a new name per version of
the code, so the user's targets, the versioned names of decision 155 and their ReloadWarning never
see it. After the first check of a version it is a warm load."""

from __future__ import annotations

import numpy as np

from .rows import FAILED, PASSED, SKIPPED
from .subject import Subject, first_line

# The debug runtime's message (include/jaxcc/detail/debug_guards.h) starts with this.
_GUARD_MESSAGE = "jaxcc debug profile: "
_OUTSIDE = "outside"  # _guarded_run's status for a guard's finding
_GUARD_BYTES = 4096  # debug_guards.h's kGuardBytes, for the row's text
_PREFIX_CHARS = 100  # of the user's prefix: with the suffix, within the 128 a prefix may have


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
    if any(p.kind == "async" for p in fn.spec.params):
        return "a jaxcc::Async function: the debug profile does not guard its outputs"
    return None


def _guarded_run(fn, arrays, outs, attributes) -> tuple[str, object]:
    """Runs the debug build of `fn`: (PASSED, its outputs as numpy arrays), (SKIPPED, why),
    (FAILED, the error it raised) or (OUTSIDE, the guard's finding)."""
    twin = _debug_twin(fn)
    if isinstance(twin, str):
        return SKIPPED, twin
    try:
        result = twin(*arrays, outs=outs, **attributes)
        # np.asarray: the error of an asynchronous dispatch surfaces here.
        leaves = result if isinstance(result, (list, tuple)) else [result]
        outputs = [np.asarray(leaf) for leaf in leaves]
    except Exception as e:  # noqa: BLE001  # the guard's error is the finding
        text = str(e)
        if _GUARD_MESSAGE not in text:
            return FAILED, f"the debug build (-O0 -g) raised {first_line(e)}"
        finding = text.split(_GUARD_MESSAGE, 1)[1].splitlines()[0]
        return _OUTSIDE, finding.split("; check the index arithmetic", 1)[0]
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
    outside an output sets `subject.writes_outside`, and the kernel's own build is then never
    run: there the write lands in XLA's neighbouring buffers or the allocator's bookkeeping."""
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
            status, reason = _guarded_run(fn, at.fresh(), outs_of(at), attributes)
            if status == _OUTSIDE:
                subject.writes_outside = True  # check_kernel then runs nothing else
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
                    f"nothing outside its outputs{more}{where}{note}")  # fmt: skip
