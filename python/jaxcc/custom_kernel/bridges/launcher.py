"""The one per-arity launcher builder of the bridges (Numba CPU trampoline, Numba-CUDA, Triton).

A bridge launches a compiled kernel through a small C++ (or CUDA) FFI target that jaxcc's own core
compiles, caches and registers: one target per (inputs, outputs) arity, whose entry point packs
its buffers into an array and calls the bridge's `launch(tensors, count, <int64 attributes>
[, stream])`, defined in the bridge's prelude.

CUDA launchers are built per architecture, and the architecture is part of the module (and so of
the FFI target) name: XLA cannot replace a registered target, so one name for two builds would
make the second architecture in a process a RegistrationError (issue 15). Launchers that must not
be captured in CUDA graphs (`allow_cuda_graph=False`) get their own name too.
"""

from __future__ import annotations

import threading

from jaxcc.errors import CallError

_lock = threading.Lock()
_modules: dict[tuple, object] = {}


def arity_function_name(kind: str, n_in: int, n_out: int) -> str:
    return f"{kind}_bridge_{n_in}_{n_out}"


def arity_module_name(kind, n_in, n_out, compute_capability=None, allow_cuda_graph=True) -> str:
    """`jaxcc_<kind>_bridge_<in>_<out>`, plus `_sm<XY>` for a CUDA launcher built for one
    architecture and `_nograph` for one XLA may not capture."""
    name = f"jaxcc_{arity_function_name(kind, n_in, n_out)}"
    if compute_capability is not None:
        name += "_sm" + "".join(c for c in str(compute_capability) if c.isalnum())
    if not allow_cuda_graph:
        name += "_nograph"
    return name


def arity_source(prelude: str, launch: str, attributes, n_in, n_out, name, stream) -> str:
    """The prelude plus `name(a0.., r0.., <int64 attributes>[, stream])` calling `launch`."""
    params = [f"const jaxcc::Tensor a{i}" for i in range(n_in)]
    params += [f"jaxcc::Tensor r{i}" for i in range(n_out)]
    params += [f"int64_t {a}" for a in attributes] + (["int64_t stream"] if stream else [])
    buffers = [f"&a{i}" for i in range(n_in)] + [f"&r{i}" for i in range(n_out)]
    arguments = ", ".join(list(attributes) + (["stream"] if stream else []))
    return (
        prelude
        + f"\nvoid {name}({', '.join(params)}) {{\n"
        + f"  const jaxcc::Tensor* tensors[] = {{{', '.join(buffers)}}};\n"
        + f"  {launch}(tensors, {n_in + n_out}, {arguments});\n}}\n"
    )


def arity_launcher(
    kind, prelude, launch, attributes, n_in, n_out, who, *, platform="cuda",
    compute_capability=None, allow_cuda_graph=True,
):  # fmt: skip
    """The launcher module of bridge `kind` for `n_in` inputs and `n_out` outputs (built, cached
    and registered on first use). On "cuda" the entry point also receives XLA's stream and is
    built for `compute_capability` (None: the GPUs JAX sees); on "cpu" it is a plain C++ target."""
    from jaxcc.load.loaders import load_cpp_inline, load_cuda_inline

    if n_out < 1 or n_in + n_out > 64:
        raise CallError(
            f"{who}: needs 1 to 64 buffers with at least one output, got {n_in} input(s) and "
            f"{n_out} output(s)"
        )
    cuda = platform == "cuda"
    arch = compute_capability if cuda else None
    graph = allow_cuda_graph or not cuda
    key = (kind, n_in, n_out, platform, arch, graph)
    with _lock:
        module = _modules.get(key)
        if module is None:
            name = arity_function_name(kind, n_in, n_out)
            source = arity_source(prelude, launch, attributes, n_in, n_out, name, cuda)
            tokens = ["arg"] * n_in + ["ret"] * n_out + [f"attr.{a}:int64" for a in attributes]
            module_name = arity_module_name(kind, n_in, n_out, arch, graph)
            if cuda:
                module = load_cuda_inline(
                    module_name, source, {name: tokens + ["stream"]},
                    compute_capability=compute_capability, allow_cuda_graph=graph,
                )  # fmt: skip
            else:
                module = load_cpp_inline(module_name, source, {name: tokens})
            _modules[key] = module
    return module


_preloaded: set[tuple] = set()


def jax_gpu_ordinals() -> list[int] | None:
    """CUDA ordinals of the GPUs JAX uses in this process, or None when JAX does not say (then
    every device the CUDA runtime sees is meant)."""
    import jax

    try:
        devices = jax.local_devices(backend="gpu")
    except RuntimeError:
        return None
    ids = [getattr(d, "local_hardware_id", None) for d in devices]
    if not ids or any(i is None for i in ids):
        return None
    return sorted({int(i) for i in ids})


def preload(module, symbol: str, arguments: tuple[int, ...], who: str) -> None:
    """Calls the launcher library's exported
    `int symbol(int64 a, int64 b, int64 c, const int64* devices, int64 count, char* message,
    int64 size)` once per (library, arguments) in this process: it loads a kernel on the GPUs JAX
    uses before any call can be captured in a CUDA graph. Errors become DeviceError with the
    CUDA message."""
    import ctypes

    from jaxcc.errors import DeviceError

    key = (module.path, symbol, arguments)
    with _lock:
        if key in _preloaded:
            return
        ordinals = jax_gpu_ordinals()
        devices = (ctypes.c_int64 * len(ordinals or []))(*(ordinals or []))
        function = getattr(ctypes.CDLL(module.path), symbol)
        function.restype = ctypes.c_int
        function.argtypes = [ctypes.c_int64] * len(arguments) + [
            ctypes.POINTER(ctypes.c_int64), ctypes.c_int64, ctypes.c_char_p, ctypes.c_int64,
        ]  # fmt: skip
        message = ctypes.create_string_buffer(1024)
        count = -1 if ordinals is None else len(ordinals)
        if function(*arguments, devices, count, message, len(message)) != 0:
            raise DeviceError(f"{who}: {message.value.decode(errors='replace')}")
        _preloaded.add(key)
