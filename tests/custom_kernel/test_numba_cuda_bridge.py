"""The Numba-CUDA bridge: PTX from numba-cuda launched by a jaxcc-compiled FFI target on XLA's
stream. Without a GPU (CI) the PTX, its parameter layout, the launcher's build and the errors are
checked; the launches themselves run in the `gpu`-marked tests."""

import ctypes
import re
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import call, has_jax_gpu, make_mul

import jaxcc
from jaxcc.custom_kernel.bridges import numba_cuda as ncb
from jaxcc.custom_kernel.bridges.numba_cuda import compile_ptx
from jaxcc.custom_kernel.bridges.numba_cuda_launcher import launcher_module

cuda = pytest.importorskip("numba.cuda")
if not hasattr(cuda, "compile_ptx"):
    pytest.skip("numba-cuda is not installed", allow_module_level=True)

X = jnp.linspace(-1, 1, 1000, dtype=jnp.float32)
Y = jnp.linspace(2, 3, 1000, dtype=jnp.float32)


@cuda.jit
def mul_cuda(x, y, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = x[i] * y[i]


@cuda.jit
def add_rows(m, v, out):  # rank 2 and rank 1 together: exercises the per-rank layout
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = m[i, j] + v[j]


def entry_params(ptx: str) -> int:
    body = ptx[ptx.index(".entry") :]
    return body[: body.index(")")].count(".param")


@pytest.mark.parametrize("rank", [0, 1, 2, 3])
def test_numba_ptx_has_the_array_layout_the_launcher_passes(rank):
    # The launcher passes meminfo, parent, nitems, itemsize, data, `rank` extents and `rank`
    # strides per array: if numba-cuda ever changes its kernel ABI, this fails before a GPU does.
    def fill(out):
        pass

    ptx, name = compile_ptx(fill, (("<f4", rank),), (8, 0))
    assert entry_params(ptx) == 5 + 2 * rank
    assert re.search(rf"\.entry\s+{re.escape(name)}\s*\(", ptx)


def test_ptx_of_a_real_kernel_for_three_buffers():
    ptx, _ = compile_ptx(mul_cuda, (("<f4", 1),) * 3, (9, 0))
    assert entry_params(ptx) == 3 * 7
    assert ".target sm_90" in ptx


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_launcher_builds_without_a_gpu_and_the_call_says_no_gpu():
    module = launcher_module(2, 1, "8.0")
    assert module.platform == "cuda"
    assert len(module.function_names) == 1
    if has_jax_gpu():
        return
    wrapped = jaxcc.numba_cuda_kernel(
        mul_cuda, jax.ShapeDtypeStruct(X.shape, X.dtype), grid=4, block=256,
        compute_capability="8.0",
    )  # fmt: skip
    with pytest.raises(jaxcc.DeviceError, match="no GPU backend"):
        wrapped(X, Y)


def test_bad_launch_configuration_and_dtypes_are_typed_errors():
    out = jax.ShapeDtypeStruct((4,), jnp.float32)
    for bad in (0, (1, 2, 3, 4), "8", 1.5, True):
        with pytest.raises(jaxcc.CallError, match="grid must be"):
            jaxcc.numba_cuda_kernel(mul_cuda, out, grid=bad, block=1)
    with pytest.raises(jaxcc.CallError, match="shared_mem"):
        jaxcc.numba_cuda_kernel(mul_cuda, out, grid=1, block=1, shared_mem=-1)
    with pytest.raises(jaxcc.CallError, match="compute_capability"):
        jaxcc.numba_cuda_kernel(mul_cuda, out, grid=1, block=1, compute_capability="sm_xx")
    bf16 = jaxcc.numba_cuda_kernel(mul_cuda, out, grid=1, block=4, compute_capability="8.0")
    with pytest.raises(jaxcc.CallError, match="numba lacks"):
        bf16(jnp.ones(4, jnp.bfloat16), jnp.ones(4, jnp.bfloat16))


def test_a_kernel_numba_cannot_compile_names_the_kernel_and_the_buffers():
    def broken(x, out):
        out[0] = undefined_name  # noqa: F821

    with pytest.raises(jaxcc.CallError, match=r"could not compile broken for \['float32\[1d\]'"):
        compile_ptx(broken, (("<f4", 1), ("<f4", 1)), (8, 0))


# --- issue 15: what a first GPU run would hit, checked without one ------------------------------


@pytest.fixture
def launches(monkeypatch):
    """The call path up to the launch, without a GPU: records preloads and ffi_calls in order."""
    events = []

    def fake_ffi_call(target, result_types, **kwargs):
        def run(*ins, **attrs):
            events.append(("launch", target, attrs))
            return [jnp.zeros(r.shape, r.dtype) for r in result_types]

        return run

    monkeypatch.setattr(ncb, "require_gpu_backend", lambda who: None)
    monkeypatch.setattr(ncb, "preload", lambda *args: events.append(("preload", *args)), False)
    monkeypatch.setattr(jax.ffi, "ffi_call", fake_ffi_call)
    return events


def launched_ptx(events) -> str:
    return ctypes.string_at(int(events[-1][2]["ptx"])).decode()


def divide(x, y, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = x[i] / y[i]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_cuda_jit_options_reach_the_compiled_kernel(launches):
    out = jax.ShapeDtypeStruct(X.shape, X.dtype)
    fast = cuda.jit(fastmath=True, max_registers=40)(divide)
    jaxcc.numba_cuda_kernel(fast, out, grid=4, block=256, compute_capability="8.0")(X, Y)
    fast_ptx, attrs = launched_ptx(launches), launches[-1][2]
    assert "div.approx" in fast_ptx and attrs["max_registers"] == 40
    exact = cuda.jit(divide)
    jaxcc.numba_cuda_kernel(exact, out, grid=4, block=256, compute_capability="8.0")(X, Y)
    assert "div.rn.f32" in launched_ptx(launches) and "div.approx" not in launched_ptx(launches)
    assert launches[-1][2]["max_registers"] == 0
    lined = cuda.jit(lineinfo=True)(divide)
    jaxcc.numba_cuda_kernel(lined, out, grid=4, block=256, compute_capability="8.0")(X, Y)
    assert ".loc" in launched_ptx(launches)


def make_scale(factor):
    @cuda.jit
    def scale(x, out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = x[i] * factor

    return scale


def test_equal_kernels_compile_their_ptx_once_per_process(monkeypatch):
    # Operators make a new cuda.jit object per configuration and per trace: equal code, closure
    # values and options reuse the PTX compiled before (decision 115). Needs no GPU: compile_ptx
    # runs on the host.
    compiled = []

    def counting(kernel, specs, cc, options=()):
        compiled.append(kernel)
        return compile_ptx(kernel, specs, cc, options)

    monkeypatch.setattr(ncb, "compile_ptx", counting)
    specs = (("<f4", 1), ("<f4", 1))
    first = ncb._buffers(make_scale(3.0), specs, (8, 0), ())
    assert ncb._buffers(make_scale(3.0), specs, (8, 0), ()) == first  # a new, equal object
    assert len(compiled) == 1
    assert ncb._buffers(make_scale(5.0), specs, (8, 0), ()) != first  # another closure value
    assert ncb._buffers(make_scale(3.0), (("<f8", 1), ("<f8", 1)), (8, 0), ()) != first
    assert ncb._buffers(make_scale(3.0), specs, (9, 0), ()) != first  # another architecture
    lined = cuda.jit(lineinfo=True)(make_scale(3.0).py_func)
    assert ncb._buffers(lined, specs, (8, 0), ncb.jit_options(lined)) != first  # other options
    assert len(compiled) == 5
    ptx = ctypes.string_at(ncb._buffers(make_scale(5.0), specs, (8, 0), ())[0]).decode()
    assert "5.0" in ptx or "0f40A00000" in ptx  # the PTX of the kernel asked for, not the first


def test_options_numba_cuda_kernel_cannot_honour_are_refused_not_dropped(tmp_path):
    extra = tmp_path / "extra.cu"
    extra.write_text('extern "C" __device__ int twice(int* r, int x) { *r = 2 * x; return 0; }')
    linked = cuda.jit(link=[str(extra)])(divide)
    out = jax.ShapeDtypeStruct(X.shape, X.dtype)
    with pytest.raises(jaxcc.CallError, match=r"@cuda.jit\(link=...\).*load_cuda_inline"):
        jaxcc.numba_cuda_kernel(linked, out, grid=4, block=256, compute_capability="8.0")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_launchers_for_two_architectures_live_in_one_process():
    sm80 = launcher_module(2, 1, "8.0")
    sm90 = launcher_module(2, 1, "9.0")
    name = "numba_cuda_bridge_2_1"
    assert sm80.target_name(name) != sm90.target_name(name)
    assert sm80.cuda_archs != sm90.cuda_archs


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_ptx_is_loaded_at_trace_time_before_any_launch(launches):
    out = jax.ShapeDtypeStruct(X.shape, X.dtype)
    jaxcc.numba_cuda_kernel(mul_cuda, out, grid=4, block=256, compute_capability="8.0")(X, Y)
    (kind, module, symbol, arguments, _), launch = launches[-2], launches[-1]
    assert kind == "preload" and launch[0] == "launch" and symbol == "jaxcc_numba_cuda_preload"
    assert arguments == (launch[2]["ptx"], launch[2]["name"], 0)
    exported = getattr(ctypes.CDLL(module.path), symbol)  # AttributeError if not exported
    if not has_jax_gpu():
        message = ctypes.create_string_buffer(256)
        exported.argtypes = [ctypes.c_int64] * 3 + [
            ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p, ctypes.c_int64,
        ]  # fmt: skip
        assert exported(*arguments, None, -1, message, 256) == 1  # every device: there are none
        assert b"cuda" in message.value.lower()


# --- on a GPU ----------------------------------------------------------------------------------


def numba_cuda_mul(outs, **params):
    n = outs[0].size
    return jaxcc.numba_cuda_kernel(mul_cuda, outs[0], grid=(n + 255) // 256, block=256)


@pytest.mark.gpu
@pytest.mark.skipif(not has_jax_gpu(), reason="needs a JAX GPU device")
def test_numba_cuda_backend_through_one_primitive_on_gpu():
    from test_other_backends import pallas_mul

    kernel = make_mul("numba_cuda")
    kernel.def_numba_cuda_kernel(numba_cuda_mul)
    kernel.def_pallas_kernel("gpu", pallas_mul)
    gpu = jax.devices("gpu")[0]
    # Pallas's Triton lowering takes whole-array blocks only when the size is a power of two.
    x_host, y_host = (
        np.linspace(-1, 1, 1024, dtype=np.float32),
        np.linspace(2, 3, 1024, dtype=np.float32),
    )
    x, y = jax.device_put(x_host, gpu), jax.device_put(y_host, gpu)
    expected = x_host * y_host
    np.testing.assert_allclose(call(kernel, x, y, backend="numba_cuda"), expected, rtol=1e-6)
    np.testing.assert_allclose(call(kernel, x, y, backend="pallas"), expected, rtol=1e-6)
    jitted = jax.jit(lambda a, b: call(kernel, a, b, backend="numba_cuda"))
    np.testing.assert_allclose(jitted(x, y), expected, rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.skipif(not has_jax_gpu(), reason="needs a JAX GPU device")
def test_numba_cuda_kernel_alone_rank_2_and_inside_fori_loop():
    m = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    v = jnp.arange(4, dtype=jnp.float32)
    add = jaxcc.numba_cuda_kernel(
        add_rows, jax.ShapeDtypeStruct(m.shape, m.dtype), grid=(1, 1), block=(4, 4)
    )
    np.testing.assert_array_equal(add(m, v), np.asarray(m) + np.asarray(v))
    looped = jax.jit(lambda a: jax.lax.fori_loop(0, 10, lambda i, acc: add(acc, v), a))
    np.testing.assert_array_equal(looped(m), np.asarray(m) + 10 * np.asarray(v))


@pytest.mark.gpu
@pytest.mark.skipif(not has_jax_gpu(), reason="needs a JAX GPU device")
def test_fastmath_and_max_registers_kernels_run_on_gpu():
    fast = cuda.jit(fastmath=True, max_registers=32)(divide)
    out = jax.ShapeDtypeStruct(X.shape, X.dtype)
    got = jaxcc.numba_cuda_kernel(fast, out, grid=4, block=256)(X, Y)
    np.testing.assert_allclose(got, np.asarray(X) / np.asarray(Y), rtol=1e-5)
