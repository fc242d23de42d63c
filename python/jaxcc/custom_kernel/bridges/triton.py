"""triton_kernel: a Triton kernel as an XLA FFI call on the GPU, launched natively on XLA's stream.

Triton compiles the kernel ahead of time (`triton.compile` with an explicit target, which needs
no GPU) for the buffers' dtypes, the scalar parameters' types and the constexpr values, once per
combination and process (Triton's own disk cache makes the next process fast too). A launcher
compiled by jaxcc's CUDA path loads the cubin and launches it on the stream XLA gives the custom
call: no Python per call, no jax-triton, and the launch can be captured in a CUDA graph.

Calling convention (the one jax-triton users know): the kernel's first parameters are the input
buffers and then the output buffers, in order; every later parameter is taken by name from the
keyword arguments (or its default), as a compile-time constant if it is a `tl.constexpr` and as a
runtime scalar otherwise. Scalars are static: they are fixed when the call is traced.
"""

from __future__ import annotations

import os
import re
import threading

import numpy as np

from jaxcc._jax_compat import DEFAULT_VMAP_METHOD
from jaxcc.errors import CallError

from .gpu_common import (
    c_buffer,
    gpu_capabilities,
    launch_dims,
    oldest_gpu_cc,
    parse_cc,
    require_gpu_backend,
)
from .launcher import preload
from .outputs import output_types
from .triton_launcher import (
    FLAG_COOPERATIVE,
    FLAG_PDL,
    PLAN_BUFFER,
    PLAN_GLOBAL_SCRATCH,
    PLAN_PROFILE_SCRATCH,
    PLAN_SCALAR,
    PRELOAD_SYMBOL,
    function_name,
    launcher_module,
)
from .triton_params import SCALAR_BYTES, bind_parameters, pointer_type, scalar_word

_WHO = "triton_kernel"
_lock = threading.Lock()
# Compiled kernels and launch plans, kept for the life of the process: compiled executables hold
# their addresses.
_compiled: dict[tuple, CompiledTriton] = {}
_plans: dict[tuple, np.ndarray] = {}

# `.param .u32 name`, or `.param .align 2 .b8 name[2]` for types PTX passes as byte arrays (fp16).
_PTX_PARAM = re.compile(
    r"\.param\s+(?:\.align\s+\d+\s+)?\.[usbf](8|16|32|64)\b[^,\[]*(?:\[(\d+)\])?"
)


class CompiledTriton:
    """One compiled kernel: the binary the launcher loads and the launch configuration Triton
    compiled it for (which may differ from the one requested: warp-specialised kernels on Hopper
    compile to more warps than `num_warps`)."""

    def __init__(self, binary: bytes, meta, ptx: str):
        self.binary = c_buffer(binary)
        self.name = c_buffer(meta.name.encode())
        self.shared = int(meta.shared)
        self.global_scratch = int(getattr(meta, "global_scratch_size", 0) or 0)
        self.profile_scratch = int(getattr(meta, "profile_scratch_size", 0) or 0)
        self.num_warps = int(meta.num_warps)
        # Clusters: `cluster_dims` in older Triton versions, `num_ctas` along x in newer ones.
        cluster = getattr(meta, "cluster_dims", None) or (getattr(meta, "num_ctas", 1), 1, 1)
        if tuple(cluster)[1:] != (1, 1):
            raise CallError(
                f"{_WHO}: Triton compiled {meta.name} for clusters {tuple(cluster)}; jaxcc "
                "launches clusters along x only (num_ctas)"
            )
        self.num_ctas = int(cluster[0])
        self.launch_flags = 0
        if getattr(meta, "launch_cooperative_grid", False):
            self.launch_flags |= FLAG_COOPERATIVE
        if getattr(meta, "launch_pdl", False):
            self.launch_flags |= FLAG_PDL
        self.ptx_param_bytes = ptx_param_bytes(ptx)
        # The PTX's fixed block size, when it states one, must be the one the launch uses.
        required = re.search(r"\.reqntid\s+(\d+)", ptx)
        if required and int(required.group(1)) != 32 * self.num_warps:
            raise CallError(
                f"{_WHO}: {meta.name} requires {required.group(1)} threads per block but "
                f"Triton's metadata says {self.num_warps} warps; this Triton version's launch "
                "ABI is not one jaxcc knows, please report it with `triton.__version__`"
            )

    @property
    def needs_scratch(self) -> bool:
        """Scratch is allocated per launch: such kernels are never captured in CUDA graphs."""
        return self.global_scratch > 0 or self.profile_scratch > 0

    def launch_attributes(self, grid3, plan: np.ndarray) -> dict[str, np.int64]:
        """The launcher's int64 attributes for one call: what Triton compiled, not what was
        requested."""
        values = {
            "binary": self.binary.ctypes.data, "name": self.name.ctypes.data, "pid": os.getpid(),
            "gx": grid3[0], "gy": grid3[1], "gz": grid3[2], "num_warps": self.num_warps,
            "num_ctas": self.num_ctas, "launch_flags": self.launch_flags,
            "shared_bytes": self.shared, "plan": plan.ctypes.data,
            "global_scratch": self.global_scratch, "profile_scratch": self.profile_scratch,
        }  # fmt: skip
        return {k: np.int64(v) for k, v in values.items()}


def ptx_param_bytes(ptx: str) -> list[int]:
    """Byte sizes of the parameters of the PTX's (single) kernel entry, in order."""
    start = ptx.find(".entry")
    if start < 0:
        raise CallError(f"{_WHO}: Triton's PTX has no kernel entry")
    body = ptx[start : ptx.index(")", start)]
    return [int(bits) // 8 * int(count or 1) for bits, count in _PTX_PARAM.findall(body)]


def _triton():
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except ImportError:
        raise CallError(f"{_WHO} needs Triton: pip install triton") from None
    major_minor = tuple(int(p) for p in re.findall(r"\d+", triton.__version__)[:2])
    if major_minor < (3, 3):
        raise CallError(
            f"{_WHO} needs Triton 3.3 or newer (named-parameter ASTSource), found "
            f"{triton.__version__}: pip install -U triton"
        )
    return triton, ASTSource, GPUTarget


def _jit_function(kernel):
    """The @triton.jit function itself; autotuners and heuristics wrap one but choose configs
    at launch time, which an ahead-of-time launch cannot do."""
    from triton.runtime.jit import JITFunction

    if isinstance(kernel, JITFunction):
        return kernel
    if type(kernel).__name__ in ("Autotuner", "Heuristics") and hasattr(kernel, "fn"):
        raise CallError(
            f"{_WHO}: {type(kernel).__name__} chooses its configuration at launch time; pass the "
            "@triton.jit function (kernel.fn) and its meta-parameters (BLOCK=..., num_warps=...) "
            "explicitly, for example the configuration the autotuner picked on this GPU"
        )
    raise CallError(f"{_WHO}: kernel must be a @triton.jit function, got {type(kernel).__name__}")


def compile_kernel(
    fn, signature, constexprs, n_buffers, num_warps, num_stages, cc, use_ptx, fp_fusion=True
):
    """Compiles (or finds) the kernel for this signature and target."""
    key = (
        fn, tuple(signature.items()), tuple(sorted(constexprs.items(), key=repr)),
        num_warps, num_stages, cc, use_ptx, fp_fusion,
    )  # fmt: skip
    with _lock:
        found = _compiled.get(key)
        if found is not None:
            return found
        triton, ast_source, gpu_target = _triton()
        # XLA's buffers are at least 16-byte aligned; telling Triton lets it vectorise accesses.
        attrs = {(i,): [["tt.divisibility", 16]] for i in range(n_buffers)}
        options = {
            "num_warps": num_warps, "num_stages": num_stages, "num_ctas": 1,
            "enable_fp_fusion": bool(fp_fusion),
        }  # fmt: skip
        try:
            source = ast_source(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
            compiled = triton.compile(
                source,
                target=gpu_target("cuda", cc[0] * 10 + cc[1], 32),
                options=options,
            )
        except CallError:
            raise
        except Exception as e:
            raise CallError(
                f"{_WHO}: Triton could not compile {fn.__name__} with signature {signature} for "
                f"sm_{cc[0]}{cc[1]}: {e}"
            ) from e
        ptx = compiled.asm["ptx"]
        binary = ptx.encode() if use_ptx else compiled.asm["cubin"]
        found = CompiledTriton(binary, compiled.metadata, ptx)
        _compiled[key] = found
        return found


def build_plan(compiled: CompiledTriton, n_buffers: int, scalars, fn_name: str) -> np.ndarray:
    """The launcher's plan, checked against the parameter list of the PTX Triton produced."""
    entries = [(PLAN_BUFFER, i) for i in range(n_buffers)]
    expected = [8] * n_buffers
    for type_name, value in scalars:
        entries.append((PLAN_SCALAR, scalar_word(type_name, value)))
        expected.append(SCALAR_BYTES[type_name])
    actual = compiled.ptx_param_bytes
    extra = len(actual) - len(expected)
    # Triton appends its scratch pointers (global, then profile in newer versions).
    if (
        actual[: len(expected)] != expected
        or extra not in (0, 1, 2)
        or any(b != 8 for b in actual[len(expected) :])
    ):
        raise CallError(
            f"{_WHO}: the compiled {fn_name} takes parameters of {actual} bytes, but the launch "
            f"would pass {expected} (+ scratch pointers); this Triton version's kernel ABI is "
            "not one jaxcc knows, please report it with `triton.__version__`"
        )
    for kind in (PLAN_GLOBAL_SCRATCH, PLAN_PROFILE_SCRATCH)[:extra]:
        entries.append((kind, 0))
    plan = np.zeros(1 + 2 * len(entries), np.int64)
    plan[0] = len(entries)
    for i, (kind, value) in enumerate(entries):
        plan[1 + 2 * i], plan[2 + 2 * i] = kind, value
    return plan


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check_config(num_warps, num_stages) -> None:
    if not _is_int(num_warps) or num_warps not in (1, 2, 4, 8, 16, 32):
        raise CallError(f"{_WHO}: num_warps must be a power of two from 1 to 32, got {num_warps!r}")
    if not _is_int(num_stages) or num_stages < 1:
        raise CallError(f"{_WHO}: num_stages must be an int >= 1, got {num_stages!r}")


def triton_kernel(
    kernel,
    outs,
    *,
    grid,
    num_warps: int = 4,
    num_stages: int = 3,
    enable_fp_fusion: bool = True,
    compute_capability=None,
    vmap_method=None,
    input_output_aliases=None,
    **params,
):
    """Wraps a `@triton.jit` kernel as a function of the input arrays that returns the outputs
    described by `outs` (one ShapeDtypeStruct-like or a sequence of them).

    The kernel is called as `kernel(*input_ptrs, *output_ptrs, **params)`; `grid` is a tuple of
    1 to 3 program counts, or a function of the parameters (constexprs included) returning one.
    `enable_fp_fusion` allows fused multiply-adds (on by default, as in Triton up to 3.9 and
    jax-triton, so results do not change when Triton's own default does; False rounds every
    multiply and add separately).
    `compute_capability` ("9.0") fixes the target; by default the GPUs JAX sees (the oldest, as
    PTX, when they differ). Usable on its own or returned from a generator given to
    `def_triton_kernel`.
    """
    import jax

    _triton()
    fn = _jit_function(kernel)
    _check_config(num_warps, num_stages)
    single, result_types = output_types(outs, _WHO)
    arch = None if compute_capability is None else parse_cc(compute_capability, _WHO)

    def call(*ins):
        buffers = list(ins) + result_types
        buffer_types = [
            pointer_type(b.dtype, f"{'input' if i < len(ins) else 'output'} {i}")
            for i, b in enumerate(buffers)
        ]
        signature, constexprs, scalars, meta = bind_parameters(
            fn, len(buffers), buffer_types, params
        )
        try:
            chosen_grid = grid(dict(meta)) if callable(grid) else grid
        except Exception as e:
            raise CallError(f"{_WHO}: the grid function raised {type(e).__name__}: {e}") from e
        grid3 = launch_dims(chosen_grid, "grid", _WHO, allow_zero=True)
        if arch is not None:
            cc, use_ptx = arch, False
        else:
            cc = oldest_gpu_cc(_WHO)
            use_ptx = len(gpu_capabilities()) > 1  # mixed GPUs: let the driver JIT forward
        compiled = compile_kernel(
            fn, signature, constexprs, len(buffers), int(num_warps), int(num_stages), cc,
            use_ptx, enable_fp_fusion,
        )  # fmt: skip
        plan_key = (id(compiled), tuple(scalars), len(buffers))
        with _lock:
            plan = _plans.get(plan_key)
            if plan is None:
                plan = _plans[plan_key] = build_plan(compiled, len(buffers), scalars, fn.__name__)
        module = launcher_module(
            len(ins), len(result_types), f"{cc[0]}.{cc[1]}", not compiled.needs_scratch
        )
        require_gpu_backend(_WHO)
        # Load the binary on every device now, at trace time, never inside a graph capture.
        preload(module, PRELOAD_SYMBOL, (compiled.binary.ctypes.data, compiled.name.ctypes.data,
                                         compiled.shared), _WHO)  # fmt: skip
        ffi = jax.ffi.ffi_call(
            module.target_name(function_name(len(ins), len(result_types))),
            result_types,
            vmap_method=vmap_method or DEFAULT_VMAP_METHOD,
            input_output_aliases=input_output_aliases,
        )
        results = ffi(*ins, **compiled.launch_attributes(grid3, plan))
        return results[0] if single else results

    return call
