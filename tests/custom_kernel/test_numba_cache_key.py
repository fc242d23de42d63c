"""The Numba cache key covers what the compile depended on (issue 37, item 3; decision 148):
each case of issue 37's point 5 edits one input between two processes sharing a cache, and the
second process's result must equal a fresh Numba compile's in that process."""

import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import jax
import jax.numpy as jnp
import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba_key_cases import CASES, FEATURES, drawn_files, edit_between_processes

import jaxcc
from jaxcc.custom_kernel.bridges import numba_cpu_cache


@pytest.mark.parametrize("case", sorted(set(CASES) - {"parallel_kernel_reloaded"}))
def test_an_edit_between_processes_is_never_served_stale(tmp_path, case):
    before, after = CASES[case]
    first, second = edit_between_processes(tmp_path, before, after)
    assert first["jaxcc"] == first["numba"]
    assert second["jaxcc"] == second["numba"], f"{case}: the second process ran stale code"


def test_locals_are_part_of_the_key_within_one_process(fresh_cache):
    # Same bytecode, other `locals=`: other machine code. Keyed without them, the second kernel
    # was served the first's code from the process's own table, with an empty cache.
    def body(x, out):
        for i in range(out.size):
            acc = x[i] * 2
            out[i] = acc

    as_int = numba.njit(locals={"acc": numba.int32})(body)
    as_float = numba.njit(locals={"acc": numba.float32})(body)
    x = np.arange(4, dtype=np.float32) + np.float32(0.25)
    spec = jax.ShapeDtypeStruct((4,), jnp.float32)
    with jax.default_device(jax.devices("cpu")[0]):
        got_int = np.asarray(jaxcc.numba_kernel(as_int, spec)(jnp.asarray(x)))
        got_float = np.asarray(jaxcc.numba_kernel(as_float, spec)(jnp.asarray(x)))
    np.testing.assert_array_equal(got_int, [0, 2, 4, 6])
    np.testing.assert_array_equal(got_float, x * 2)


def test_a_parallel_kernel_is_taken_from_the_cache_and_runs(tmp_path):
    # Numba's parfors code calls its threading layer through symbols its reload hook defines:
    # loaded without running it, the second process died of SIGSEGV.
    before, after = CASES["parallel_kernel_reloaded"]  # the same files: a reload
    first, second = edit_between_processes(tmp_path, before, after)
    assert first["compiled"] == 1 and second["compiled"] == 0  # the second one loaded it
    assert second["jaxcc"] == second["numba"] == [0.5, 2.5, 4.5, 6.5]


def test_an_unknown_reload_hook_is_never_kept_nor_loaded(fresh_cache):
    class Result:
        reload_init = [print]

    with pytest.raises(numba_cpu_cache.Unkeyable, match="reload hook"):
        numba_cpu_cache.reload_hook_names(Result())
    inputs = numba_cpu_cache.key_inputs("entry", ("t",))
    name = "numba_kernel_hooked"
    numba_cpu_cache.store(str(fresh_cache), name, inputs, b"code", "sym", 0.1, ["os.abort"])
    assert numba_cpu_cache.load(str(fresh_cache), name, inputs) is None  # refused, removed
    numba_cpu_cache.store(str(fresh_cache), name, inputs, b"code", "sym", 0.1, [])
    assert numba_cpu_cache.load(str(fresh_cache), name, inputs) == (b"code", "sym", [])


BIG = np.zeros(300_000, np.float32)  # frozen into the code by Numba; too large to key


def test_cache_ls_says_why_a_kernel_is_compiled_in_each_process(fresh_cache):
    @numba.njit
    def reads_an_object(x, out):
        for i in range(out.size):
            out[i] = x[i] + BIG[i]

    x = jnp.arange(4, dtype=jnp.float32)
    with jax.default_device(jax.devices("cpu")[0]):
        jaxcc.numba_kernel(reads_an_object, jax.ShapeDtypeStruct((4,), jnp.float32))(x)
    env = dict(os.environ, JAXCC_CACHE_DIR=str(fresh_cache))
    listing = subprocess.run(
        [sys.executable, "-m", "jaxcc", "cache", "ls"], capture_output=True, text=True, env=env,
        check=True,
    ).stdout  # fmt: skip
    assert "numba_kernel_reads_an_object" in listing
    assert "not fingerprinted: `BIG` read by " in listing
    assert "is an array over 1048576 bytes or of objects" in listing
    as_json = subprocess.run(
        [sys.executable, "-m", "jaxcc", "cache", "ls", "--json"], capture_output=True,
        text=True, env=env, check=True,
    ).stdout  # fmt: skip
    (note,) = json.loads(as_json)["not_persisted"]
    assert note["function"].endswith("reads_an_object") and "`BIG`" in note["reason"]
    from jaxcc.custom_kernel.bridges import numba_cpu_cache_notes

    jaxcc.clear_cache()
    assert not numba_cpu_cache_notes.notes(str(fresh_cache))  # cleared with the entries


def key(kernel):
    return numba_cpu_cache.key_of(numba_cpu_cache.key_inputs("kernel", ("a",), kernel))


def test_a_module_in_a_closure_is_keyed_through_its_attributes(tmp_path):
    module = types.ModuleType("user_config")
    module.sub = types.ModuleType("user_config.sub")
    module.sub.CONST = 1.0

    def make():
        config = module

        @numba.njit
        def reads(x, out):
            out[0] = config.sub.CONST

        return reads

    before = key(make())
    module.sub.CONST = 2.0
    assert key(make()) != before


def test_an_intrinsic_is_keyed_by_its_definition():
    from numba.extending import intrinsic

    def make(constant):
        @intrinsic
        def answer(typingctx):
            def codegen(context, builder, signature, args):
                return context.get_constant(numba.types.float64, constant)

            return numba.types.float64(), codegen

        @numba.njit
        def reads(x, out):
            out[0] = answer()

        return reads

    # Made first: each @intrinsic registers a typing template, part of every key (the next test).
    one, two, one_again = make(1.0), make(2.0), make(1.0)
    assert key(one) != key(two)
    assert key(one) == key(one_again)
    # An equal intrinsic made again (a factory per configuration) leaves every key as it was.
    make(2.0)
    assert key(one) == key(one_again)


def test_a_user_extension_anywhere_is_part_of_every_key():
    from numba.extending import overload

    from jaxcc.custom_kernel.bridges import numba_cpu_extensions

    @numba.njit
    def plain(x, out):
        out[0] = x[0]

    before = key(plain)

    def unrelated(v):
        raise NotImplementedError

    @overload(unrelated)
    def _unrelated_impl(v):
        return lambda v: v + 1

    # An overload is reached by the types Numba meets, not only by the names the code reads.
    assert key(plain) != before
    assert (
        numba_cpu_extensions.extensions_fingerprint()
        == numba_cpu_extensions.extensions_fingerprint()
    )


@pytest.mark.slow
@settings(max_examples=3, deadline=None, database=None)
@given(
    used=st.sets(st.sampled_from(sorted(FEATURES)), min_size=1),
    edit_seed=st.integers(0, 2**16),
)
def test_drawn_kernels_and_edits_match_a_fresh_numba_compile(used, edit_seed):
    # A drawn kernel reads the drawn inputs; a drawn non-empty subset of them is edited between
    # two processes that share one cache. The second's result equals Numba's fresh compile.
    import random

    chosen = sorted(used)
    edited = random.Random(edit_seed).sample(chosen, k=1 + edit_seed % len(chosen))
    with tempfile.TemporaryDirectory() as directory:
        first, second = edit_between_processes(
            Path(directory), drawn_files(used, {}), drawn_files(used, dict.fromkeys(edited, 1))
        )
    assert first["jaxcc"] == first["numba"]
    assert second["jaxcc"] == second["numba"], f"stale after editing {edited} of {chosen}"
