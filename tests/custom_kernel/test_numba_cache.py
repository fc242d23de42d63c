"""The Numba CPU bridge's first call (decisions 91, 92): one shared entry per buffer types, a
kernel's code compiled once per process for equal code, and kept in jaxcc's cache for the next
process (keyed by code, closure values, globals and types; damaged entries rebuilt; listed by
`jaxcc cache ls`)."""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numba
import numpy as np
import pytest
from ck_helpers import X8, make_scaled, run_numba

import jaxcc
from jaxcc.custom_kernel.bridges import numba_cpu, numba_cpu_cache


@pytest.fixture(autouse=True)
def on_the_cpu():
    with jax.default_device(jax.devices("cpu")[0]):
        yield


def test_closure_values_are_part_of_the_key():
    # Same bytecode, other closure value: other code. A key without the closure would reuse the
    # first kernel's machine code and return x * 3 + 1 for both.
    np.testing.assert_allclose(run_numba(make_scaled(3.0), X8), np.arange(8) * 3 + 1)
    np.testing.assert_allclose(run_numba(make_scaled(5.0), X8), np.arange(8) * 5 + 1)


def make_returning(scale):
    @numba.njit
    def returns_first(x, out):
        for i in range(out.size):
            out[i] = x[i] * scale
        return out[0]  # a value: the trampoline cannot call this one directly

    return returns_first


def test_direct_calls_and_the_shared_entry():
    x = jnp.arange(5, dtype=jnp.float32)
    fn, impl = numba_cpu.entry_address(make_scaled(11.0), [x], [x])
    assert fn == 0 and impl != 0  # returns nothing, few fields: called directly
    a, b = make_returning(2.0), make_returning(3.0)
    fn_a, impl_a = numba_cpu.entry_address(a, [x], [x])
    fn_b, impl_b = numba_cpu.entry_address(b, [x], [x])
    assert fn_a == fn_b != 0 and impl_a != impl_b  # one entry for both kernels' types
    np.testing.assert_allclose(run_numba(b, x), np.arange(5) * 3)


@numba.njit
def sum_of_many(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, out):
    # 15 rank-1 arrays: 105 fields, more than a direct call passes: through the shared entry.
    for i in range(out.size):
        out[i] = a0[i] + a1[i] + a2[i] + a3[i] + a4[i] + a5[i] + a6[i] + a7[i] + a8[i] + a9[i]
        out[i] += a10[i] + a11[i] + a12[i] + a13[i]


def test_many_buffers_go_through_the_entry():
    ins = [jnp.full(3, float(k), jnp.float32) for k in range(14)]
    fn, _ = numba_cpu.entry_address(sum_of_many, ins, [ins[0]])
    assert fn != 0
    out = jaxcc.numba_kernel(sum_of_many, jax.ShapeDtypeStruct((3,), jnp.float32))(*ins)
    np.testing.assert_allclose(out, np.full(3, sum(range(14))))


@numba.njit
def all_kinds(b, i8, u16, f64, c64, f32_2d, out_b, out_c, out_f):
    # Every buffer kind the entry builds arrays for: bool, integers, floats, complex, rank 2.
    out_b[0] = b[0] and i8[0] < 0
    out_c[0] = c64[0] * 2
    out_f[0] = f32_2d[1, 2] + u16[0] + f64[0]


def test_entry_builds_every_dtype_and_rank():
    ins = [
        jnp.asarray([True]), jnp.asarray([-3], jnp.int8), jnp.asarray([7], jnp.uint16),
        jnp.asarray([0.5], jnp.float32), jnp.asarray([1 + 2j], jnp.complex64),
        jnp.arange(12, dtype=jnp.float32).reshape(3, 4),
    ]  # fmt: skip
    outs = [
        jax.ShapeDtypeStruct((1,), jnp.bool_), jax.ShapeDtypeStruct((1,), jnp.complex64),
        jax.ShapeDtypeStruct((1,), jnp.float32),
    ]  # fmt: skip
    out_b, out_c, out_f = jaxcc.numba_kernel(all_kinds, outs)(*ins)
    assert bool(out_b[0]) is True
    assert complex(out_c[0]) == 2 + 4j
    assert float(out_f[0]) == 6 + 7 + 0.5


KERNEL_MODULE = """
import sys
import numba.core.compiler as compiler
compiled = []
_compile_extra = compiler.compile_extra
def counting(typingctx, targetctx, func, *args, **kwargs):
    compiled.append(func.__name__)
    return _compile_extra(typingctx, targetctx, func, *args, **kwargs)
compiler.compile_extra = counting
import jax, jax.numpy as jnp, numba, numpy as np
import jaxcc

OFFSET = float(sys.argv[1])

@numba.njit
def shift(x, out):
    for i in range(out.size):
        out[i] = x[i] + OFFSET

x = jnp.arange(4, dtype=jnp.float32)
y = jax.jit(jaxcc.numba_kernel(shift, jax.ShapeDtypeStruct(x.shape, x.dtype)))(x)
print("RESULT", np.asarray(y).tolist(), "COMPILED", compiled.count("shift"))
"""


def run_process(script: Path, offset: str, cache: Path) -> tuple[list, int]:
    env = dict(os.environ, JAXCC_CACHE_DIR=str(cache), JAX_PLATFORMS="cpu")
    out = subprocess.run(
        [sys.executable, str(script), offset], capture_output=True, text=True, env=env,
        timeout=300, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if line.startswith("RESULT"))
    values, compiled = line[len("RESULT ") :].split(" COMPILED ")
    return json.loads(values), int(compiled)


def numba_entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.iterdir() if p.name.startswith("numba_"))


def test_a_second_process_takes_the_compiled_code_from_the_cache(tmp_path):
    script, cache = tmp_path / "kernel.py", tmp_path / "cache"
    script.write_text(KERNEL_MODULE)
    assert run_process(script, "1", cache) == ([1.0, 2.0, 3.0, 4.0], 1)  # compiled by Numba
    names = {p.name.split("-")[0] for p in numba_entries(cache)}
    assert names == {"numba_kernel_shift"}  # called directly: no entry needed
    assert run_process(script, "1", cache) == ([1.0, 2.0, 3.0, 4.0], 0)  # nothing compiled
    # A global the kernel reads is part of the key: another value is another entry.
    assert run_process(script, "10", cache) == ([10.0, 11.0, 12.0, 13.0], 1)
    listing = subprocess.run(
        [sys.executable, "-m", "jaxcc", "cache", "ls", "--json"], capture_output=True, text=True,
        env=dict(os.environ, JAXCC_CACHE_DIR=str(cache)), check=True,
    )  # fmt: skip
    listed = [e["name"] for e in json.loads(listing.stdout)["entries"]]
    assert listed.count("numba_kernel_shift") == 2


WAIT_FOR_THE_WRITER = """
import os, time
from jaxcc.custom_kernel.bridges import numba_cpu_cache_writer
cache = os.environ["JAXCC_CACHE_DIR"]
deadline = time.monotonic() + float(os.environ.get("WAIT_SECONDS", "0"))
def manifests():
    return [d for d in os.listdir(cache) if d.startswith("numba_kernel_shift")
            and os.path.exists(os.path.join(cache, d, "manifest.json"))]
while not manifests() and time.monotonic() < deadline:
    time.sleep(0.01)
print("WRITTEN_BEFORE_EXIT", len(manifests()), "QUEUED", len(numba_cpu_cache_writer._pending))
"""
ONE_AT_A_TIME = "from jaxcc.custom_kernel.bridges import numba_cpu_cache_writer as w\nw.BATCH = 1\n"


@pytest.mark.parametrize(
    ("prefix", "wait", "expected"),
    [
        (ONE_AT_A_TIME, "60", "WRITTEN_BEFORE_EXIT 1 QUEUED 0"),  # the thread wrote it
        ("", "2", "WRITTEN_BEFORE_EXIT 0 QUEUED 1"),
    ],  # one kernel: left for the exit  # fmt: skip
)
def test_entries_are_written_by_a_background_thread_or_at_exit(tmp_path, prefix, wait, expected):
    """decision 117: stores do not wait for the end of a process that makes many kernels (a
    test suite), where their code generation would add to its wall time: once BATCH wait, a
    thread writes them meanwhile. A process that made fewer writes them at its exit, so none of
    its first calls waits behind a store. Either way the next process loads the entry."""
    script, cache = tmp_path / "kernel.py", tmp_path / "cache"
    script.write_text(prefix + KERNEL_MODULE + WAIT_FOR_THE_WRITER)
    env = dict(os.environ, JAXCC_CACHE_DIR=str(cache), JAX_PLATFORMS="cpu", WAIT_SECONDS=wait)
    out = subprocess.run([sys.executable, str(script), "2"], capture_output=True, text=True,
                         env=env, timeout=300, check=False)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout, out.stdout
    assert len(numba_entries(cache)) == 1  # written by the end of the process
    assert run_process(script, "2", cache) == ([2.0, 3.0, 4.0, 5.0], 0)


def test_a_damaged_entry_is_detected_and_rebuilt(tmp_path):
    script, cache = tmp_path / "kernel.py", tmp_path / "cache"
    script.write_text(KERNEL_MODULE)
    run_process(script, "2", cache)
    (entry,) = [p for p in numba_entries(cache) if p.name.startswith("numba_kernel_shift")]
    (code,) = entry.glob("*.numba")
    data = bytearray(code.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte in the machine code
    code.write_bytes(bytes(data))
    assert run_process(script, "2", cache) == ([2.0, 3.0, 4.0, 5.0], 1)  # compiled again
    (rebuilt,) = entry.glob("*.numba")
    manifest = json.loads((entry / "manifest.json").read_text())
    assert (
        numba_cpu_cache.hashlib.sha256(rebuilt.read_bytes()).hexdigest()
        == (manifest["library_sha256"])
    )
    assert run_process(script, "2", cache) == ([2.0, 3.0, 4.0, 5.0], 0)


# 15 rank-1 arrays (105 fields, more than a direct call passes): the kernel is called through the
# shared entry (decision 91), which is a jaxcc cache entry of its own (decision 92). Every Numba
# compile of the process is counted where both kinds go through: numba.core.compiler.compile_extra
# (a kernel's overload and the entry's cfunc).
ENTRY_MODULE = """
import sys
import numba.core.compiler as compiler
compiles = []
_compile_extra = compiler.compile_extra
def counting(typingctx, targetctx, func, *args, **kwargs):
    compiles.append(func.__name__)
    return _compile_extra(typingctx, targetctx, func, *args, **kwargs)
compiler.compile_extra = counting
import jax, jax.numpy as jnp, numba, numpy as np
import jaxcc
from jaxcc.custom_kernel.bridges import numba_cpu

@numba.njit
def sum15(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, out):
    for i in range(out.size):
        out[i] = a0[i] + a1[i] + a2[i] + a3[i] + a4[i] + a5[i] + a6[i] + a7[i] + a8[i] + a9[i]
        out[i] += a10[i] + a11[i] + a12[i] + a13[i]

ins = [jnp.full(3, float(k), jnp.float32) for k in range(14)]
fn, _ = numba_cpu.entry_address(sum15, ins, [ins[0]])
assert fn != 0, "not through the shared entry"
y = jax.jit(jaxcc.numba_kernel(sum15, jax.ShapeDtypeStruct((3,), jnp.float32)))(*ins)
print("RESULT", np.asarray(y).tolist(), "COMPILED", ",".join(compiles) or "-")
"""


def run_entry_process(script: Path, cache: Path) -> tuple[list, list[str]]:
    env = dict(os.environ, JAXCC_CACHE_DIR=str(cache), JAX_PLATFORMS="cpu")
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300,
        check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if line.startswith("RESULT"))
    values, compiled = line[len("RESULT ") :].split(" COMPILED ")
    return json.loads(values), [] if compiled == "-" else compiled.split(",")


def test_the_shared_entry_persists_across_processes_and_a_damaged_one_is_rebuilt(tmp_path):
    script, cache = tmp_path / "entry.py", tmp_path / "cache"
    script.write_text(ENTRY_MODULE)
    total = [float(sum(range(14)))] * 3
    values, compiled = run_entry_process(script, cache)
    assert values == total and "sum15" in compiled and len(compiled) >= 2  # kernel and entry
    (entry,) = [p for p in numba_entries(cache) if p.name.startswith("numba_entry-")]
    # A second real process reaches the same result without any Numba compile: the kernel's
    # code and the shared entry both come from jaxcc's cache.
    assert run_entry_process(script, cache) == (total, [])
    (code,) = entry.glob("*.numba")
    data = bytearray(code.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte in the entry's machine code
    code.write_bytes(bytes(data))
    values, compiled = run_entry_process(script, cache)
    assert values == total and compiled and "sum15" not in compiled  # only the entry again
    (rebuilt,) = entry.glob("*.numba")
    manifest = json.loads((entry / "manifest.json").read_text())
    assert hashlib.sha256(rebuilt.read_bytes()).hexdigest() == manifest["library_sha256"]
    assert run_entry_process(script, cache) == (total, [])


def test_cache_prune_and_clear_see_numba_entries(tmp_path):
    script, cache = tmp_path / "kernel.py", tmp_path / "cache"
    script.write_text(KERNEL_MODULE)
    run_process(script, "3", cache)
    assert numba_entries(cache)
    env = dict(os.environ, JAXCC_CACHE_DIR=str(cache))
    subprocess.run(
        [sys.executable, "-m", "jaxcc", "cache", "prune", "--max-bytes", "1"], env=env,
        check=True, capture_output=True,
    )  # fmt: skip
    assert not numba_entries(cache)


class Opaque:
    pass


OPAQUE = Opaque()


@numba.njit
def reads_nothing_keyable(x, out):
    for i in range(out.size):
        out[i] = x[i]


def test_unkeyable_globals_are_compiled_but_never_cached(fresh_cache):
    @numba.njit
    def uses_object(x, out):  # names OPAQUE: a value whose effect cannot be keyed
        if OPAQUE is None:
            out[0] = 0
        for i in range(out.size):
            out[i] = x[i]

    with pytest.raises(numba_cpu_cache.Unkeyable):
        numba_cpu_cache.key_inputs("kernel", (), uses_object)
    assert numba_cpu_cache.key_inputs("kernel", (), reads_nothing_keyable)["kernel"]


def test_the_key_follows_code_options_and_types():
    base = numba_cpu_cache.key_inputs("kernel", ("a",), make_scaled(1.0))

    def key(kernel, types=("a",)):
        return numba_cpu_cache.key_of(numba_cpu_cache.key_inputs("kernel", types, kernel))

    assert key(make_scaled(1.0)) == numba_cpu_cache.key_of(base)
    assert key(make_scaled(2.0)) != numba_cpu_cache.key_of(base)
    assert key(make_scaled(1.0), ("b",)) != numba_cpu_cache.key_of(base)
    fast = numba.njit(fastmath=True)(make_scaled(1.0).py_func)
    assert key(fast) != numba_cpu_cache.key_of(base)
    assert set(base["environment"]) >= {"numba", "llvmlite", "jaxcc", "cpu", "cpu_features"}


def test_set_options_are_keyed_the_same_in_every_process(tmp_path):
    # A set's repr depends on string hashing, which differs per process (PYTHONHASHSEED).
    code = textwrap.dedent("""
        import numba
        from jaxcc.custom_kernel.bridges import numba_cpu_cache as c
        k = numba.njit(fastmath={"nsz", "arcp", "contract", "afn", "reassoc"})(lambda x: None)
        print(c._options(k))
    """)
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env=dict(os.environ, PYTHONHASHSEED=str(seed)),
            capture_output=True,
            text=True,
            check=True,
        ).stdout  # fmt: skip
        for seed in (1, 2, 3)
    }
    assert len(outs) == 1


def test_batching_rules_accept_the_xlacustomkernel_itself():
    # brainevent's operators hand their XLACustomKernel object (not its JAX primitive) to
    # general_batching_rule inside their own vmap rules.
    from jaxcc.custom_kernel.batching import general_batching_rule

    kernel = make_scaled(2.0)
    op = jaxcc.XLACustomKernel("batching_takes_the_kernel")
    op.def_numba_kernel(lambda outs, **kw: jaxcc.numba_kernel(kernel, outs))
    op.def_batching_rule(lambda args, axes, **kw: general_batching_rule(op, args, axes, **kw))
    xs = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    ys = jax.vmap(lambda v: op(v, outs=jax.ShapeDtypeStruct(v.shape, v.dtype)))(xs)
    ys = ys[0] if isinstance(ys, (list, tuple)) else ys
    np.testing.assert_allclose(ys, np.arange(12).reshape(3, 4) * 2 + 1)
