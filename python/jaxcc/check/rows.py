"""check_kernel's rows about one process and one device: outputs written, inputs untouched,
eager versus jit, determinism, vmap against a loop, threads, and the GPU-only rows.

Each row is `row(subject, reference) -> (status, detail)`; `reference` is the first eager
call's outputs as numpy arrays."""

from __future__ import annotations

import threading

import numpy as np

from .subject import Subject, first_line, shown

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"

# Two fill patterns for the output buffers, chosen so that no sane result equals both.
_SENTINELS = {"f": (-1.2345e30, 9.8765e29), "i": (-0x5A5A5A5A, 0x25252525), "u": (0xA5, 0x5A),
              "b": (True, False), "c": (-1.2345e30 + 1j, 9.8765e29 - 1j)}  # fmt: skip


def _sentinel(dtype, which: int):
    import ml_dtypes  # noqa: F401  # bfloat16 as a numpy dtype

    dtype = np.dtype(dtype)
    kind = "f" if dtype.name == "bfloat16" else dtype.kind
    value = _SENTINELS.get(kind, (1, 2))[which]
    if kind in "iu":
        info = np.iinfo(dtype)
        value = int(np.clip(value, info.min, info.max)) if kind == "i" else value % (info.max + 1)
        if which == 1 and value == _sentinel(dtype, 0):
            value = info.max
    if kind == "f" and dtype.itemsize <= 2:
        value = (-1000.0, 3000.0)[which]  # within float16/bfloat16 range
    return np.asarray(value).astype(dtype)


def _run_into(subject: Subject, which: int):
    """The kernel under jit with each output's buffer donated from a sentinel-filled array
    (`keep_unused=True` keeps the otherwise unused parameter, and JAX aliases a donated input
    to the output of its type: the kernel then writes into the sentinel buffer). None where XLA
    did not alias them (the lowering has no `tf.aliasing_output`)."""
    import jax
    import jax.numpy as jnp

    types = subject.declared()
    call = subject.function()
    n = len(types)

    def program(*operands):
        return call(*operands[n:])

    fills = [jnp.full(t.shape, _sentinel(t.dtype, which), t.dtype) for t in types]
    jitted = jax.jit(program, donate_argnums=tuple(range(n)), keep_unused=True)
    args = [*fills, *subject.fresh()]
    if jitted.lower(*args).as_text().count("tf.aliasing_output") < n:
        return None
    outputs = jitted(*args)
    if not all(f.is_deleted() for f in fills):
        return None
    return [np.asarray(o) for o in outputs]


def outputs_row(subject: Subject, reference) -> tuple[str, str]:
    declared = subject.declared()
    if len(reference) != len(declared):
        return FAILED, f"{len(reference)} outputs, {len(declared)} declared"
    for i, (r, t) in enumerate(zip(reference, declared, strict=True)):
        if r.shape != tuple(t.shape) or r.dtype != np.dtype(t.dtype):
            return FAILED, (f"output {i + 1} is {r.dtype}{list(r.shape)}, declared "
                            f"{np.dtype(t.dtype)}{list(t.shape)}")  # fmt: skip
    first, second = _run_into(subject, 0), _run_into(subject, 1)
    if first is None or second is None:
        return (
            PASSED,
            "shapes and dtypes match; XLA did not alias the outputs (unwritten not checked)",
        )
    problems, masks = [], []
    for i, (a, b, t) in enumerate(zip(first, second, declared, strict=True)):
        unwritten = (a == _sentinel(t.dtype, 0)) & (b == _sentinel(t.dtype, 1))
        masks.append(~unwritten if unwritten.any() else None)
        if unwritten.any():
            at = tuple(int(j) for j in np.argwhere(unwritten)[0])
            problems.append(f"output {i + 1}: {int(unwritten.sum())} of {unwritten.size} "
                            f"elements never written (first at index {at})")  # fmt: skip
    # Later rows compare only what the kernel writes: the rest is whatever memory held.
    subject.masks = masks if any(m is not None for m in masks) else None
    if problems:
        return FAILED, "; ".join(problems)
    return PASSED, "shapes and dtypes match; every element written (two sentinel fills)"


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
    again = [np.asarray(o) for o in subject.call(*subject.fresh())]
    diff = subject.difference(reference, again, "second run vs first", exact=True)
    return (FAILED, diff) if diff else (PASSED, "two runs bitwise equal")


_FACTORS = (1.0, 0.5, 2.0)  # batch element k scales the floating inputs by this


def _element(subject: Subject, k: int) -> list:
    """Batch element k: floating inputs scaled (their zeros stay zeros, so sparsity patterns and
    signs hold), the others (indices, counts, masks) as given."""
    f = _FACTORS[k % len(_FACTORS)] * (1 + k // len(_FACTORS))
    return [(a * np.asarray(f, a.dtype)) if a.dtype.kind in "fc" else a for a in subject.host_args]


def _loop(subject: Subject, elements) -> list:
    """Outputs of single calls on each element, stacked on a leading axis."""
    results = [[np.asarray(o) for o in subject.call(*[np.copy(a) for a in e])] for e in elements]
    return [np.stack(outs) for outs in zip(*results, strict=True)]


def _vmap_cases(subject: Subject):
    """(description, batched function, its arguments, elements in order, the outputs' batch
    axis) per case."""
    import jax

    fn = subject.function()
    args = subject.host_args
    elements = [_element(subject, k) for k in range(3)]
    stacked = [np.stack(c) for c in zip(*elements, strict=True)]
    yield "in_axes=0", jax.vmap(fn), stacked, elements, 0
    if all(len(t.shape) >= 1 for t in subject.declared()):
        yield "out_axes=1", jax.vmap(fn, out_axes=1), stacked, elements, 1
    if all(a.ndim >= 1 for a in args):
        batched = [np.stack(c, axis=1) for c in zip(*elements, strict=True)]
        yield "in_axes=1", jax.vmap(fn, in_axes=1), batched, elements, 0
    floating = [i for i, a in enumerate(args) if a.dtype.kind in "fc"]
    if len(args) > 1 and floating:
        i = floating[0]
        axes = tuple(0 if j == i else None for j in range(len(args)))
        only = [_element(subject, k)[i] for k in range(3)]
        batched = [np.stack(only) if j == i else a for j, a in enumerate(args)]
        per = [[only[k] if j == i else a for j, a in enumerate(args)] for k in range(3)]
        yield f"only input {i + 1} batched", jax.vmap(fn, in_axes=axes), batched, per, 0
    grid = [_element(subject, k) for k in range(4)]
    nested = [np.stack(c).reshape(2, 2, *c[0].shape) for c in zip(*grid, strict=True)]
    yield "nested vmap (2x2)", jax.vmap(jax.vmap(fn)), nested, grid, 0


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
    import jax

    jitted = jax.jit(subject.function())
    errors: list[str] = []

    def work(t: int) -> None:
        for c in range(calls):
            try:
                run = jitted if (t + c) % 2 else subject.function()
                got = [np.asarray(o) for o in run(*subject.fresh())]
                diff = subject.difference(reference, got, f"thread {t}, call {c + 1}")
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
        return FAILED, f"{errors[0]} ({len(errors)} of {threads * calls} calls differ)"
    return PASSED, f"{threads} threads x {calls} calls (eager and jit) equal the first call"


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
