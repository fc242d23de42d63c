"""The tuning child (decision 191): `python -m jaxcc.tune.runner READ_FD WRITE_FD` loads a tuned
function's variants by the same requests as the user's process (warm loads: the builds are in the
cache), runs each on the tuning inputs it is sent, checks it against the reference and times
them, reporting every step back, so that a variant that crashes or hangs takes down this process
only. `run_job` is also how a variant without a recipe is measured in the user's process.

Messages (wire.py: JSON and raw array bytes, which reading cannot run) to the parent:
("ready",) once started, ("hang", tag, seconds) from the watchdog before it ends the process,
("raised", tag, error) for a GPU variant that raised (its CUDA context may be poisoned: the parent
starts a fresh child), ("done", result). Which variant is running is not a message: before every
call the child writes its tag to the shared slot (progress.py, decision 258), so the parent sleeps
through the timing and reads the slot when the child dies or goes quiet."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from . import measure, progress, wire


def write_message(fd: int, message) -> None:
    wire.write(fd, message)


def read_message(fd: int):
    return wire.read(fd)


def outs_from(description):
    """The `outs=` of a call from its description on the wire ((shape, dtype) pairs)."""
    import jax

    if description is None:
        return None
    many, items = description
    structs = [jax.ShapeDtypeStruct(tuple(s), d) for s, d in items]
    return structs if many else structs[0]


def run_job(job: dict, functions: dict, send, at=None) -> None:
    """Checks and times `functions` ({tag: KernelFunction}) on the job's inputs; the result goes
    to `send`, and `at(tag)` is told before every call. The reference (job["order"][0]) runs
    first; a variant that raises or whose outputs differ from it is reported excluded; the rest
    are timed in interleaved rounds."""
    import jax

    outs, attributes = outs_from(job["outs"]), job["attributes"]
    # The budget counts from here: neither starting this process nor loading counts.
    deadline = None if job["budget_s"] is None else time.time() + job["budget_s"]
    with jax.ensure_compile_time_eval():
        xs = [jax.device_put(x) for x in job["inputs"]]
        runs, excluded, expected, exhausted = {}, {}, None, False
        for tag in job["order"]:
            if deadline is not None and runs and time.time() > deadline:
                exhausted = True
                break
            if at is not None:
                at(tag)
            run = jax.jit(measure.timed_call(functions[tag], outs, attributes))
            try:
                result = measure.run_once(run, xs)
            except Exception as e:  # the kernel's own error, or JAX's: reported, never fatal
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                if expected is None:
                    send(("done", {"reference_raised": first}))
                    return
                if job.get("fresh_after_raise"):  # a CUDA error may have poisoned the context
                    send(("raised", tag, first))
                    return
                excluded[tag] = f"it raised: {first}"
                continue
            if expected is None:
                expected = result
            elif problem := measure.compare(expected, result, job["rtol"], job["atol"]):
                excluded[tag] = problem
                continue
            runs[tag] = run
        samples, cut = measure.time_rounds(runs, xs, deadline, at=at)
    send(("idle",))
    stats = measure.paired(samples) if samples else {}
    send(("done", {"stats": stats, "excluded": excluded, "exhausted": exhausted or cut}))


class _Watchdog:
    """Ends this process when one call of a variant runs past `bound_s`, after telling the
    parent which (the parent also kills a child that stops answering: the backstop)."""

    def __init__(self, send):
        self._send = send
        self._current: tuple[str, float, float] | None = None
        threading.Thread(target=self._watch, daemon=True).start()

    def arm(self, tag: str, bound_s: float) -> None:
        self._current = (tag, time.monotonic(), bound_s)

    def disarm(self) -> None:
        self._current = None

    def _watch(self) -> None:
        while True:
            time.sleep(0.05)
            current = self._current
            if current is not None and time.monotonic() - current[1] > current[2]:
                self._send(("hang", current[0], current[2]))
                os._exit(70)


def _load_functions(recipes: dict, loaded: dict) -> dict:
    """{tag: KernelFunction} of the job's variants, loaded once per process by their recipes."""
    from jaxcc import _core
    from jaxcc.build import load_request, options
    from jaxcc.call import ffi_targets
    from jaxcc.call.compiled_module import CompiledModule

    functions = {}
    for tag, (recipe, function) in recipes.items():
        known = wire.encode(recipe)
        if known not in loaded:
            kind, *rest = recipe
            if kind == "request":
                where, arguments, prefix = rest
                arguments = dict(arguments)
                arguments["sources"] = [
                    _core.open_source_file(s[1]) if s[0] == "file" else (s[1], s[2])
                    for s in arguments["sources"]
                ]
                request = options.make_request(where, **arguments)
                run = options.run_options(
                    where, verbose=False, force_rebuild=False, replace=False, ninja_workers=None
                )
                module = load_request.load(request, run)
            else:  # ("bundle", directory, prefix, vmap_method): verified again on load
                import types

                import jax

                from jaxcc.environment import discovery

                directory, prefix, vmap_method = rest
                manifest = _core.read_bundle_manifest(directory)
                archs = discovery.jax_gpu_archs() if manifest.platform == "cuda" else []
                manifest, core_loaded = _core.load_bundle(directory, jax.ffi.include_dir(), archs)
                request = types.SimpleNamespace(
                    name=manifest.module_name, platform=manifest.platform,
                    target_prefix=prefix, vmap_method=vmap_method,
                )  # fmt: skip
                module = CompiledModule(request, core_loaded)
            module.target_prefix = prefix
            ffi_targets.register_module(module, module._loaded)
            loaded[known] = module
        functions[tag] = loaded[known].functions[function]
    return functions


def main(read_fd: int, write_fd: int, slot_fd: int) -> None:
    lock = threading.Lock()

    def send(message) -> None:
        with lock:
            write_message(write_fd, message)

    import jax

    from jaxcc.environment import cache_dir

    watchdog = _Watchdog(send)
    slot = progress.Slot(slot_fd)
    loaded: dict = {}
    send(("ready",))
    while (job := read_message(read_fd)) is not None:
        jax.config.update("jax_enable_x64", job["x64"])
        cache_dir.set_cache_dir(job["cache_dir"])  # the user's process may have set its own
        try:
            functions = _load_functions(job["recipes"], loaded)
        except Exception as e:  # told to the parent as a typed error, not a dead child
            send(("done", {"load_error": f"{type(e).__name__}: {e}"}))
            continue
        bound = job["bound_s"]

        def at(tag: str, bound=bound) -> None:  # memory writes only: nothing wakes the parent
            slot.begin(tag)
            watchdog.arm(tag, bound)

        def report(message) -> None:
            if message[0] in ("idle", "done"):
                watchdog.disarm()
            if message[0] != "idle":
                send(message)

        try:
            run_job(job, functions, report, at)
        except Exception as e:  # not a variant's doing (its errors are caught per call)
            report(("done", {"load_error": f"{type(e).__name__}: {e}"}))


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent ends the tuning on Ctrl-C
    if sys.platform.startswith("linux"):  # die with the parent, whatever kills it
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:
            sys.exit(0)
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
