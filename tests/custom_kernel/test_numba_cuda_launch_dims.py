"""numba_cuda_kernel's brainevent 0.3 launch form: `launch_dims=`/`threads_per_block=` (grid and
block derived), its refusals at wrap time (CallValueError, also a ValueError), a launch of zero
threads and vmap of a launch_dims kernel. Without a GPU the derived grid and block are checked
through `launch_config` and through the attributes the launcher is given; the launches
themselves run in the `gpu`-marked tests."""

import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import has_jax_gpu
from hypothesis import given
from hypothesis import strategies as st

import jaxcc
from jaxcc.custom_kernel.bridges import numba_cuda as ncb
from jaxcc.custom_kernel.bridges.numba_cuda import launch_config

cuda = pytest.importorskip("numba.cuda")
if not hasattr(cuda, "compile_ptx"):
    pytest.skip("numba-cuda is not installed", allow_module_level=True)

OUT = jax.ShapeDtypeStruct((8,), jnp.float32)


@cuda.jit
def add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


@cuda.jit
def reverse(x, out):  # couples the elements of a row: a batched launch would mix rows
    i = cuda.grid(1)
    n = out.size
    if i < n:
        out[i] = x[n - 1 - i]


# --- the derived grid and block ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dims", "tpb", "grid", "block"),
    [
        (1024, 256, (4, 1, 1), (256, 1, 1)),
        (1000, 128, (8, 1, 1), (128, 1, 1)),
        (5, 256, (1, 1, 1), (5, 1, 1)),  # the block shrinks to a smaller extent
        ((64, 64), 256, (4, 4, 1), (16, 16, 1)),  # 2-D: 16x16 tiles, threads_per_block unused
        ((100, 3), 256, (7, 1, 1), (16, 3, 1)),
        ((10, 20, 30), 256, (2, 3, 8), (8, 8, 4)),  # 3-D: 8x8x4 tiles
        (0, 256, (0, 1, 1), (1, 1, 1)),  # an empty axis: no block
        ((8, 0), 256, (1, 0, 1), (8, 1, 1)),
    ],
)
def test_launch_config_gives_brainevents_grid_and_block(dims, tpb, grid, block):
    assert launch_config(dims, tpb) == (grid, block)


@given(
    dims=st.lists(st.integers(0, 5000), min_size=1, max_size=3),
    tpb=st.integers(1, 1024),
)
def test_launch_config_covers_every_thread_with_the_fewest_blocks_of_the_tile(dims, tpb):
    grid, block = launch_config(tuple(dims), tpb)
    tile = {1: (tpb,), 2: (16, 16), 3: (8, 8, 4)}[len(dims)]
    for axis, d in enumerate(dims):
        assert block[axis] == max(1, min(tile[axis], d))
        assert grid[axis] * block[axis] >= d  # every thread asked for is launched
        assert (grid[axis] - 1) * block[axis] < max(d, 1)  # and no whole block more
    assert grid[len(dims) :] == block[len(dims) :] == (1,) * (3 - len(dims))
    assert block[0] * block[1] * block[2] <= 1024


# --- refused at wrap time, as brainevent 0.3 refuses them, with typed errors --------------------


def refused(match, **launch):
    with pytest.raises(jaxcc.CallValueError, match=match) as info:
        jaxcc.numba_cuda_kernel(add, launch.pop("outs", OUT), **launch)
    assert isinstance(info.value, ValueError) and isinstance(info.value, jaxcc.CallError)


def test_launch_configurations_brainevent_refuses_are_value_errors_naming_the_fix():
    refused(r"no launch configuration; give grid= and block=.*or launch_dims=")
    refused(r"grid= and block= go together", grid=4)
    refused(r"grid= and block= go together", block=256)
    refused(r"either grid= and block= or launch_dims=, not both", grid=4, block=256, launch_dims=8)
    for method in ("expand_dims", "broadcast_all"):
        refused(rf"vmap_method='{method}' with an explicit grid.*give launch_dims=",
                grid=4, block=256, vmap_method=method)  # fmt: skip
    for bad in (-1, (), (1, 2, 3, 4), 1.5, True, "8", (8, -2)):
        refused(r"launch_dims must be a non-negative int", launch_dims=bad)
    for bad in (0, 1025, True, 2.0):
        refused(r"threads_per_block must be an int from 1 to 1024", launch_dims=8,
                threads_per_block=bad)  # fmt: skip
    refused(r"launch_dims \(1, 2000000\) needs a grid .* beyond CUDA's limits",
            launch_dims=(1, 2_000_000))  # fmt: skip


def test_a_bfloat16_output_is_refused_at_wrap_time_and_an_input_when_traced():
    bf16 = jax.ShapeDtypeStruct((8,), jnp.bfloat16)
    refused(r"output 0 is bfloat16.*declare it float32", outs=bf16, launch_dims=8)
    refused(r"output 1 is bfloat16", outs=[OUT, bf16], grid=1, block=8)
    wrapped = jaxcc.numba_cuda_kernel(add, OUT, launch_dims=8, compute_capability="8.0")
    with pytest.raises(jaxcc.CallValueError, match="input 0 has dtype bfloat16"):
        wrapped(jnp.ones(8, jnp.bfloat16), jnp.ones(8, jnp.float32))


def test_what_brainevent_accepts_is_accepted():
    # launch_dims with any vmap method; an explicit grid with a vmap method that does not hand
    # the kernel batched buffers; a plain function (brainevent wants a cuda.jit one: jaxcc did
    # and does take both).
    for method in (None, "sequential", "expand_dims", "broadcast_all"):
        jaxcc.numba_cuda_kernel(add, OUT, launch_dims=8, vmap_method=method)
    jaxcc.numba_cuda_kernel(add, OUT, grid=1, block=8, vmap_method="sequential")
    jaxcc.numba_cuda_kernel(add.py_func, OUT, launch_dims=(2, 4), threads_per_block=1024)


# --- what the launcher is given -------------------------------------------------------------------


@pytest.fixture
def launches(monkeypatch):
    """The call path up to the launch, without a GPU: records each ffi_call's options and the
    attributes of its launch."""
    events = []

    def fake_ffi_call(target, result_types, **options):
        def run(*ins, **attrs):
            events.append((options, attrs))
            return [jnp.zeros(r.shape, r.dtype) for r in result_types]

        return run

    monkeypatch.setattr(ncb, "require_gpu_backend", lambda who: None)
    monkeypatch.setattr(ncb, "preload", lambda *args: None)
    monkeypatch.setattr(jax.ffi, "ffi_call", fake_ffi_call)
    return events


def launched_dims(attrs):
    return tuple(int(attrs[k]) for k in ("gx", "gy", "gz")), tuple(
        int(attrs[k]) for k in ("bx", "by", "bz")
    )


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_launcher_is_given_the_derived_grid_and_block(launches):
    x = jnp.ones(1000, jnp.float32)
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    cc = {"compute_capability": "8.0"}
    jaxcc.numba_cuda_kernel(add, out, launch_dims=1000, threads_per_block=128, **cc)(x, x)
    assert launched_dims(launches[-1][1]) == ((8, 1, 1), (128, 1, 1))
    jaxcc.numba_cuda_kernel(add, out, launch_dims=1000, **cc)(x, x)
    assert launched_dims(launches[-1][1]) == ((4, 1, 1), (256, 1, 1))
    jaxcc.numba_cuda_kernel(add, out, launch_dims=(40, 25), **cc)(x, x)
    assert launched_dims(launches[-1][1]) == ((3, 2, 1), (16, 16, 1))
    jaxcc.numba_cuda_kernel(add, out, grid=(3, 2), block=(16, 16), **cc)(x, x)
    assert launched_dims(launches[-1][1]) == ((3, 2, 1), (16, 16, 1))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_a_launch_dims_kernel_is_mapped_one_launch_per_batch_element(launches):
    # XLA's expand_dims/broadcast_all would hand the kernel, compiled for the unbatched ranks,
    # buffers with a batch axis: jaxcc asks for the sequential map instead.
    x = jnp.ones(8, jnp.float32)
    for method, passed in (("expand_dims", "sequential"), ("broadcast_all", "sequential"),
                          ("sequential_unrolled", "sequential_unrolled")):  # fmt: skip
        wrapped = jaxcc.numba_cuda_kernel(
            add, OUT, launch_dims=8, vmap_method=method, compute_capability="8.0"
        )
        wrapped(x, x)
        assert launches[-1][0]["vmap_method"] == passed


def test_a_launch_of_zero_threads_returns_zeros_and_compiles_nothing(monkeypatch):
    def no_compile(*args):
        raise AssertionError("an empty launch compiled its kernel")

    monkeypatch.setattr(ncb, "compile_ptx", no_compile)
    monkeypatch.setattr(ncb, "preload", no_compile)
    x = jnp.arange(1, 9, dtype=jnp.float32)
    empty = jaxcc.numba_cuda_kernel(add, OUT, launch_dims=0, input_output_aliases={0: 0})
    np.testing.assert_array_equal(empty(x, x), np.zeros(8, np.float32))
    np.testing.assert_array_equal(jax.jit(empty)(x, x), np.zeros(8, np.float32))
    pair = [OUT, jax.ShapeDtypeStruct((2, 3), jnp.int32)]
    a, b = jaxcc.numba_cuda_kernel(add, pair, launch_dims=(4, 0))(x, x)
    assert a.shape == (8,) and b.shape == (2, 3) and b.dtype == jnp.int32
    assert not np.asarray(a).any() and not np.asarray(b).any()


# --- on a GPU ------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not has_jax_gpu(), reason="needs a JAX GPU device")
def test_launch_dims_kernels_run_and_vmap_per_batch_element_on_gpu():
    n, batch = 1000, 4
    x = jnp.arange(n, dtype=jnp.float32)
    out = jax.ShapeDtypeStruct((n,), jnp.float32)
    summed = jaxcc.numba_cuda_kernel(add, out, launch_dims=n, threads_per_block=128)
    np.testing.assert_array_equal(jax.jit(summed)(x, x), 2 * np.asarray(x))
    rows = jnp.arange(batch * 5, dtype=jnp.float32).reshape(batch, 5)
    for method in ("expand_dims", "broadcast_all", None):
        flipped = jaxcc.numba_cuda_kernel(
            reverse, jax.ShapeDtypeStruct((5,), jnp.float32), launch_dims=5, vmap_method=method
        )
        np.testing.assert_array_equal(jax.vmap(flipped)(rows), np.asarray(rows)[:, ::-1])
    empty = jaxcc.numba_cuda_kernel(add, out, launch_dims=0, input_output_aliases={0: 0})
    np.testing.assert_array_equal(jax.jit(empty)(x + 1, x), np.zeros(n, np.float32))
