"""Code written against brainevent 0.3's XLACustomKernel runs with `import jaxcc as brainevent`:
the usage in brainevent's XLACustomKernel reference (the seeds), and its exception names."""

import jax
import jax.numpy as jnp
import numba
import numpy as np
import pytest
from ck_helpers import unique

import jaxcc
import jaxcc as brainevent


@numba.njit
def _add_one(x, out):
    for i in range(out.size):
        out[i] = x[i] + 1.0


def numba_kernel_generator(outs, **params):
    return brainevent.numba_kernel(_add_one, outs)


def pallas_kernel_generator(**params):  # registered for the GPU only, never run here
    raise AssertionError("the GPU kernel must not be traced on the CPU")


warp_kernel_generator = pallas_kernel_generator


def test_the_reference_example_runs():
    kernel = brainevent.XLACustomKernel(unique("my_custom_op"))
    kernel.def_numba_kernel(numba_kernel_generator)  # CPU default
    kernel.def_pallas_kernel("gpu", pallas_kernel_generator, asdefault=True)
    kernel.def_warp_kernel(warp_kernel_generator)  # alternative GPU backend
    assert kernel.defaults == {"cpu": "numba", "gpu": "pallas"}
    kernel.set_default("gpu", "warp")
    assert kernel.get_default("gpu") == "warp"
    assert kernel.available_backends("gpu") == ["pallas", "warp"]
    assert kernel.available_backends("tpu") == []
    # brainevent's tutorials read the private table
    assert list(kernel._kernels["gpu"]) == ["pallas", "warp"]
    assert kernel._kernels["cpu"]["numba"].kernel_generator is numba_kernel_generator

    input_array = jnp.arange(10, dtype=jnp.float32)
    result = kernel(input_array, outs=[jax.ShapeDtypeStruct((10,), jnp.float32)])
    np.testing.assert_allclose(result[0], np.arange(10) + 1.0)

    kernel.def_call(lambda x, backend=None: kernel(x, outs=[jax.ShapeDtypeStruct((10,), x.dtype)]))
    np.testing.assert_allclose(kernel.call(input_array)[0], np.arange(10) + 1.0)
    kernel.def_tags("csr", "binary", "mv")
    assert kernel in brainevent.get_primitives_by_tags(["csr", "binary"])
    kernel.def_benchmark_data(
        lambda *, platform: [brainevent.BenchmarkConfig("n10", (input_array,))]
    )
    result = kernel.benchmark(platform="cpu", n_warmup=1, n_runs=2)
    assert [r.backend for r in result.records] == ["numba"]
    kernel.register_general_batching()
    batched = jax.vmap(lambda x: kernel(x, outs=[jax.ShapeDtypeStruct((10,), x.dtype)])[0])
    np.testing.assert_allclose(batched(jnp.ones((3, 10), jnp.float32)), np.full((3, 10), 2.0))


def test_the_registration_shorthands_of_the_reference():
    kernel = brainevent.XLACustomKernel(unique("shorthands"))
    kernel.def_numba_cuda_kernel(pallas_kernel_generator)
    kernel.def_triton_kernel(pallas_kernel_generator, asdefault=True)
    kernel.def_cuda_raw_kernel(pallas_kernel_generator)
    kernel.def_kernel("cuda_raw", "cpu", numba_kernel_generator)
    kernel.def_jvp_rule2(lambda t, x, **kw: [t])
    kernel.def_transpose_rule(lambda ct, x, **kw: (ct[0],))
    assert kernel.defaults == {"gpu": "triton", "cpu": "cuda_raw"}
    assert isinstance(brainevent.KernelEntry("numba", "cpu", numba_kernel_generator), object)


@pytest.mark.parametrize(
    ("brainevent_name", "jaxcc_class"),
    [
        ("KernelError", jaxcc.errors.KernelError),
        ("KernelCompilationError", jaxcc.CompileError),
        ("KernelRegistrationError", jaxcc.RegistrationError),
        ("KernelLoadError", jaxcc.LoadError),
        ("KernelFallbackExhaustedError", jaxcc.BackendError),
    ],
)
def test_exception_names_are_the_matching_jaxcc_classes(brainevent_name, jaxcc_class):
    alias = getattr(brainevent, brainevent_name)
    assert alias is jaxcc_class
    assert issubclass(alias, jaxcc.JaxccError)
    assert brainevent_name in jaxcc.__all__


def test_fallback_exhausted_is_raised_where_brainevent_raises_it():
    kernel = brainevent.XLACustomKernel(unique("gpu_only"))
    kernel.def_triton_kernel(pallas_kernel_generator)
    x = jnp.ones(4, jnp.float32)
    with pytest.raises(brainevent.KernelFallbackExhaustedError, match="platform 'cpu'"):
        kernel(x, outs=jax.ShapeDtypeStruct((4,), jnp.float32))
    with pytest.raises(brainevent.KernelFallbackExhaustedError, match="unknown backend"):
        kernel(x, outs=jax.ShapeDtypeStruct((4,), jnp.float32), backend="nope")


def test_a_failing_generator_is_a_kernel_error_naming_the_alternatives():
    kernel = brainevent.XLACustomKernel(unique("broken"))
    kernel.def_kernel("broken", "cpu", lambda **p: 1 / 0)
    kernel.def_numba_kernel(numba_kernel_generator)
    with pytest.raises(brainevent.KernelError, match="Other backends for cpu: numba"):
        kernel(jnp.ones(4, jnp.float32), outs=jax.ShapeDtypeStruct((4,), jnp.float32))


def test_a_backend_failing_while_traced_is_brainevents_kernel_compilation_error():
    # brainevent 0.3 raises KernelCompilationError when a backend's generator or its kernel
    # raises while the call is traced, and its operators' tests catch it by that name (e.g. the
    # numba backend of _csr's delay refusing float16): jaxcc's KernelLoweringError is both that
    # (CompileError) and a KernelError as before (decision 120).
    def refuses(**params):
        raise TypeError("float32/float64 rings only")

    def kernel_raises(**params):
        def kernel(x):
            raise ValueError("no tiles for this shape")

        return kernel

    for name, generator, message in (
        ("refuses", refuses, "float32/float64"),
        ("kernel_raises", kernel_raises, "no tiles"),
        ("not_callable", lambda **params: 3, "returned int, not a callable"),
    ):
        kernel = brainevent.XLACustomKernel(unique(name))
        kernel.def_kernel("numba", "cpu", generator)
        with pytest.raises(brainevent.KernelCompilationError, match=message) as info:
            kernel(jnp.ones(4, jnp.float32), outs=jax.ShapeDtypeStruct((4,), jnp.float32))
        assert isinstance(info.value, jaxcc.KernelLoweringError)
        assert isinstance(info.value, jaxcc.KernelError)  # what jaxcc raised there before
