"""Bad input to XLACustomKernel: each a typed jaxcc error that says what to do."""

import jax
import jax.numpy as jnp
import pytest
from ck_helpers import call, make_mul, unique

import jaxcc

X = jnp.ones(4, jnp.float32)
OUT = jax.ShapeDtypeStruct((4,), jnp.float32)


def test_unknown_backend_names_the_registered_ones():
    kernel = make_mul()
    with pytest.raises(jaxcc.BackendError, match=r"unknown backend 'cuda'.*cpp.*numba"):
        call(kernel, X, X, backend="cuda")


def test_backend_not_registered_on_the_running_platform():
    kernel = make_mul()
    kernel.def_kernel("gpu_only", "gpu", lambda **p: lambda x, y: x)
    with pytest.raises(jaxcc.BackendError, match="not registered for cpu; registered: cpp, numba"):
        call(kernel, X, X, backend="gpu_only")


def test_platform_without_kernels():
    kernel = jaxcc.XLACustomKernel(unique("gpu_only"))
    kernel.def_kernel("triton", "gpu", lambda **p: lambda x: x)
    with pytest.raises(
        jaxcc.BackendError, match=r"no kernel is registered for platform 'cpu'.*gpu"
    ):
        kernel(X, outs=OUT)
    with pytest.raises(jaxcc.BackendError, match="no kernel is registered for platform 'cpu'"):
        jax.jit(lambda x: kernel(x, outs=OUT))(X)


def test_no_kernels_at_all():
    with pytest.raises(jaxcc.BackendError, match="def_kernel"):
        jaxcc.XLACustomKernel(unique("empty"))(X, outs=OUT)


def test_outs_that_do_not_match_the_kernel():
    # The 'offset' backend computes its own output shape, so a wrong `outs` shows.
    kernel = make_mul(offset_backend=True)
    wrong = jax.ShapeDtypeStruct((5,), jnp.float32)
    with pytest.raises(jaxcc.CallError, match=r"returned \[\(4,\):float32\] but outs declares"):
        kernel(X, X, outs=wrong, backend="offset")
    with pytest.raises(jaxcc.CallError, match="float16"):
        kernel(X, X, outs=jax.ShapeDtypeStruct((4,), jnp.float16), backend="offset")
    two = [OUT, OUT]
    with pytest.raises(jaxcc.CallError):
        kernel(X, X, outs=two)
    with pytest.raises(jaxcc.CallError, match="shape and .dtype"):
        kernel(X, X, outs=[42])
    with pytest.raises(jaxcc.CallError, match="at least one output"):
        kernel(X, X, outs=[])


def test_unhashable_params():
    kernel = make_mul()
    with pytest.raises(jaxcc.CallError, match=r"unhashable \(list\).*tuple"):
        call(kernel, X, X, sizes=[1, 2])
    with pytest.raises(jaxcc.CallError, match="reserved"):
        call(kernel, X, X, jaxcc_batch=3)


def test_failing_kernel_names_the_alternatives():
    kernel = jaxcc.XLACustomKernel(unique("flaky"))

    def broken(**params):
        raise RuntimeError("no such device feature")

    kernel.def_kernel("broken", "cpu", broken)
    kernel.def_kernel("plain", "cpu", lambda **p: lambda x: x)
    with pytest.raises(jaxcc.KernelError) as info:
        kernel(X, outs=OUT)
    message = str(info.value)
    assert "no such device feature" in message
    assert "Other backends for cpu: plain" in message
    assert "backend='plain'" in message and "set_default('cpu', 'plain')" in message
    assert isinstance(info.value.__cause__, RuntimeError)
    kernel.set_default("cpu", "plain")
    assert kernel(X, outs=OUT).shape == (4,)


def test_registration_errors():
    kernel = jaxcc.XLACustomKernel(unique("reg"))
    with pytest.raises(jaxcc.SpecError, match="platform must be one of"):
        kernel.def_kernel("numba", "fpga", lambda **p: None)
    with pytest.raises(jaxcc.SpecError, match="must be callable"):
        kernel.def_kernel("numba", "cpu", "not a function")
    with pytest.raises(jaxcc.SpecError, match="non-empty string"):
        kernel.def_kernel("", "cpu", lambda **p: None)
    with pytest.raises(jaxcc.SpecError, match="def_kernel\\('pallas', 'cpu', kg\\)"):
        kernel.def_pallas_kernel("cpu", lambda **p: None)
    with pytest.raises(jaxcc.BackendError, match="no kernels are registered for platform 'cpu'"):
        kernel.set_default("cpu", "numba")
    kernel.def_numba_kernel(lambda **p: None)
    with pytest.raises(jaxcc.BackendError, match="registered: numba"):
        kernel.set_default("cpu", "warp")
    with pytest.raises(jaxcc.SpecError):
        jaxcc.XLACustomKernel("")


def test_wrong_types_are_type_errors_and_wrong_values_value_errors():
    kernel = jaxcc.XLACustomKernel(unique("types"))
    generator = lambda **p: lambda x: x  # noqa: E731
    wrong_types = [
        lambda: kernel.def_kernel(3, "cpu", generator),
        lambda: kernel.def_kernel("numba", None, generator),
        lambda: kernel.def_kernel("numba", "cpu", "not a function"),
        lambda: kernel.def_kernel("numba", "cpu", generator, asdefault="yes"),
        lambda: kernel.def_kernel("numba", "cpu", generator, vectorized=None),
        lambda: kernel.def_numba_kernel(None),
        lambda: kernel.def_pallas_kernel(generator, generator),  # kg where the platform goes
        lambda: kernel.def_cuda_raw_kernel(generator, False, "extra"),
        lambda: kernel.def_call(42),
        lambda: kernel.def_benchmark_data("data"),
        lambda: kernel.def_tags("csr", 3),
        lambda: kernel.def_jvp_rule(1),
        lambda: kernel.def_transpose_rule(1),
        lambda: kernel.def_batching_rule(1),
        lambda: jaxcc.XLACustomKernel(7),
    ]
    for make in wrong_types:
        with pytest.raises(TypeError) as info:
            make()
        assert isinstance(info.value, jaxcc.SpecTypeError)  # and a SpecError, as before
        assert isinstance(info.value, jaxcc.SpecError) and isinstance(info.value, jaxcc.JaxccError)
    wrong_values = [
        lambda: kernel.def_kernel("", "cpu", generator),
        lambda: kernel.def_kernel("numba", "fpga", generator),
        lambda: kernel.def_pallas_kernel("cpu", generator),
        lambda: kernel.def_cuda_raw_kernel("tpu", generator),
        lambda: kernel.def_tags("csr", ""),
        lambda: jaxcc.XLACustomKernel(""),
    ]
    for make in wrong_values:
        with pytest.raises(ValueError) as info:
            make()
        assert not isinstance(info.value, TypeError), info.value
        assert isinstance(info.value, jaxcc.JaxccError)
    assert kernel.available_backends("cpu") == []  # nothing half-registered
    kernel.def_kernel("numba", "cpu", generator, asdefault=True, vectorized=True)
    assert kernel.get_default("cpu") == "numba"


def test_missing_call_and_data_functions():
    kernel = make_mul()
    with pytest.raises(jaxcc.SpecError, match="def_call"):
        kernel.call(X, X)
    with pytest.raises(jaxcc.BenchmarkDataFnNotProvidedError, match="def_benchmark_data"):
        kernel.benchmark(platform="cpu")
    kernel.def_benchmark_data(lambda *, platform: [])
    with pytest.raises(jaxcc.SpecError, match="def_call"):
        kernel.benchmark(platform="cpu")
    kernel.def_call(lambda x, y, backend=None: call(kernel, x, y, backend=backend))
    with pytest.raises(jaxcc.BackendError, match="no backends are registered for platform 'gpu'"):
        kernel.benchmark(platform="gpu")
    with pytest.raises(jaxcc.BackendError, match="not registered for cpu"):
        kernel.benchmark(platform="cpu", backends=["warp"])
    with pytest.raises(jaxcc.SpecError, match="n_runs"):
        kernel.benchmark(platform="cpu", n_runs=0)


def test_jvp_rule_arity_mismatch():
    kernel = make_mul()
    kernel.def_jvp_rule2(lambda t, x, y, **kw: t)  # one rule for two inputs
    with pytest.raises(jaxcc.CallError, match="one rule \\(or None\\) per input"):
        jax.jvp(lambda a: call(kernel, a, X), (X,), (X,))
