"""What a Numba cache entry holds (decision 128): the kernel's own code under a name made from
its key, everything else internal, and nothing the kernel does not reach."""

import json

import jax
import jax.numpy as jnp
import numba
import pytest
from llvmlite import binding

import jaxcc
from jaxcc.custom_kernel.bridges import numba_cpu_cache, numba_cpu_cache_writer


def test_an_entry_defines_only_the_kernel_under_its_key(fresh_cache):
    """The stored module keeps the kernel and what it calls, internal, and drops Numba's CPython
    and cfunc wrappers: their code generation was half of what a store cost."""

    @numba.njit
    def double(x, out):
        for i in range(out.size):
            out[i] = 2 * x[i]

    x = jnp.arange(3, dtype=jnp.float32)
    with jax.default_device(jax.devices("cpu")[0]):
        jax.jit(jaxcc.numba_kernel(double, jax.ShapeDtypeStruct(x.shape, x.dtype)))(x)
    numba_cpu_cache_writer.flush()
    (entry,) = [p for p in fresh_cache.iterdir() if p.name.startswith("numba_kernel_double")]
    manifest = json.loads((entry / "manifest.json").read_text())
    (symbol,) = manifest["function_names"]
    assert symbol == "jaxcc_numba_" + manifest["key"][:32]
    _, bitcode = numba_cpu_cache.split((entry / manifest["library_file"]).read_bytes())
    module = binding.parse_bitcode(bitcode)
    external = [
        v.name
        for v in (*module.functions, *module.global_variables)
        if not v.is_declaration and v.linkage != binding.Linkage.internal
    ]
    assert external == [symbol]
    if not hasattr(binding, "create_new_module_pass_manager"):
        pytest.skip("this llvmlite keeps unreachable internal code (no new pass manager)")
    defined = [f.name for f in module.functions if not f.is_declaration]
    assert not any(name.startswith(("_ZN7cpython", "cfunc.")) for name in defined), defined
