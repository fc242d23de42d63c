"""check_kernel's rows about one process and one device: inputs untouched, eager versus jit,
determinism, vmap against a loop, threads, and the GPU-only rows (outputs written:
outputs_row.py).

Each row is `row(subject, reference) -> (status, detail)`; `reference` is the first eager
call's outputs as numpy arrays."""

from __future__ import annotations

import threading

import numpy as np

from .subject import Subject, first_line, on_device, shown

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


def inputs_row(subject: Subject, reference) -> tuple[str, str]:
    arrays = subject.fresh()
    subject.call(*arrays)
    for i, (before, array) in enumerate(zip(subject.host_args, arrays, strict=True)):
        after = np.asarray(array)
        changed = before != after
        if before.dtype.kind == "f":
            changed &= ~(np.isnan(before) & np.isnan(after))
        if changed.any():
            at = tuple(int(j) for j in np.argwhere(changed)[0])
            return FAILED, (f"input {i + 1} was changed by the call at index {at}: "
                            f"{shown(before[at])} -> {shown(after[at])} "
                            f"({int(changed.sum())} elements); "
                            "a kernel must not write its inputs (return a new output, or use "
                            "input_output_aliases)")  # fmt: skip
    return PASSED, "every input unchanged after the call"


def jit_row(subject: Subject, reference) -> tuple[str, str]:
    import jax

    jitted = [np.asarray(o) for o in jax.jit(subject.function())(*subject.fresh())]
    diff = subject.difference(reference, jitted, "jax.jit vs eager")
    return (FAILED, diff) if diff else (PASSED, "jax.jit equals the eager call")


def determinism_row(subject: Subject, reference) -> tuple[str, str]:
    """Two runs bitwise equal passes; bitwise different but within the dtype's tolerance passes
    with a note (a parallel sum that adds partials as chunks finish is right, and its last bits
    vary: decision 203); beyond the tolerance fails."""
    again = [np.asarray(o) for o in subject.call(*subject.fresh())]
    diff = subject.difference(reference, again, "second run vs first", exact=True)
    beyond = diff and subject.difference(reference, again, "second run vs first")
    if beyond:
        return FAILED, beyond
    try:
        stale = _stale_result(subject)
    except Exception:  # noqa: BLE001  # the halved inputs refused: the vmap row calls them too
        stale = None
    if stale:
        return FAILED, stale
    builds = _debug_build_difference(subject, reference)
    if builds:
        return FAILED, builds
    if not diff:
        return PASSED, "two runs bitwise equal; a call on new values gives their own result"
    return PASSED, (f"two runs within tolerance but not bitwise equal ({diff}; a parallel "
                    "reduction whose order varies?)")  # fmt: skip


def _debug_build_difference(subject: Subject, reference) -> str | None:
    """The release build's outputs against the debug build's at the sample (kept by `bounds`):
    the same code at -O0 with every uninitialised local set to a pattern computes the same
    numbers unless the kernel reads a value it never wrote, or relies on undefined behaviour
    that -O3 resolves another way (issue 50 item 3). Only where the kernel writes; the dtype's
    tolerance, since -O3 may contract a multiply and an add where -O0 does not."""
    if subject.debug_outputs is None:
        return None
    diff = subject.difference(reference, subject.debug_outputs, "debug build vs release build")
    if diff is None:
        return None
    return (f"{diff}: the same code at -O0 with uninitialised locals set to a pattern computes "
            "other values, so the kernel reads a value it never wrote (a local without an "
            "initialiser, an accumulator not zeroed) or relies on undefined behaviour; build it "
            "with debug=True and compare, or give every local a value")  # fmt: skip


def _stale_result(subject: Subject) -> str | None:
    """A call on new values (the floating inputs halved) right after a call on the sample,
    whose freed buffers the new inputs usually take, against a call on the same values while
    copies of the sample hold those addresses: a kernel memoised by its buffers' addresses, or
    keeping results in static state, returns the earlier call's result (decision 204)."""

    sample, halved = _element(subject, 0), _element(subject, 1)
    if all(a is b for a, b in zip(sample, halved, strict=True)):
        return None  # no floating input: nothing to change
    subject.call(*[on_device(a) for a in sample])
    after = [np.asarray(o) for o in subject.call(*[on_device(a) for a in halved])]
    held = [on_device(a) for _ in range(2) for a in sample]  # noqa: F841
    own = [np.asarray(o) for o in subject.call(*[on_device(a) for a in halved])]
    diff = subject.difference(own, after, "a call on new values right after another call")
    if diff is None:
        # Three elements, as the vmap row's: where the scan's slice buffers alternate, the third
        # call meets the first one's address.
        diff = _scanned_difference(
            subject, [sample, halved, _element(subject, 2)], [None, own, None]
        )
    if diff is None:
        return None
    return (f"{diff}, against the same values called apart: the result depends on the call "
            "before (memoised by buffer address, or kept in static state)")  # fmt: skip


def _mapped(fn):
    import jax

    return jax.jit(lambda *xs: jax.lax.map(lambda e: fn(*e), xs))


def _scanned_difference(subject: Subject, elements, known) -> str | None:
    """`jax.lax.map` of single calls (a scan: no batching rule, each call's input a slice at
    the same place) against single calls on each element apart."""

    apart = iter(
        single_calls(subject, [e for e, k in zip(elements, known, strict=True) if k is None])
    )
    expected = [next(apart) if k is None else k for k in known]
    stacked = [np.stack(c) for c in zip(*elements, strict=True)]
    try:
        scan = subject.transformed("lax.map", _mapped)
        scanned = scan(*stacked)
    except Exception:  # noqa: BLE001  # a kernel that cannot run in a scan: no probe, no finding
        return None
    for k, want in enumerate(expected):
        got = [np.asarray(o)[k] for o in scanned]
        diff = subject.difference(want, got, f"call {k + 1} of a jax.lax.map of single calls")
        if diff:
            return diff
    return None


_FACTORS = (1.0, 0.5, 2.0)  # batch element k scales the floating inputs by this


def _element(subject: Subject, k: int) -> list:
    """Batch element k: floating inputs scaled (their zeros stay zeros, so sparsity patterns and
    signs hold), the others (indices, counts, masks) as given."""
    f = _FACTORS[k % len(_FACTORS)] * (1 + k // len(_FACTORS))
    return [(a * np.asarray(f, a.dtype)) if a.dtype.kind in "fc" else a for a in subject.host_args]


def single_calls(subject: Subject, elements) -> list:
    """Per element, the outputs of one call on it, every element's device arrays alive until
    all calls are done: no two calls see an input at the same address, so a kernel memoised by
    its buffers' addresses cannot return one element's result for another here (the threads
    row, which reuses addresses, finds it; decision 204)."""

    alive = [[on_device(a) for a in e] for e in elements]
    return [[np.asarray(o) for o in subject.call(*arrays)] for arrays in alive]


def _loop(subject: Subject, elements) -> list:
    """Outputs of single calls on each element, stacked on a leading axis."""
    results = single_calls(subject, elements)
    return [np.stack(outs) for outs in zip(*results, strict=True)]


def _vmap_cases(subject: Subject):
    """(description, batched function, its arguments, elements in order, the outputs' batch
    axis) per case."""
    import jax

    def vmapped(what, **kwargs):  # jitted and kept across checks: a second check compiles none
        return subject.transformed(f"vmap {what}", lambda f: jax.jit(jax.vmap(f, **kwargs)))

    args = subject.host_args
    elements = [_element(subject, k) for k in range(3)]
    stacked = [np.stack(c) for c in zip(*elements, strict=True)]
    yield "in_axes=0", vmapped("in_axes=0"), stacked, elements, 0
    if all(len(t.shape) >= 1 for t in subject.declared()):
        yield "out_axes=1", vmapped("out_axes=1", out_axes=1), stacked, elements, 1
    if all(a.ndim >= 1 for a in args):
        batched = [np.stack(c, axis=1) for c in zip(*elements, strict=True)]
        yield "in_axes=1", vmapped("in_axes=1", in_axes=1), batched, elements, 0
    floating = [i for i, a in enumerate(args) if a.dtype.kind in "fc"]
    if len(args) > 1 and floating:
        i = floating[0]
        axes = tuple(0 if j == i else None for j in range(len(args)))
        only = [_element(subject, k)[i] for k in range(3)]
        batched = [np.stack(only) if j == i else a for j, a in enumerate(args)]
        per = [[only[k] if j == i else a for j, a in enumerate(args)] for k in range(3)]
        yield f"only input {i + 1} batched", vmapped(f"{axes}", in_axes=axes), batched, per, 0
    grid = [_element(subject, k) for k in range(4)]
    nested = [np.stack(c).reshape(2, 2, *c[0].shape) for c in zip(*grid, strict=True)]
    nested_fn = subject.transformed("vmap nested", lambda f: jax.jit(jax.vmap(jax.vmap(f))))
    yield "nested vmap (2x2)", nested_fn, nested, grid, 0


def vmap_row(subject: Subject, reference) -> tuple[str, str]:
    done = []
    for what, batched_fn, batched_args, elements, out_axis in _vmap_cases(subject):
        try:
            got = [np.moveaxis(np.asarray(o), out_axis, 0) for o in batched_fn(*batched_args)]
        except Exception as e:  # noqa: BLE001  # the vmap itself failing is the finding
            return FAILED, f"jax.vmap ({what}) raised {first_line(e)}"
        expected = _loop(subject, elements)
        got = [
            g.reshape(e.shape) if g.size == e.size else g
            for g, e in zip(got, expected, strict=False)
        ]
        diff = subject.difference(expected, got, f"jax.vmap ({what}) vs a loop of calls")
        if diff:
            return FAILED, diff
        done.append(what)
    return PASSED, f"equals a loop of single calls: {', '.join(done)}"


def threads_row(subject: Subject, reference, threads: int = 4, calls: int = 3):
    """Each thread has its own input (batch element k of the vmap row: the floating inputs
    scaled), calls the kernel eagerly and under jit at the same moment as the others, and must
    get what a single call on its input gives: a kernel with a static scratch array or other
    shared state mixes the threads' inputs (decision 204)."""
    import jax

    jitted = jax.jit(subject.function())
    inputs = [_element(subject, k) for k in range(threads)]
    alone = single_calls(subject, inputs)
    start = threading.Barrier(threads)
    errors: list[str] = []

    def work(t: int) -> None:

        arrays = [[on_device(a) for a in inputs[t]] for _ in range(calls)]
        start.wait()  # every thread's calls at the same moment, inputs made before
        for c in range(calls):
            try:
                run = jitted if (t + c) % 2 else subject.function()
                got = [np.asarray(o) for o in run(*arrays[c])]
                diff = subject.difference(alone[t], got, f"thread {t}, call {c + 1}")
            except Exception as e:  # noqa: BLE001  # reported as the row's finding
                diff = f"thread {t}, call {c + 1} raised {first_line(e)}"
            if diff:
                errors.append(diff)

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        return FAILED, (
            f"{errors[0]}, against a single call on that thread's input ({len(errors)} of "
            f"{threads * calls} calls differ: state shared between calls: a static scratch "
            "array, results memoised by buffer address?)"
        )
    return PASSED, (f"{threads} threads x {calls} calls (eager and jit), each on its own input, "
                    "equal single calls on those inputs")  # fmt: skip


def _gpu_present() -> bool:
    import jax

    return jax.default_backend() == "gpu"


def cuda_graph_row(subject: Subject, reference) -> tuple[str, str]:
    """The jitted call compiled with XLA's command buffers (CUDA graphs) for custom calls,
    run twice: a capture and a replay."""
    import jax

    if not _gpu_present():
        return SKIPPED, "no GPU in this process"
    lowered = jax.jit(subject.function()).lower(*subject.fresh())
    options = {"xla_gpu_enable_command_buffer": "FUSION,CUSTOM_CALL",
               "xla_gpu_graph_min_graph_size": "1"}  # fmt: skip
    try:
        compiled = lowered.compile(compiler_options=options)
    except Exception as e:  # noqa: BLE001  # a JAX without these options
        return SKIPPED, f"this JAX cannot compile with command buffers ({first_line(e)})"
    for what in ("capture", "replay"):
        got = [np.asarray(o) for o in compiled(*subject.fresh())]
        diff = subject.difference(reference, got, f"CUDA graph {what}")
        if diff:
            return FAILED, diff
    return PASSED, "CUDA-graph capture and replay equal the eager call"


def stream_row(subject: Subject, reference) -> tuple[str, str]:
    """The kernel's inputs made on the device by the program just before the call, on XLA's
    compute stream (not CUDA's default one): a kernel that launches on another stream than the
    one it is given reads them before they are written."""
    import jax
    import jax.numpy as jnp

    if not _gpu_present():
        return SKIPPED, "no GPU in this process"
    call = subject.function()

    def program(*arrays):
        made = [a + jnp.zeros_like(a) if a.dtype != jnp.bool_ else a for a in arrays]
        return call(*made)

    got = [np.asarray(o) for o in jax.jit(program)(*subject.fresh())]
    diff = subject.difference(reference, got, "inputs made on XLA's stream")
    return (FAILED, diff) if diff else (PASSED, "equal with inputs made on XLA's stream")
