"""check_kernel's rows that run the kernel somewhere else: on a mesh as its sharding rule
allows, through a jax.export artefact, from a bundle, and on every registered backend."""

from __future__ import annotations

import itertools
import tempfile

import numpy as np

from .cases import Case as _Case
from .kernel_rule import kernel_rule as _rule
from .rows import FAILED, PASSED, SKIPPED
from .subject import Subject, first_line

_GATHERS = ("all-gather(", "all-gather-start(", "all-to-all(")
_bundles = itertools.count(1)


def _split_cases(subject: Subject, rule, devices: int):
    """(factor, mesh size, per input the dimension split or None) for every factor the rule lets
    jaxcc split: each input that names it is split along it, the others stay whole."""
    shapes_in = [a.shape for a in subject.host_args]
    shapes_out = [tuple(t.shape) for t in subject.declared()]
    in_factors, _ = rule.expand(shapes_in, shapes_out)
    factors = dict.fromkeys(f for fs in in_factors for f in fs if f is not None)
    for factor in factors:
        if factor in rule.unsplit:
            continue
        dims = [fs.index(factor) if factor in fs else None for fs in in_factors]
        sizes = {shapes_in[i][d] for i, d in enumerate(dims) if d is not None}
        size = sizes.pop()
        mesh = next((m for m in range(devices, 1, -1) if size % m == 0), None)
        if mesh is not None:
            yield factor, mesh, dims


def sharding_row(subject: Subject, reference) -> tuple[str, str]:
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    rule = _rule(subject)
    if rule is None:
        return SKIPPED, "no sharding rule"
    devices = jax.devices()
    if len(devices) < 2:
        return SKIPPED, ("one device in this process: set XLA_FLAGS="
                         "--xla_force_host_platform_device_count=8 before JAX starts "
                         "(`jaxcc check` does)")  # fmt: skip
    fn = subject.function()
    done = []
    for factor, size, dims in _split_cases(subject, rule, len(devices)):
        mesh = Mesh(np.array(devices[:size]), ("x",))
        specs = [PartitionSpec(*([None] * d + ["x"])) if d is not None else PartitionSpec()
                 for d in dims]  # fmt: skip
        placed = [jax.device_put(a, NamedSharding(mesh, s))
                  for a, s in zip(subject.fresh(), specs, strict=True)]  # fmt: skip
        jitted = jax.jit(fn)
        shown = f"leading dimension {factor[3:]}" if factor.startswith("...") else repr(factor)
        what = f"factor {shown} split over {size} devices"
        try:
            text = jitted.lower(*placed).compile().as_text()
            got = [np.asarray(o) for o in jitted(*placed)]
        except Exception as e:  # noqa: BLE001
            return FAILED, f"{what}: raised {first_line(e)}"
        diff = subject.difference(reference, got, what)
        if diff:
            return FAILED, f'{diff} (rule "{rule.text}")'
        gathers = {op[:-1]: text.count(op) for op in _GATHERS if text.count(op)}
        if gathers:
            return FAILED, f"{what}: the compiled program has {gathers}, which the rule forbids"
        done.append(f"{shown} over {size}")
    if not done:
        return SKIPPED, f'rule "{rule.text}": no factor the sample shapes let jaxcc split'
    return PASSED, f"equals one device, no gather: {', '.join(done)}"


def export_row(subject: Subject, reference) -> tuple[str, str]:
    import jax

    from jaxcc.deploy.export import deserialize, export
    from jaxcc.errors import ExportError

    try:
        exported = export(jax.jit(subject.function()), *subject.fresh())
    except ExportError as e:
        if not subject.is_primitive:
            raise
        # A backend bound to this process (the Numba and Triton bridges) is refused, typed.
        return SKIPPED, f"this backend cannot be exported: {first_line(e)}"
    try:
        blob = exported.serialize()
    except ImportError as e:  # JAX writes artefacts with the flatbuffers package
        return SKIPPED, f"cannot serialize here ({first_line(e)}; pip install flatbuffers)"
    restored = deserialize(blob)
    got = [np.asarray(o) for o in restored.call(*subject.fresh())]
    diff = subject.difference(reference, got, "jax.export round trip")
    if diff:
        return FAILED, diff
    detail = f"serialize/deserialize ({len(blob)} bytes) equal"
    symbolic = _symbolic_batch(subject, reference)
    if symbolic.startswith("FAILED:"):
        return FAILED, symbolic[len("FAILED: ") :]
    return PASSED, f"{detail}; {symbolic}"


def _symbolic_batch(subject: Subject, reference) -> str:
    """Exported with the leading dimension symbolic (`b`) in every input that shares input 1's
    leading size, where the outputs follow from the inputs; the artefact called at the sample's
    size and one less, against the eager call. "FAILED: ..." on a difference (decision 206)."""
    import jax

    from jaxcc.deploy.export import deserialize, export

    args = subject.host_args
    free = subject.outs is None or subject.outs_fn is not None or subject.is_callable
    if not free or not args or args[0].ndim == 0 or args[0].shape[0] < 2:
        return "symbolic batch not tried (outs fixed, or no leading dimension of 2 or more)"
    n = args[0].shape[0]
    batched = [a.ndim >= 1 and a.shape[0] == n for a in args]
    (b,) = jax.export.symbolic_shape("b")
    specs = [jax.ShapeDtypeStruct((b, *a.shape[1:]) if on else a.shape, a.dtype)
             for a, on in zip(args, batched, strict=True)]  # fmt: skip
    try:
        restored = deserialize(export(jax.jit(subject.function()), *specs).serialize())
    except Exception as e:  # noqa: BLE001  # the kernel may need concrete sizes: said, not failed
        return f"symbolic batch not exported ({first_line(e)})"
    for size in (n, n - 1):
        small = [a[:size] if on else a for a, on in zip(args, batched, strict=True)]
        at = subject.at(_Case(tuple(small), None, f"b={size}"))
        at.outs = subject.outs_fn(*small) if subject.outs_fn is not None else None
        expected = reference if size == n else [np.asarray(o) for o in at.call(*at.fresh())]
        got = [np.asarray(o) for o in restored.call(*at.fresh())]
        diff = at.difference(expected, got, f"jax.export with a symbolic batch, called at b={size}")
        if diff:
            return f"FAILED: {diff}"
    return f"a symbolic leading dimension exports and equals eager at b={n} and b={n - 1}"


def bundle_row(subject: Subject, reference) -> tuple[str, str]:
    from jaxcc import _core
    from jaxcc.deploy.bundle import load_library
    from jaxcc.environment import discovery

    if subject.is_primitive or subject.is_callable:
        return SKIPPED, "checked for loaded C++ kernels only (their modules make the bundle)"
    fn = subject.fn
    if fn.platform == "cuda" and not _has_gpu():
        return SKIPPED, "a CUDA kernel and no GPU in this process"
    request = fn.load_request  # None: the module came from a bundle
    if request is None:
        return SKIPPED, "its module was not loaded by load_* in this process (a bundle already?)"
    environment = discovery.build_environment(
        request, verbose=False, force_rebuild=False, ninja_workers=0
    )
    with tempfile.TemporaryDirectory(prefix="jaxcc-check-") as out:
        _core.write_bundle(request, environment, out, lambda *a: None)
        prefix = f"{request.target_prefix}_check{next(_bundles)}"
        module = load_library(out, target_prefix=prefix)
    twin = module[fn.name]
    got = twin(*subject.fresh(), outs=subject.outs, **subject.attrs)
    got = [np.asarray(o) for o in (got if isinstance(got, (list, tuple)) else [got])]
    diff = subject.difference(reference, got, "bundle round trip")
    return (FAILED, diff) if diff else (PASSED, "jaxcc build + load_library give the same result")


def _has_gpu() -> bool:
    import jax

    return jax.default_backend() == "gpu"


def backends_row(subject: Subject, reference) -> tuple[str, str]:
    import jax

    if not subject.is_primitive:
        return SKIPPED, "one implementation (backends are an XLACustomKernel's)"
    platform = "gpu" if jax.default_backend() == "gpu" else jax.default_backend()
    table = subject.fn.kernel_table
    backends = table.backends(platform)
    reference_backend = subject.backend or table.default(platform)
    others = [b for b in backends if b != reference_backend]
    if not others:
        return SKIPPED, f"one backend on {platform} ({reference_backend})"
    for backend in others:
        try:
            got = [np.asarray(o) for o in subject.call(*subject.fresh(), backend=backend)]
        except Exception as e:  # noqa: BLE001
            return FAILED, f"backend {backend!r} raised {first_line(e)}"
        diff = subject.difference(reference, got, f"backend {backend!r} vs {reference_backend!r}")
        if diff:
            return FAILED, diff
    return PASSED, f"{', '.join(others)} equal {reference_backend!r} on {platform}"
