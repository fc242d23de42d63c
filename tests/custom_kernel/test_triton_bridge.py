"""The Triton bridge: kernels compiled ahead of time by Triton and launched by a jaxcc-compiled FFI
target on XLA's stream. Without a GPU (CI) the parameter binding, Triton's compiled kernel ABI
against the launch plan, the launcher's build and the errors are checked; the launches themselves
run in the `gpu`-marked tests."""

import ctypes
import json
import pathlib
import shutil
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import call, has_jax_gpu, make_mul

import jaxcc
from jaxcc.custom_kernel.bridges import triton as tb
from jaxcc.custom_kernel.bridges import triton_params as tp
from jaxcc.custom_kernel.bridges.triton_launcher import (
    PLAN_BUFFER,
    PLAN_GLOBAL_SCRATCH,
    PLAN_SCALAR,
    launcher_module,
)

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

N = 1000
X = jnp.linspace(-1, 1, N, dtype=jnp.float32)
Y = jnp.linspace(2, 3, N, dtype=jnp.float32)
OUT = jax.ShapeDtypeStruct((N,), jnp.float32)


@triton.jit
def scaled_mul(x_ptr, y_ptr, o_ptr, n, scale, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(o_ptr + offsets, x * y * scale, mask=mask)


@triton.jit
def many_scalars(o_ptr, flag, small, big, huge, half, wide, unused, BLOCK: tl.constexpr = 64):
    # One parameter of every width the launcher packs; `unused` must still be a kernel parameter.
    offsets = tl.arange(0, BLOCK)
    value = small + big.to(tl.float32) + half.to(tl.float32) + wide.to(tl.float32)
    value = tl.where(flag, value, 0.0) + huge.to(tl.float32) * 0.0
    tl.store(o_ptr + offsets, value + tl.zeros([BLOCK], tl.float32))


def grid_for(meta):
    return (triton.cdiv(meta["n"], meta["BLOCK"]),)


def bind(kernel, n_buffers, **params):
    return tp.bind_parameters(kernel, n_buffers, ["*fp32"] * n_buffers, params)


# --- binding parameters ------------------------------------------------------------------------


def test_buffers_come_first_then_constexprs_and_scalars_by_name():
    signature, constexprs, scalars, meta = bind(scaled_mul, 3, n=N, scale=2.5, BLOCK=128)
    assert signature == {
        "x_ptr": "*fp32", "y_ptr": "*fp32", "o_ptr": "*fp32",
        "n": "i32", "scale": "fp32", "BLOCK": "constexpr",
    }  # fmt: skip
    assert constexprs == {(5,): 128}
    assert scalars == [("i32", N), ("fp32", 2.5)]
    assert meta == {"n": N, "scale": 2.5, "BLOCK": 128}


def test_scalar_types_follow_tritons_rules_and_numpy_dtypes():
    assert tp.scalar_type("a", 7, "") == "i32"
    assert tp.scalar_type("a", -(2**31), "") == "i32"
    assert tp.scalar_type("a", 2**31, "") == "i64"
    assert tp.scalar_type("a", 2**63, "") == "u64"
    assert tp.scalar_type("a", True, "") == "i1"
    assert tp.scalar_type("a", 1.5, "") == "fp32"
    assert tp.scalar_type("a", np.float64(1.5), "") == "fp64"
    assert tp.scalar_type("a", np.float16(1.5), "") == "fp16"
    assert tp.scalar_type("a", np.uint16(3), "") == "u16"
    assert tp.scalar_type("a", 3, "i64") == "i64"  # an annotation (n: tl.int64) wins
    with pytest.raises(jaxcc.CallError, match="does not fit in 64 bits"):
        tp.scalar_type("a", 2**64, "")
    with pytest.raises(jaxcc.CallError, match="parameter a is a runtime scalar.*tl.constexpr"):
        tp.scalar_type("a", jnp.ones(3), "")


def test_scalar_words_hold_the_scalars_bytes_little_endian():
    def low_bytes(word, size):
        return np.array([word], np.int64).view(np.uint8)[:size].tobytes()

    assert low_bytes(tp.scalar_word("fp32", 2.5), 4) == np.float32(2.5).tobytes()
    assert low_bytes(tp.scalar_word("i32", -3), 4) == np.int32(-3).tobytes()
    assert low_bytes(tp.scalar_word("fp64", -0.1), 8) == np.float64(-0.1).tobytes()
    assert low_bytes(tp.scalar_word("i1", True), 1) == b"\x01"
    assert low_bytes(tp.scalar_word("u64", 2**64 - 1), 8) == b"\xff" * 8
    assert low_bytes(tp.scalar_word("bf16", 1.0), 2) == np.uint16(0x3F80).tobytes()
    assert tp.scalar_word("i8", -1) == 0xFF  # only the scalar's bytes are set


def test_missing_unknown_and_misplaced_parameters_are_typed_errors():
    with pytest.raises(jaxcc.CallError, match="needs a value for parameter scale; pass it as"):
        bind(scaled_mul, 3, n=N, BLOCK=128)
    with pytest.raises(jaxcc.CallError, match="has no parameter.*blok.*its parameters are x_ptr"):
        bind(scaled_mul, 3, n=N, scale=1.0, BLOCK=128, blok=3)
    with pytest.raises(jaxcc.CallError, match="takes 6 parameter.*called with 7 buffer"):
        bind(scaled_mul, 7)
    with pytest.raises(jaxcc.CallError, match="BLOCK of scaled_mul is a tl.constexpr.*position 5"):
        bind(scaled_mul, 6)


def test_defaults_fill_parameters_that_are_not_given():
    signature, constexprs, _, meta = bind(
        many_scalars, 1, flag=True, small=1.0, big=2, huge=2**40, half=np.float16(0.5),
        wide=np.float64(0.25), unused=np.int8(1),
    )  # fmt: skip
    assert constexprs == {(8,): 64} and meta["BLOCK"] == 64
    assert [signature[k] for k in ("flag", "small", "big", "huge", "half", "wide", "unused")] == [
        "i1", "fp32", "i32", "i64", "fp16", "fp64", "i8",
    ]  # fmt: skip


# --- Triton's compiled ABI against the launch plan (no GPU needed) ------------------------------


@pytest.mark.parametrize("cc", [(8, 0), (9, 0)])
def test_compiled_parameters_match_the_launch_plan(cc):
    signature, constexprs, scalars, _ = bind(scaled_mul, 3, n=N, scale=2.5, BLOCK=128)
    compiled = tb.compile_kernel(scaled_mul, signature, constexprs, 3, 4, 3, cc, False, True)
    assert compiled.ptx_param_bytes[:5] == [8, 8, 8, 4, 4]
    plan = tb.build_plan(compiled, 3, scalars, "scaled_mul")
    count = plan[0]
    assert count == len(compiled.ptx_param_bytes)
    kinds = plan[1 : 1 + 2 * count : 2].tolist()
    assert kinds[:5] == [PLAN_BUFFER] * 3 + [PLAN_SCALAR] * 2
    assert plan[2 : 2 + 2 * count : 2].tolist()[:3] == [0, 1, 2]  # buffer indices in order
    assert bytes(compiled.binary[:4]) == b"\x7fELF"  # a cubin
    assert bytes(compiled.name).rstrip(b"\0") == b"scaled_mul"


def test_every_scalar_width_lines_up_with_the_ptx():
    params = dict(flag=True, small=1.0, big=2, huge=2**40, half=np.float16(0.5))
    params.update(wide=np.float64(0.25), unused=np.int8(1))
    signature, constexprs, scalars, _ = bind(many_scalars, 1, **params)
    compiled = tb.compile_kernel(many_scalars, signature, constexprs, 1, 2, 1, (9, 0), False)
    assert compiled.ptx_param_bytes[:8] == [8, 1, 4, 4, 8, 2, 8, 1]
    tb.build_plan(compiled, 1, scalars, "many_scalars")  # raises if any width disagrees


def test_a_plan_that_disagrees_with_the_ptx_is_refused():
    signature, constexprs, scalars, _ = bind(scaled_mul, 3, n=N, scale=2.5, BLOCK=128)
    compiled = tb.compile_kernel(scaled_mul, signature, constexprs, 3, 4, 3, (8, 0), False)
    with pytest.raises(jaxcc.CallError, match="kernel ABI is not one jaxcc knows"):
        tb.build_plan(compiled, 3, [("fp64", 1.0)] + scalars[1:], "scaled_mul")


def test_compiling_twice_reuses_the_first_result_and_ptx_mode_gives_ptx():
    signature, constexprs, _, _ = bind(scaled_mul, 3, n=N, scale=2.5, BLOCK=64)
    first = tb.compile_kernel(scaled_mul, signature, constexprs, 3, 4, 2, (8, 6), False)
    assert tb.compile_kernel(scaled_mul, signature, constexprs, 3, 4, 2, (8, 6), False) is first
    as_ptx = tb.compile_kernel(scaled_mul, signature, constexprs, 3, 4, 2, (8, 6), True)
    assert as_ptx is not first and b".entry scaled_mul" in bytes(as_ptx.binary)


@triton.jit
def mul_add(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets)
    tl.store(o_ptr + offsets, x * x + 1.0)


def test_fp_fusion_is_on_by_default_and_can_be_turned_off():
    signature, constexprs, _, _ = bind(mul_add, 2, BLOCK=32)
    fused = tb.compile_kernel(mul_add, signature, constexprs, 2, 1, 1, (8, 0), True, True)
    strict = tb.compile_kernel(mul_add, signature, constexprs, 2, 1, 1, (8, 0), True, False)
    assert "fma.rn.f32" in bytes(fused.binary).decode()
    assert "fma.rn.f32" not in bytes(strict.binary).decode()
    assert jaxcc.triton_kernel.__kwdefaults__["enable_fp_fusion"] is True


def test_a_kernel_triton_cannot_compile_names_the_kernel_and_the_source():
    @triton.jit
    def broken(x_ptr, o_ptr, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        tl.store(o_ptr + offsets, tl.load(x_ptr + offsets) + undefined_name)  # noqa: F821

    signature, constexprs, _, _ = bind(broken, 2, BLOCK=16)
    with pytest.raises(jaxcc.CallError, match=r"could not compile broken(.|\n)*undefined_name"):
        tb.compile_kernel(broken, signature, constexprs, 2, 4, 3, (8, 0), False)


# --- the launcher and the call path -------------------------------------------------------------


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_launcher_builds_without_a_gpu_and_the_call_says_no_gpu():
    module = launcher_module(2, 1, "8.0")
    assert module.platform == "cuda"
    assert module.function_names == ["triton_bridge_2_1"]
    if has_jax_gpu():
        return
    wrapped = jaxcc.triton_kernel(
        scaled_mul, OUT, grid=grid_for, n=N, scale=2.0, BLOCK=128, compute_capability="8.0"
    )
    with pytest.raises(jaxcc.DeviceError, match="no GPU backend"):
        wrapped(X, Y)


def test_without_a_gpu_or_an_architecture_the_error_says_what_to_do():
    if has_jax_gpu():
        pytest.skip("a GPU is present")
    wrapped = jaxcc.triton_kernel(scaled_mul, OUT, grid=(8,), n=N, scale=2.0, BLOCK=128)
    with pytest.raises(jaxcc.DeviceError, match="JAX sees no GPU.*compute_capability="):
        wrapped(X, Y)


def test_bad_configurations_are_typed_errors_naming_the_fix():
    for bad in ((1, 2, 3, 4), -1, "8", 1.5, True, (1, 70000)):
        wrapped = jaxcc.triton_kernel(
            scaled_mul, OUT, grid=bad, n=N, scale=1.0, BLOCK=128, compute_capability="8.0"
        )
        with pytest.raises(jaxcc.CallError, match="grid"):
            wrapped(X, Y)
    for warps in (3, 0, 64, 4.0):
        with pytest.raises(jaxcc.CallError, match="num_warps must be a power of two"):
            jaxcc.triton_kernel(scaled_mul, OUT, grid=(1,), num_warps=warps)
    with pytest.raises(jaxcc.CallError, match="num_stages"):
        jaxcc.triton_kernel(scaled_mul, OUT, grid=(1,), num_stages=0)
    with pytest.raises(jaxcc.CallError, match="compute_capability"):
        jaxcc.triton_kernel(scaled_mul, OUT, grid=(1,), compute_capability="sm_xx")
    with pytest.raises(jaxcc.CallError, match="outs entries need .shape"):
        jaxcc.triton_kernel(scaled_mul, [3], grid=(1,))

    def failing_grid(meta):
        raise KeyError("BLOK")

    wrapped = jaxcc.triton_kernel(
        scaled_mul, OUT, grid=failing_grid, n=N, scale=1.0, BLOCK=128, compute_capability="8.0"
    )
    with pytest.raises(jaxcc.CallError, match="grid function raised KeyError"):
        wrapped(X, Y)
    complex_in = jaxcc.triton_kernel(
        scaled_mul, OUT, grid=(1,), n=N, scale=1.0, BLOCK=128, compute_capability="8.0"
    )
    with pytest.raises(jaxcc.CallError, match="input 0 has dtype complex64.*cast it"):
        complex_in(X.astype(jnp.complex64), Y)


def test_only_jit_functions_are_accepted_and_autotuners_point_to_fn():
    with pytest.raises(jaxcc.CallError, match="must be a @triton.jit function, got function"):
        jaxcc.triton_kernel(lambda *a: None, OUT, grid=(1,))
    tuned = triton.autotune(configs=[triton.Config({"BLOCK": 128})], key=["n"])(scaled_mul)
    with pytest.raises(jaxcc.CallError, match=r"Autotuner chooses.*kernel\.fn"):
        jaxcc.triton_kernel(tuned, OUT, grid=(1,), n=N, scale=1.0)


# --- issue 15: what a first GPU run would hit, checked without one ------------------------------


@pytest.fixture
def launches(monkeypatch):
    """The call path up to the launch, without a GPU: records every preload and every
    ffi_call (target and attributes) instead of running them, in order."""
    events = []

    def fake_ffi_call(target, result_types, **kwargs):
        def run(*ins, **attrs):
            events.append(("launch", target, attrs))
            return [jnp.zeros(r.shape, r.dtype) for r in result_types]

        return run

    monkeypatch.setattr(tb, "require_gpu_backend", lambda who: None)
    monkeypatch.setattr(tb, "preload", lambda *args: events.append(("preload", *args)), False)
    monkeypatch.setattr(jax.ffi, "ffi_call", fake_ffi_call)
    return events


@triton.jit
def ws_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Warp-specialised on Hopper: Triton adds producer warps (and a TMA scratch area).
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BK, BN])
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True):
        acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([k, pid_n * BN]), acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def ws_call(arch="9.0"):
    m = n = k = 256
    return jaxcc.triton_kernel(
        ws_matmul, jax.ShapeDtypeStruct((m, n), jnp.float32), grid=(m // 128, n // 128),
        num_warps=4, num_stages=3, M=m, N=n, K=k, BM=128, BN=128, BK=64, compute_capability=arch,
    )(jnp.zeros((m, k), jnp.float16), jnp.zeros((k, n), jnp.float16))  # fmt: skip


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_a_warp_specialised_kernel_launches_with_the_compiled_warps_and_shared_memory(launches):
    # Requested 4 warps; Triton compiles the Hopper kernel for more (12, `.reqntid 384`). The
    # launch must use the compiled figure, or the kernel never starts (launch failure).
    ws_call("9.0")
    _, target, attrs = launches[-1]
    assert attrs["num_warps"] > 4  # the compiled figure, not the requested one
    (compiled,) = [c for c in tb._compiled.values() if bytes(c.name).startswith(b"ws_matmul")]
    assert attrs["num_warps"] == compiled.num_warps  # checked against `.reqntid` at compile
    assert attrs["shared_bytes"] == compiled.shared > 48 * 1024
    assert attrs["num_ctas"] == 1 and attrs["launch_flags"] == 0
    assert attrs["gx"] == 2 and attrs["gy"] == 2 and attrs["gz"] == 1
    plan = np.ctypeslib.as_array(
        (ctypes.c_int64 * (1 + 2 * len(compiled.ptx_param_bytes))).from_address(int(attrs["plan"]))
    )
    assert plan[0] == len(compiled.ptx_param_bytes)
    assert PLAN_GLOBAL_SCRATCH in plan[1::2].tolist()


def test_a_ptx_block_size_that_disagrees_with_the_metadata_is_refused():
    meta = types.SimpleNamespace(name="k", shared=0, num_warps=4, num_ctas=1)
    ptx = ".entry k(\n.param .u64 k_param_0\n)\n.reqntid 384, 1, 1\n{\n}"
    with pytest.raises(jaxcc.CallError, match="requires 384 threads per block.*4 warps"):
        tb.CompiledTriton(b"", meta, ptx)
    meta.num_warps = 12
    assert tb.CompiledTriton(b"", meta, ptx).num_warps == 12


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_kernels_with_scratch_are_launched_without_the_graph_trait(launches):
    # Scratch is allocated per launch (cudaMallocAsync): such kernels must not be captured in
    # XLA's command buffers, so they go through the launcher built without the trait.
    ws_call("9.0")
    compiled = [c for c in tb._compiled.values() if bytes(c.name).startswith(b"ws_matmul")][0]
    assert compiled.global_scratch > 0 and compiled.needs_scratch
    assert launches[-1][1].endswith("_nograph.triton_bridge_2_1")
    jaxcc.triton_kernel(
        scaled_mul, OUT, grid=grid_for, n=N, scale=2.0, BLOCK=128, compute_capability="9.0"
    )(X, Y)
    assert "_nograph" not in launches[-1][1]
    graph = launcher_module(2, 1, "9.0")
    nograph = launcher_module(2, 1, "9.0", allow_cuda_graph=False)
    assert "allow_cuda_graph=1" in codegen_options(graph)
    assert "allow_cuda_graph=0" in codegen_options(nograph)


def codegen_options(module) -> list[str]:
    """The code-generation options the module was built with, from its cache manifest."""
    manifest = pathlib.Path(module.path).parent / "manifest.json"
    return json.loads(manifest.read_text())["inputs"]["codegen_options"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_launchers_for_two_architectures_live_in_one_process():
    # sm_80 in the CPU tests and sm_90 on an H100 in the same process: the second build must
    # register under its own target name, not clash with the first (RegistrationError).
    sm80 = launcher_module(2, 1, "8.0")
    sm90 = launcher_module(2, 1, "9.0")
    assert sm80 is not sm90
    assert sm80.target_name("triton_bridge_2_1") != sm90.target_name("triton_bridge_2_1")
    assert "sm80" in sm80.name and "sm90" in sm90.name
    assert sm80.cuda_archs != sm90.cuda_archs
    assert launcher_module(2, 1, "9.0") is sm90  # built once per process


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_binary_is_loaded_at_trace_time_before_any_launch(launches):
    # Loading (cudaLibraryLoadData, PTX JIT) inside a CUDA-graph capture is not allowed: the
    # launcher library exports a preload that Python calls while tracing, before the ffi_call.
    jaxcc.triton_kernel(
        scaled_mul, OUT, grid=grid_for, n=N, scale=2.0, BLOCK=128, compute_capability="8.0"
    )(X, Y)
    (kind, module, symbol, arguments, _), launch = launches[-2], launches[-1]
    assert kind == "preload" and launch[0] == "launch" and symbol == "jaxcc_triton_preload"
    assert arguments[0] == launch[2]["binary"] and arguments[1] == launch[2]["name"]
    exported = getattr(ctypes.CDLL(module.path), symbol)  # AttributeError if not exported
    if not has_jax_gpu():
        # Without a GPU the preload fails cleanly, with the CUDA error as its message.
        message = ctypes.create_string_buffer(256)
        exported.argtypes = [ctypes.c_int64] * 3 + [
            ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p, ctypes.c_int64,
        ]  # fmt: skip
        assert exported(*arguments, None, -1, message, 256) == 1  # every device: there are none
        assert b"cuda" in message.value.lower()


# --- on a GPU ----------------------------------------------------------------------------------


def triton_mul(outs, **params):
    return jaxcc.triton_kernel(
        scaled_mul, outs[0], grid=lambda m: (triton.cdiv(m["n"], 128),), n=outs[0].size,
        scale=1.0, BLOCK=128,
    )  # fmt: skip


@pytest.mark.gpu
@pytest.mark.skipif(not has_jax_gpu(), reason="needs a JAX GPU device")
def test_triton_backend_through_one_primitive_on_gpu():
    from test_other_backends import pallas_mul

    kernel = make_mul("triton")
    kernel.def_triton_kernel(triton_mul)
    kernel.def_pallas_kernel("gpu", pallas_mul)
    gpu = jax.devices("gpu")[0]
    # Pallas's Triton lowering takes whole-array blocks only when the size is a power of two.
    x_host, y_host = (
        np.linspace(-1, 1, 1024, dtype=np.float32),
        np.linspace(2, 3, 1024, dtype=np.float32),
    )
    x, y = jax.device_put(x_host, gpu), jax.device_put(y_host, gpu)
    expected = x_host * y_host
    np.testing.assert_allclose(call(kernel, x, y), expected, rtol=1e-6)
    np.testing.assert_allclose(call(kernel, x, y, backend="pallas"), expected, rtol=1e-6)
    jitted = jax.jit(lambda a, b: call(kernel, a, b, backend="triton"))
    np.testing.assert_allclose(jitted(x, y), expected, rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.skipif(not has_jax_gpu(), reason="needs a JAX GPU device")
def test_scalars_of_every_width_reach_the_kernel():
    out = jax.ShapeDtypeStruct((64,), jnp.float32)
    wrapped = jaxcc.triton_kernel(
        many_scalars, out, grid=(1,), flag=True, small=1.5, big=2, huge=2**40,
        half=np.float16(0.5), wide=np.float64(0.25), unused=np.int8(7),
    )  # fmt: skip
    np.testing.assert_allclose(wrapped(), np.full(64, 4.25, np.float32))


@pytest.mark.gpu
@pytest.mark.skipif(not has_jax_gpu(), reason="needs a JAX GPU device")
def test_triton_kernel_inside_fori_loop_and_with_an_empty_grid():
    step = jaxcc.triton_kernel(scaled_mul, OUT, grid=grid_for, n=N, scale=1.0, BLOCK=256)
    ones = jnp.ones(N, jnp.float32) * 1.01
    looped = jax.jit(lambda a: jax.lax.fori_loop(0, 10, lambda i, acc: step(acc, ones), a))
    np.testing.assert_allclose(looped(X), np.asarray(X) * 1.01**10, rtol=1e-5)
    empty = jaxcc.triton_kernel(scaled_mul, OUT, grid=(0,), n=N, scale=1.0, BLOCK=256)
    assert empty(X, Y).shape == (N,)  # nothing launched, nothing failed


@triton.jit
def tile_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@pytest.mark.gpu
@pytest.mark.skipif(not has_jax_gpu(), reason="needs a JAX GPU device")
def test_a_matmul_that_needs_more_than_48_kib_of_shared_memory():
    m = n = k = 512
    a = jax.random.normal(jax.random.key(0), (m, k), jnp.float16)
    b = jax.random.normal(jax.random.key(1), (k, n), jnp.float16)
    blocks = dict(BM=128, BN=128, BK=64)
    matmul = jaxcc.triton_kernel(
        tile_matmul, jax.ShapeDtypeStruct((m, n), jnp.float32), grid=(m // 128, n // 128),
        num_warps=8, num_stages=4, M=m, N=n, K=k, **blocks,
    )  # fmt: skip
    expected = np.asarray(a, np.float32) @ np.asarray(b, np.float32)
    np.testing.assert_allclose(jax.jit(matmul)(a, b), expected, rtol=2e-2, atol=2e-1)


@pytest.mark.gpu
@pytest.mark.skipif(not has_jax_gpu(), reason="needs a JAX GPU device")
def test_a_warp_specialised_matmul_with_scratch_runs_on_hopper():
    # The kernel compiles to more warps than requested and needs global scratch (TMA
    # descriptors): it runs only if the launch uses the compiled configuration and allocates it.
    from jaxcc.custom_kernel.bridges.gpu_common import gpu_capabilities

    if gpu_capabilities()[0] < (9, 0):
        pytest.skip("warp specialisation needs sm_90 or newer")
    m = n = k = 256
    a = jax.random.normal(jax.random.key(0), (m, k), jnp.float16)
    b = jax.random.normal(jax.random.key(1), (k, n), jnp.float16)
    matmul = jaxcc.triton_kernel(
        ws_matmul, jax.ShapeDtypeStruct((m, n), jnp.float32), grid=(m // 128, n // 128),
        num_warps=4, num_stages=3, M=m, N=n, K=k, BM=128, BN=128, BK=64,
    )  # fmt: skip
    expected = np.asarray(a, np.float32) @ np.asarray(b, np.float32)
    np.testing.assert_allclose(jax.jit(matmul)(a, b), expected, rtol=2e-2, atol=2e-1)
    looped = jax.jit(
        lambda x, y: jax.lax.fori_loop(
            0, 3, lambda i, acc: acc + matmul(x, y), jnp.zeros((m, n), jnp.float32)
        )
    )
    np.testing.assert_allclose(looped(a, b), 3 * expected, rtol=2e-2, atol=6e-1)
