"""The native Numba bridge (cfunc + jaxcc trampoline) and the ctypes callback bridge."""

import gc
import json
import threading

import jax
import jax.numpy as jnp
import numba
import numpy as np
import pytest

import jaxcc
from jaxcc.custom_kernel.bridges import numba_cpu_trampoline as numba_trampoline


@numba.njit
def split_sum(x, w, total, scaled):
    # Two outputs, a 2-D input and an int32 input.
    for i in range(x.shape[0]):
        acc = 0.0
        for j in range(x.shape[1]):
            acc += x[i, j]
            scaled[i, j] = x[i, j] * w[j]
        total[i] = acc


@numba.njit
def double_scalar(x, out):
    out[()] = x[()] * 2


@numba.njit
def refuse_negative(x, out):
    for i in range(x.size):
        if x[i] < 0:
            raise ValueError("negative input")
        out[i] = x[i]


def outs_for(x):
    return [
        jax.ShapeDtypeStruct((x.shape[0],), jnp.float32),
        jax.ShapeDtypeStruct(x.shape, jnp.float32),
    ]


@pytest.fixture(autouse=True)
def on_the_cpu():
    # Numba kernels run on the CPU; where JAX's default device is a GPU, these tests place their
    # calls on the CPU as a user there would.
    with jax.default_device(jax.devices("cpu")[0]):
        yield


X = jnp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
W = jnp.asarray([1, -1, 2, 0], jnp.int32)


@pytest.mark.parametrize("bridge", ["native", "callback"])
def test_bridge_matches_numpy(bridge):
    f = jaxcc.numba_kernel(split_sum, outs_for(X), bridge=bridge)
    total, scaled = f(X, W)
    np.testing.assert_allclose(total, np.asarray(X).sum(axis=1))
    np.testing.assert_allclose(scaled, np.asarray(X) * np.asarray(W))
    total_jit, _ = jax.jit(f)(X, W)
    np.testing.assert_allclose(total_jit, total)


def test_native_entry_is_a_numba_cfunc_not_a_python_callback():
    from jaxcc.custom_kernel.bridges.numba_cpu import _entries, entry_address

    address, impl = entry_address(split_sum, [X, W], outs_for(X), "native")
    ((kernel_code, entry),) = [v[0] for k, v in _entries.items() if v[2] == impl]
    # The kernel's own native function, called by the trampoline directly (no entry needed).
    assert impl != 0 and address == 0 and entry is None
    # Compiled Numba code (a compile result or a code library from the cache), no ctypes callback.
    assert type(kernel_code).__module__.startswith("numba")


def test_rank_zero_and_shapes_differ_per_call():
    f = jaxcc.numba_kernel(double_scalar, jax.ShapeDtypeStruct((), jnp.float32))
    assert float(f(jnp.float32(3.5))) == 7.0
    g = jaxcc.numba_kernel(refuse_negative, jax.ShapeDtypeStruct((7,), jnp.float32))
    np.testing.assert_allclose(g(jnp.arange(7.0, dtype=jnp.float32)), np.arange(7.0))


def test_kernel_exception_becomes_a_python_error_and_later_calls_work():
    out = jax.ShapeDtypeStruct((3,), jnp.float32)
    f = jaxcc.numba_kernel(refuse_negative, out)
    with pytest.raises(Exception, match="numba kernel raised an exception"):
        jax.block_until_ready(f(jnp.asarray([1.0, -1.0, 2.0], jnp.float32)))
    np.testing.assert_allclose(f(jnp.ones(3, jnp.float32)), np.ones(3))


def test_threads_share_the_native_bridge():
    f = jax.jit(jaxcc.numba_kernel(split_sum, outs_for(X)))
    expected = np.asarray(X).sum(axis=1)
    errors = []

    def work(k):
        try:
            with jax.default_device(jax.devices("cpu")[0]):  # the setting is per thread
                for _ in range(20):
                    np.testing.assert_allclose(f(X + k, W)[0], expected + 4 * k)
        except Exception as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_trampoline_checks_the_process_id():
    from jaxcc.custom_kernel.bridges.numba_cpu import entry_address

    out = jax.ShapeDtypeStruct((3,), jnp.float32)
    x = jnp.ones(3, jnp.float32)
    address, impl = entry_address(refuse_negative, [x], [out])
    call = jax.ffi.ffi_call(numba_trampoline.trampoline_target(1, 1), out)
    with pytest.raises(Exception, match="compiled in another process"):
        jax.block_until_ready(call(x, fn=np.int64(address), impl=np.int64(impl), pid=np.int64(1)))


def test_bad_inputs():
    with pytest.raises(jaxcc.CallError, match="numba.njit"):
        jaxcc.numba_kernel(lambda x, out: None, jax.ShapeDtypeStruct((1,), jnp.float32))
    with pytest.raises(jaxcc.CallError, match="bridge"):
        jaxcc.numba_kernel(double_scalar, jax.ShapeDtypeStruct((), jnp.float32), bridge="gil")
    f = jaxcc.numba_kernel(double_scalar, jax.ShapeDtypeStruct((), jnp.bfloat16))
    with pytest.raises(jaxcc.CallError, match="bfloat16"):
        f(jnp.float32(1))
    g = jaxcc.numba_kernel(double_scalar, jax.ShapeDtypeStruct((), jnp.float16))
    with pytest.raises(jaxcc.CallError, match="float16"):
        g(jnp.float32(1))


@pytest.mark.gpu
def test_an_eager_call_placed_on_the_gpu_is_a_device_error_naming_the_fix():
    gpu, cpu = jax.devices("gpu")[0], jax.devices("cpu")[0]
    f = jaxcc.numba_kernel(split_sum, outs_for(X))
    with pytest.raises(jaxcc.errors.DeviceError, match="split_sum(.|\n)*jax.devices\\('cpu'\\)"):
        f(jax.device_put(X, gpu), jax.device_put(W, gpu))
    total, _ = f(jax.device_put(X, cpu), jax.device_put(W, cpu))  # committed to the CPU: runs
    np.testing.assert_allclose(total, np.asarray(X).sum(axis=1))
    with jax.default_device(cpu):
        total, _ = f(np.asarray(X), np.asarray(W))
    np.testing.assert_allclose(total, np.asarray(X).sum(axis=1))


def test_numba_compile_runs_with_the_cyclic_collector_paused_and_restores_it():
    # Decision 107: collections inside Numba's compile (a full one costs ~0.1 s with JAX loaded)
    # are what a new kernel paid on top of brainevent. The collector is restored afterwards, also
    # when the compile fails, and left off when the caller had turned it off.
    from numba.core import compiler

    collections, in_compile = [], []
    original = compiler.compile_extra  # every Numba compile, through a dispatcher or not

    def compile_watched(*args, **kwargs):
        in_compile.append(True)
        try:
            return original(*args, **kwargs)
        finally:
            in_compile.pop()

    def watch(phase, info):
        if phase == "start" and in_compile:
            collections.append(info["generation"])

    def make(scale):
        @numba.njit
        def kernel(x, out):
            for i in range(out.size):
                out[i] = x[i] * scale

        return kernel

    x = jnp.arange(8, dtype=jnp.float32)
    spec = jax.ShapeDtypeStruct(x.shape, x.dtype)
    compiler.compile_extra = compile_watched
    gc.callbacks.append(watch)
    try:
        threshold = gc.get_threshold()
        gc.set_threshold(50, 2, 2)  # collections so frequent that an unpaused compile has some
        try:
            y = jax.jit(jaxcc.numba_kernel(make(1.5), spec))(x)
        finally:
            gc.set_threshold(*threshold)
    finally:
        gc.callbacks.remove(watch)
        compiler.compile_extra = original
    np.testing.assert_allclose(np.asarray(y), np.arange(8) * 1.5)
    assert collections == []
    assert gc.isenabled()

    @numba.njit
    def untypable(x, out):
        out[0] = x.no_such_attribute

    with pytest.raises(Exception, match="no_such_attribute"):
        jaxcc.numba_kernel(untypable, spec)(x)
    assert gc.isenabled()
    gc.disable()
    try:
        jax.jit(jaxcc.numba_kernel(make(2.5), spec))(x).block_until_ready()
        assert not gc.isenabled()
    finally:
        gc.enable()


OVERLAP_PROBE = """
import time, json
import jax, jax.numpy as jnp, numba
from numba.core import compiler
import jaxcc
from jaxcc.build import load_request

spans = {"compile": [], "build": []}
def timed(name, original):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spans[name].append((start, time.perf_counter()))
    return wrapper
compiler.compile_extra = timed("compile", compiler.compile_extra)
load_request.load = timed("build", load_request.load)

@numba.njit
def shift(x, out):
    for i in range(out.size):
        out[i] = x[i] + 1.5

x = jnp.arange(4, dtype=jnp.float32)
y = jax.jit(jaxcc.numba_kernel(shift, jax.ShapeDtypeStruct(x.shape, x.dtype)))(x)
print("RESULT", json.dumps({"y": [float(v) for v in y], **spans}))
"""


def test_a_new_aritys_trampoline_builds_while_numba_compiles_the_kernel(tmp_path):
    # Decision 116: the first use of an arity on a machine builds its trampoline (g++, GIL
    # released) on a thread while Numba compiles the kernel, instead of after it. A fresh process
    # with an empty cache: the build's span must start before the kernel's compile ends.
    from conftest import run_python

    # A CPU kernel: on a GPU machine JAX's default device would be the GPU (numba_kernel refuses it).
    env = {"JAXCC_CACHE_DIR": str(tmp_path / "cache"), "JAX_PLATFORMS": "cpu"}
    result = run_python(OVERLAP_PROBE, env=env)
    assert result.returncode == 0, result.stderr
    line = next(s for s in result.stdout.splitlines() if s.startswith("RESULT"))
    found = json.loads(line[len("RESULT") :])
    assert found["y"] == [1.5, 2.5, 3.5, 4.5]
    (build,) = found["build"]
    compile_start, compile_end = found["compile"][0]
    assert build[0] < compile_end  # started before the compile finished: they overlap
    assert build[1] > compile_start
