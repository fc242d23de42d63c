"""From a bound primitive to traced code: run the chosen entry's generator, check the outputs.
(Which entry is chosen is `KernelTable.select`.)"""

from __future__ import annotations

from collections.abc import Sequence

from jaxcc.errors import BackendError, CallError, ExportError, JaxccError, KernelLoweringError

from .kernel_entry import KernelEntry

# Parameters jaxcc adds to every bind; kernel generators never see them.
BACKEND_PARAM = "backend"
SELECTION_PARAM = "jaxcc_backends"
BATCH_PARAM = "jaxcc_batch"
# With BATCH_PARAM: the batch is one operand axis for the sharding rule, but the kernel runs
# once per element (a kernel that is not vectorised, in a primitive with a rule).
PER_ELEMENT_PARAM = "jaxcc_per_element"
INTERNAL_PARAMS = (BACKEND_PARAM, SELECTION_PARAM, BATCH_PARAM, PER_ELEMENT_PARAM)


def switch_hint(name: str, platform: str, others: Sequence[str]) -> str:
    if not others:
        return f"No other backend is registered for {platform}."
    example = others[0]
    return (
        f"Other backends for {platform}: {', '.join(others)}. Switch with "
        f"{name}(..., backend={example!r}) for one call, .set_default({platform!r}, "
        f"{example!r}) for this primitive, or jaxcc.set_backend({platform!r}, {example!r}) "
        "for every primitive."
    )


def _as_output_list(name: str, entry: KernelEntry, results) -> list:
    if hasattr(results, "shape") and hasattr(results, "dtype"):
        return [results]
    if isinstance(results, (list, tuple)):
        return list(results)
    raise CallError(
        f"{name}: the '{entry.backend}' kernel on {entry.platform} returned "
        f"{type(results).__name__}; a kernel must return an array or a list/tuple of arrays, "
        "one per entry of outs"
    )


def check_outputs(name: str, entry: KernelEntry, results, outs) -> list:
    results = _as_output_list(name, entry, results)
    declared = [f"{tuple(o.shape)}:{o.dtype}" for o in outs]
    got = [f"{tuple(r.shape)}:{r.dtype}" for r in results]
    if declared != got:
        raise CallError(
            f"{name}: the '{entry.backend}' kernel on {entry.platform} returned "
            f"[{', '.join(got)}] but outs declares [{', '.join(declared)}]. Pass outs= with the "
            "shapes and dtypes the kernel produces (or fix the kernel)."
        )
    return results


def _needs_concrete_shapes(name: str, entry: KernelEntry, outs, exc) -> ExportError:
    """A backend that turned a symbolic dimension (jax.export's `b`) into a number: a typed
    ExportError naming it, in place of JAX's untyped InconclusiveDimensionOperation (issue 50)."""
    shapes = ", ".join(str(tuple(o.shape)) for o in outs)
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ExportError(
        f"{name}: the '{entry.backend}' kernel for {entry.platform} needs concrete shapes and "
        f"cannot be exported with symbolic dimensions (outs {shapes}): {first}. Export with "
        "concrete shapes, or export through a backend that keeps them symbolic (a jaxcc C++/"
        "CUDA function from def_cpp_kernel / def_cuda_raw_kernel, or a JAX function that does "
        "not read the sizes as numbers)"
    )


def run_kernel(
    name: str, entry: KernelEntry, args, outs, params: dict, others: Sequence[str], inspect=None
):
    """Calls the generator and traces its kernel; failures name the alternatives. `inspect`,
    if given, sees the kernel before it is traced; its errors pass through unwrapped."""
    from jaxcc.call.kernel_function import KernelFunction

    def failed(exc):
        detail = str(exc) if isinstance(exc, JaxccError) else f"{type(exc).__name__}: {exc}"
        if type(exc).__name__ == "InconclusiveDimensionOperation":
            return _needs_concrete_shapes(name, entry, outs, exc)
        return KernelLoweringError(
            f"{name}: the '{entry.backend}' kernel for {entry.platform} failed: {detail}\n"
            + switch_hint(name, entry.platform, others)
        )

    try:
        kernel = entry.kernel_generator(outs=outs, **params)
        if not callable(kernel):
            raise KernelLoweringError(
                f"the kernel generator returned {type(kernel).__name__}, not a callable"
            )
    except (CallError, BackendError):
        raise
    except Exception as exc:
        raise failed(exc) from exc
    if inspect is not None:
        inspect(kernel, args, outs)
    try:
        if isinstance(kernel, KernelFunction):
            # A jaxcc C++/CUDA entry point: its attributes come from the primitive's parameters.
            attributes = {k: v for k, v in params.items() if k in kernel.attribute_types}
            if kernel.has_scratch and "scratch_bytes" in params:  # its workspace's size
                attributes["scratch_bytes"] = params["scratch_bytes"]
            results = kernel(*args, outs=list(outs), **attributes)
        else:
            results = kernel(*args)
    except (CallError, BackendError):
        raise
    except Exception as exc:
        raise failed(exc) from exc
    return check_outputs(name, entry, results, outs)
