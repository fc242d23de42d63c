"""A module defining one benchmarkable primitive, imported by `jaxcc benchmark --module`."""

import jax
import jax.numpy as jnp
from ck_helpers import call, make_mul

import jaxcc

cli_mul = make_mul("cli_mul")
cli_mul.def_tags("cli-test", "elementwise")
cli_mul.def_call(lambda x, y, backend=None: call(cli_mul, x, y, backend=backend))
cli_mul.def_benchmark_data(
    lambda *, platform: [
        jaxcc.BenchmarkConfig(
            f"n={n}",
            (jnp.ones(n, jnp.float32), jnp.full(n, 2.0, jnp.float32)),
            data_kwargs={"n": n},
        )
        for n in (16, 256)
    ]
)
_ = jax  # the module is imported for its side effect: registering cli_mul
