"""Kernels that use the whole machine (docs/usage.md, "Using the whole machine"): parallel_for on
XLA's intra-op pool, per-call-site state, asynchronous CPU kernels, and their bad input. One
module is built for the file; every kernel runs through real jit-compiled XLA calls."""

import gc
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_bundle import jaxcc_cli

import jaxcc

SOURCE = r"""
#include "brainevent/common.h"
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// Waits until `flag` holds `round`, up to `timeout_ms`; false on timeout (never hangs).
static bool WaitFor(const std::atomic<int64_t>& flag, int64_t round, int64_t timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (flag.load() != round) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

void scale(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ThreadPool& pool, int64_t grain) {
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  pool.parallel_for(0, x.numel(), grain, [&](int64_t i) { b[i] = 3.0f * a[i]; });
}

// The pool-less spelling: a helper finds the call's pool.
static void Square(const float* a, float* b, int64_t n, int64_t grain) {
  jaxcc::parallel_for(0, n, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) b[i] = a[i] * a[i];
  });
}
void square(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ThreadPool& pool) {
  Square(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(), 64);
}

// Two chunks that each wait for the other: finishes only when two threads run them at once.
// threads[0]: the pool's size; threads[1]: 1 when both chunks met.
void meet(const jaxcc::Tensor& x, jaxcc::Tensor& threads, jaxcc::ThreadPool& pool,
          int64_t round, int64_t timeout_ms) {
  static std::atomic<int64_t> arrived[2];
  threads.data_ptr<int32_t>()[0] = static_cast<int32_t>(pool.num_threads());
  std::atomic<int> met{0};
  pool.parallel_for(0, 2, 1, [&](int64_t i) {
    arrived[i].store(round);
    if (WaitFor(arrived[1 - i], round, timeout_ms)) met.fetch_add(1);
  });
  threads.data_ptr<int32_t>()[1] = met.load() == 2 ? 1 : 0;
}

// Chunk `bad` throws; every other chunk counts itself. The error must surface once.
void failing(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ThreadPool& pool, int64_t bad) {
  pool.parallel_for(0, x.numel(), 1, [&](int64_t i) {
    if (i == bad) JAXCC_CHECK(false) << "chunk " << i << " failed";
    y.data_ptr<float>()[i] = 1.0f;
  });
}

void bad_range(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ThreadPool& pool,
               int64_t begin, int64_t end, int64_t grain) {
  pool.parallel_for(begin, end, grain, [&](int64_t) {});
}

// Nested: the inner loop runs serially on the thread of its outer chunk.
void nested(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ThreadPool& pool) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  pool.parallel_for(0, rows, 1, [&](int64_t r) {
    auto outer = std::this_thread::get_id();
    pool.parallel_for(0, cols, 1, [&](int64_t c) {
      if (std::this_thread::get_id() != outer) throw std::runtime_error("nested fan-out");
      b[r * cols + c] = a[r * cols + c] + 1.0f;
    });
  });
}

// Per-call-site state: built from the attributes at XLA's instantiate stage.
struct Table {
  std::vector<float> values;
  static int64_t Checked(int64_t n) {
    if (n < 0) throw std::invalid_argument("table size " + std::to_string(n) + " is negative");
    return n;
  }
  explicit Table(int64_t n, float step) : values(Checked(n)) {
    for (int64_t i = 0; i < n; ++i) values[i] = step * i;
    ++Live();
    ++Built();
  }
  ~Table() { --Live(); }
  static std::atomic<int>& Live() { static std::atomic<int> n{0}; return n; }
  static std::atomic<int>& Built() { static std::atomic<int> n{0}; return n; }
};

// out = x + table[i % n]; counts[0] = live tables, counts[1] = tables built so far.
void lookup(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::Tensor& counts,
            jaxcc::State<Table>& table, int64_t n, float step) {
  for (int64_t i = 0; i < x.numel(); ++i) {
    y.data_ptr<float>()[i] = x.data_ptr<float>()[i] + table->values[i % n];
  }
  counts.data_ptr<int32_t>()[0] = Table::Live().load();
  counts.data_ptr<int32_t>()[1] = Table::Built().load();
}

// State that counts its calls under its lock (concurrent executions of one executable).
struct Counter { int64_t calls = 0; };
void count_calls(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::State<Counter>& counter) {
  auto lock = counter.lock();
  y.data_ptr<int64_t>()[0] = ++counter->calls;
}

// Two asynchronous kernels that meet: each marks its arrival and waits for the other's, so the
// pair finishes only when both run at once; a timeout turns a failure into an error, never a
// hang. (That the handler itself returns before its kernel ends is checked deterministically
// in src/kernel_api/ffi_frame_test.cc, with a frame whose Future the test completes.)
static std::atomic<int64_t> g_async_arrived[2];
static void Meet(int side, const jaxcc::Tensor& x, jaxcc::Tensor& y, int64_t round,
                 int64_t timeout_ms) {
  g_async_arrived[side].store(round);
  if (!WaitFor(g_async_arrived[1 - side], round, timeout_ms)) {
    throw std::runtime_error("blocked: the other kernel did not start within " +
                             std::to_string(timeout_ms) + " ms");
  }
  y.data_ptr<float>()[0] = x.data_ptr<float>()[0] + side;
}
void meet_a(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::Async, int64_t round,
            int64_t timeout_ms) { Meet(0, x, y, round, timeout_ms); }
void meet_b(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::Async, int64_t round,
            int64_t timeout_ms) { Meet(1, x, y, round, timeout_ms); }

// The brainevent spelling: BE::ThreadPool, BE::parallel_for (brainevent/common.h).
void be_add_one(const BE::Tensor& x, BE::Tensor& y, BE::ThreadPool& pool) {
  BE::parallel_for(0, x.numel(), 128, [&](int64_t i) {
    y.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1.0f;
  });
}

// A workspace sized by the caller: prefix sums through it (floats), written back reversed.
void reverse_cumsum(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::Scratch scratch) {
  const int64_t n = x.numel();
  JAXCC_CHECK(scratch.count<float>() >= static_cast<size_t>(n)) << "scratch too small: "
                                                               << scratch.bytes;
  float* tmp = scratch.as<float>();
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) tmp[i] = sum += x.data_ptr<float>()[i];
  for (int64_t i = 0; i < n; ++i) y.data_ptr<float>()[i] = tmp[n - 1 - i];
}

// Run-time scratch: the workspace's size is read from the data, known only while the call runs.
// y = [sum of 1..n through the workspace, 1 when aligned, blocks taken]; then one request of
// `extra_bytes` aligned to `align` (for the error paths; 0 asks for nothing).
void runtime_sum(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ScratchAllocator& alloc,
                 int64_t extra_bytes, int64_t align) {
  const int64_t n = static_cast<int64_t>(x.data_ptr<float>()[0]);
  float* tmp = alloc.allocate_array<float>(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) tmp[i] = static_cast<float>(i + 1);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += tmp[i];
  int64_t blocks = 1;
  for (int i = 0; i < 50; ++i, ++blocks) alloc.allocate(1024 * (i + 1), 128);  // freed at return
  y.data_ptr<float>()[0] = sum;
  y.data_ptr<float>()[1] = reinterpret_cast<uintptr_t>(tmp) % 64 == 0 ? 1.0f : 0.0f;
  y.data_ptr<float>()[2] = static_cast<float>(blocks);
  if (extra_bytes > 0) alloc.allocate(static_cast<size_t>(extra_bytes), static_cast<size_t>(align));
}

void async_fail(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::Async) {
  JAXCC_CHECK(x.numel() > 100) << "async input too small: " << x.numel();
  y.data_ptr<float>()[0] = 0;
}
"""

FUNCTIONS = [
    "scale",
    "square",
    "meet",
    "failing",
    "bad_range",
    "nested",
    "lookup",
    "count_calls",
    "meet_a",
    "meet_b",
    "async_fail",
    "be_add_one",
    "reverse_cumsum",
    "runtime_sum",
]


@pytest.fixture(scope="module")
def mod():
    return jaxcc.load_cpp_inline("whole_machine_t", SOURCE, functions=FUNCTIONS)


def f32(shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def i32(shape):
    return jax.ShapeDtypeStruct(shape, jnp.int32)


def test_spec_reads_pool_state_async_from_the_parameter_types(mod):
    assert [p.kind for p in mod.scale.spec.params] == ["arg", "ret", "pool", "attr"]
    assert [p.kind for p in mod.lookup.spec.params] == [
        "arg",
        "ret",
        "ret",
        "state",
        "attr",
        "attr",
    ]
    assert [p.kind for p in mod.meet_a.spec.params] == ["arg", "ret", "async", "attr", "attr"]
    assert mod.lookup.spec.has_state and not mod.scale.spec.has_state
    assert "pool" in mod.scale.signature()


@pytest.mark.parametrize("grain", [1, 7, 1000, 1 << 30])
def test_parallel_for_covers_every_index_once(mod, grain):
    x = jnp.arange(10007, dtype=jnp.float32)
    y = jax.jit(lambda x: mod.scale(x, grain=grain))(x)
    np.testing.assert_array_equal(np.asarray(y), 3 * np.asarray(x))
    np.testing.assert_array_equal(np.asarray(mod.square(x)), np.asarray(x) ** 2)


def test_parallel_for_runs_on_two_pool_threads_at_once(mod):
    # Deterministic: the two chunks wait for each other (bounded), so both ran concurrently
    # exactly when threads[1] == 1. Breaking the fan-out (serial chunks) makes it 0.
    x = jnp.zeros(1, jnp.float32)
    threads = jax.jit(lambda x: mod.meet(x, outs=i32((2,)), round=1, timeout_ms=20000))(x)
    if int(threads[0]) < 2:
        pytest.skip(f"XLA's intra-op pool has {int(threads[0])} thread on this machine")
    assert int(threads[1]) == 1


def test_worker_exception_is_the_calls_error_once_and_the_next_call_works(mod):
    x = jnp.zeros(64, jnp.float32)
    with pytest.raises(Exception, match="failing: CHECK failed .*chunk 17 failed") as info:
        jax.block_until_ready(jax.jit(lambda x: mod.failing(x, bad=17))(x))
    assert str(info.value).count("chunk 17 failed") == 1
    y = jax.jit(lambda x: mod.failing(x, bad=-1))(x)
    np.testing.assert_array_equal(np.asarray(y), np.ones(64, np.float32))


@pytest.mark.parametrize(
    "begin, end, grain, message",
    [(5, 2, 1, r"range \[5, 2\) is negative"), (0, 10, 0, "grain 0 is not positive")],
)
def test_bad_range_is_an_error_naming_the_function(mod, begin, end, grain, message):
    x = jnp.zeros(4, jnp.float32)
    with pytest.raises(Exception, match=f"bad_range: parallel_for: .*{message}"):
        jax.block_until_ready(mod.bad_range(x, begin=begin, end=end, grain=grain))


def test_nested_parallel_for_runs_serially_inside_a_worker(mod):
    x = jnp.arange(64 * 33, dtype=jnp.float32).reshape(64, 33)
    np.testing.assert_array_equal(np.asarray(jax.jit(mod.nested)(x)), np.asarray(x) + 1)


def test_state_is_built_once_per_call_site_from_the_attributes_and_freed_with_it(mod):
    x = jnp.zeros(10, jnp.float32)

    def fn(x):
        return mod.lookup(x, outs=[f32((10,)), i32((2,))], n=4, step=0.5)

    compiled = jax.jit(fn).lower(x).compile()
    y, counts = compiled(x)
    np.testing.assert_array_equal(np.asarray(y), 0.5 * (np.arange(10) % 4))
    live, built = int(counts[0]), int(counts[1])
    for _ in range(3):  # the same call site reuses its table
        _, again = compiled(x)
        assert (int(again[0]), int(again[1])) == (live, built)
    # two call sites in one executable: two more tables, alive with it
    two = jax.jit(lambda x: (fn(x)[1], fn(x + 1)[1])).lower(x).compile()
    _, second = two(x)
    assert (int(second[0]), int(second[1])) == (live + 2, built + 2)
    del two
    gc.collect()
    # XLA destroyed that executable and ran the deleter of both its tables
    _, after = compiled(x)
    assert int(after[0]) == live


def test_state_factory_that_throws_is_an_error_naming_the_function(mod):
    x = jnp.zeros(4, jnp.float32)
    with pytest.raises(Exception, match="lookup: table size -3 is negative.*instantiate"):
        jax.block_until_ready(mod.lookup(x, outs=[f32((4,)), i32((2,))], n=-3, step=1.0))


@pytest.mark.parametrize(
    "state_type, message",
    [
        ("struct Locked { ~Locked() = delete; };", "needs an accessible destructor"),
        ("struct Locked { Locked(int, int) {} };", "must be constructible from the function's"),
    ],
)
def test_unusable_state_types_are_compile_errors_naming_the_function(state_type, message):
    source = state_type + (
        "\nvoid keeps(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::State<Locked>& s, "
        "float q) {}\n"
    )
    with pytest.raises(jaxcc.CompileError, match=f"jaxcc: `keeps`: the T of .*{message}"):
        jaxcc.load_cpp_inline("whole_machine_bad_state", source, functions=["keeps"])


def test_state_is_shared_by_concurrent_executions_under_its_lock(mod):
    import concurrent.futures

    x = jnp.zeros(1, jnp.float32)
    compiled = jax.jit(lambda x: mod.count_calls(x, outs=jax.ShapeDtypeStruct((1,), jnp.int64)))
    compiled = compiled.lower(x).compile()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        seen = sorted(int(v[0]) for v in pool.map(lambda _: compiled(x), range(40)))
    assert seen == list(range(1, 41))


def _pair(mod, a, b, round_, timeout_ms, padding):
    # XLA:CPU runs a program of at most 8 thunks (or with only tiny buffers) sequentially, one
    # thunk after the other's completion, async or not; `padding` independent custom calls
    # (which never fuse) make it a dataflow program, where independent kernels run at once.
    def fn(x, z):
        outs = [
            a(x, round=round_, timeout_ms=timeout_ms),
            b(z, round=round_, timeout_ms=timeout_ms),
        ]
        return outs + [mod.scale(x * (k + 2), grain=1 << 20) for k in range(padding)]

    x = jnp.ones(1024, jnp.float32)
    return jax.block_until_ready(jax.jit(fn)(x, x + 1))


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two pool threads")
def test_async_kernels_run_at_once_in_a_dataflow_program(mod):
    ya, yb = _pair(mod, mod.meet_a, mod.meet_b, 11, 20000, padding=8)[:2]
    assert float(ya[0]) == 1.0 and float(yb[0]) == 3.0


def test_a_short_program_runs_its_thunks_one_after_the_other(mod):
    # Documents XLA's sequential mode (docs/usage.md): the meeting fails fast, even async.
    with pytest.raises(Exception, match="blocked: the other kernel did not start"):
        _pair(mod, mod.meet_a, mod.meet_b, 12, 300, padding=0)


def test_async_kernel_error_fails_the_call(mod):
    with pytest.raises(Exception, match="async_fail: CHECK failed .*async input too small: 3"):
        jax.block_until_ready(jax.jit(mod.async_fail)(jnp.zeros(3, jnp.float32)))
    assert float(jax.jit(mod.async_fail)(jnp.zeros(101, jnp.float32))[0]) == 0.0


# Composition: vmap, jax.export, bundles, XLACustomKernel's C++ backend, brainevent spellings.


def test_vmap_of_pool_and_state_kernels(mod):
    xs = jnp.arange(3 * 50, dtype=jnp.float32).reshape(3, 50)
    ys = jax.jit(jax.vmap(lambda x: mod.scale(x, grain=8)))(xs)
    np.testing.assert_array_equal(np.asarray(ys), 3 * np.asarray(xs))
    ys, _ = jax.vmap(lambda x: mod.lookup(x, outs=[f32((50,)), i32((2,))], n=5, step=1.0))(xs)
    np.testing.assert_array_equal(np.asarray(ys), np.asarray(xs) + np.arange(50) % 5)


def test_vectorised_vmap_hands_the_whole_batch_to_one_pool_call():
    # Same library (the vmap method is not part of the cache key), other targets.
    vec = jaxcc.load_cpp_inline(
        "whole_machine_t",
        SOURCE,
        functions=FUNCTIONS,
        vmap_method="expand_dims",
        target_prefix="whole_machine_vectorised",
    )
    xs = jnp.arange(4 * 300, dtype=jnp.float32).reshape(4, 300)
    ys = jax.jit(jax.vmap(lambda x: vec.scale(x, grain=16)))(xs)
    np.testing.assert_array_equal(np.asarray(ys), 3 * np.asarray(xs))
    # The kernel sees the whole (4, 300) batch and a batched workspace of 4 x 1200 bytes: room
    # for its 1200 floats (this kernel treats its input as flat, so it sums across the batch).
    ws = jax.vmap(lambda x: vec.reverse_cumsum(x, scratch_bytes=300 * 4))(xs)
    flat = np.cumsum(np.asarray(xs).ravel())[::-1].reshape(4, 300)
    np.testing.assert_allclose(np.asarray(ws), flat, rtol=1e-6)


def test_brainevent_spelling_runs_on_the_pool(mod):
    x = jnp.arange(1000, dtype=jnp.float32)
    np.testing.assert_array_equal(np.asarray(jax.jit(mod.be_add_one)(x)), np.asarray(x) + 1)
    assert [p.kind for p in mod.be_add_one.spec.params] == ["arg", "ret", "pool"]


def test_export_round_trip_keeps_pool_and_state(mod):
    x = jnp.arange(10, dtype=jnp.float32)

    def fn(x):
        y, _ = mod.lookup(mod.scale(x, grain=2), outs=[f32((10,)), i32((2,))], n=3, step=2.0)
        return y

    exported = jaxcc.export(fn, jax.ShapeDtypeStruct((10,), jnp.float32))
    again = jaxcc.deserialize(exported.serialize(), modules=[mod])
    np.testing.assert_array_equal(np.asarray(again.call(x)), np.asarray(fn(x)))


def test_xla_custom_kernel_cpp_backend_with_a_pool_kernel(mod, unique_name):
    kernel = jaxcc.XLACustomKernel(unique_name)
    kernel.def_cpp_kernel(lambda **params: mod.scale)
    x = jnp.arange(100, dtype=jnp.float32)
    y = jax.jit(lambda x: kernel(x, outs=f32((100,)), grain=16))(x)
    np.testing.assert_array_equal(np.asarray(y), 3 * np.asarray(x))


def test_xla_custom_kernel_cpp_backend_with_a_scratch_kernel(mod, unique_name):
    """The workspace's size is one of the primitive's parameters, an int or a function of the
    operands; without it the call says what to pass."""
    kernel = jaxcc.XLACustomKernel(unique_name)
    kernel.def_cpp_kernel(lambda **params: mod.reverse_cumsum)
    x = jnp.arange(1, 41, dtype=jnp.float32)
    expected = np.cumsum(np.asarray(x))[::-1]
    for size in (x.size * 4, lambda x: x.size * 4):
        y = jax.jit(lambda x, size=size: kernel(x, outs=f32((40,)), scratch_bytes=size))(x)
        np.testing.assert_array_equal(np.asarray(y), expected)
    with pytest.raises(jaxcc.CallError, match="reverse_cumsum: takes a jaxcc::Scratch"):
        kernel(x, outs=f32((40,)))


def test_bundle_of_a_module_with_state_loads_and_builds_its_state(tmp_path):
    source = tmp_path / "stateful.cc"
    annotated = SOURCE.replace("\nvoid scale(", "\n// @jaxcc scale\nvoid scale(")
    annotated = annotated.replace("\nvoid lookup(", "\n// @jaxcc lookup\nvoid lookup(")
    source.write_text(
        annotated.replace(
            "\nvoid reverse_cumsum(", "\n// @jaxcc reverse_cumsum\nvoid reverse_cumsum("
        )
    )
    out = tmp_path / "stateful_bundle"
    result = jaxcc_cli("build", str(source), "--name", "whole_machine_bundle", "--out", str(out))
    assert result.returncode == 0, result.stderr
    bundled = jaxcc.load_library(out, target_prefix="whole_machine_bundled")
    x = jnp.zeros(6, jnp.float32)
    y, counts = jax.jit(lambda x: bundled.lookup(x, outs=[f32((6,)), i32((2,))], n=2, step=4.0))(x)
    np.testing.assert_array_equal(np.asarray(y), 4.0 * (np.arange(6) % 2))
    assert int(counts[1]) >= 1
    np.testing.assert_array_equal(np.asarray(bundled.scale(x + 1, grain=1)), np.full(6, 3.0))
    # and a workspace: the bundle's handler keeps the hidden scratch result
    r = jax.jit(lambda x: bundled.reverse_cumsum(x, scratch_bytes=lambda x: x.size * 4))(x + 1)
    np.testing.assert_array_equal(np.asarray(r), np.arange(6, 0, -1, dtype=np.float32))


SHARDED_CHILD = """
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
import jaxcc
sys.path.insert(0, {tests!r})
from test_whole_machine import FUNCTIONS, SOURCE
mod = jaxcc.load_cpp_inline("whole_machine_t", SOURCE, functions=FUNCTIONS)
ruled = jaxcc.load_cpp_inline("whole_machine_ruled", SOURCE, functions=["scale"],
                              sharding={{"scale": "i -> i"}})
mesh = jax.make_mesh((2,), ("x",))
x = jnp.arange(64, dtype=jnp.float32)
xs = jax.device_put(x, NamedSharding(mesh, P("x")))
f = jax.jit(jax.shard_map(lambda x: mod.scale(x, grain=4), mesh=mesh, in_specs=P("x"),
                          out_specs=P("x")))
np.testing.assert_array_equal(np.asarray(f(xs)), 3 * np.asarray(x))
y = jax.jit(lambda x: ruled.scale(x, grain=4))(xs)
np.testing.assert_array_equal(np.asarray(y), 3 * np.asarray(x))
assert y.sharding.spec == P("x"), y.sharding
print("SHARDED OK")
"""


@pytest.mark.slow  # a second process with two host devices
def test_pool_kernels_under_shard_map_and_a_sharding_rule():
    from conftest import run_python

    result = run_python(SHARDED_CHILD.format(tests=os.path.dirname(__file__)))
    assert "SHARDED OK" in result.stdout, result.stderr[-3000:]


def test_cuda_functions_cannot_take_the_pool_or_run_async():
    with pytest.raises(jaxcc.SpecError, match="CUDA function 'f' takes a `jaxcc::ThreadPool&`"):
        jaxcc.load_cuda_inline(
            "whole_machine_cuda",
            "void f(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ThreadPool& pool, "
            "int64_t stream) {}",
            functions=["f"],
            compute_capability="9.0",
        )


CUBLAS_SOURCE = r"""
#include <cublas_v2.h>
#include <stdexcept>
#include <string>
// One cuBLAS handle per call site, made at XLA's instantiate stage, destroyed with the executable.
struct Cublas {
  cublasHandle_t handle = nullptr;
  Cublas() {
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
  }
  ~Cublas() { cublasDestroy(handle); }
};
// y = alpha * x + y0 (SAXPY on a copy): x, y0 inputs; y output.
void saxpy(const jaxcc::Tensor& x, const jaxcc::Tensor& y0, jaxcc::Tensor& y, jaxcc::State<Cublas>& blas,
           float alpha, int64_t stream) {
  auto s = reinterpret_cast<cudaStream_t>(stream);
  JAXCC_CUDA_CHECK(cudaMemcpyAsync(y.data_ptr<float>(), y0.data_ptr<float>(), y.nbytes(), cudaMemcpyDeviceToDevice, s));
  auto lock = blas.lock();  // the handle's stream is per call: one execution at a time sets it
  cublasSetStream(blas->handle, s);
  JAXCC_CHECK(cublasSaxpy(blas->handle, static_cast<int>(x.numel()), &alpha, x.data_ptr<float>(), 1,
                          y.data_ptr<float>(), 1) == CUBLAS_STATUS_SUCCESS) << "cublasSaxpy failed";
}
"""


@pytest.mark.slow  # an nvcc build (~20 s here): the 3.11 leg runs it, the 3.12 leg skips it
def test_cublas_kernel_with_its_handle_in_state_builds_and_runs_on_a_gpu():
    """A library kernel: cuBLAS from load_cuda_inline, one handle per call site. Builds here
    (no GPU needed); runs and checks the result where JAX sees a GPU."""
    mod = jaxcc.load_cuda_inline(
        "whole_machine_cublas",
        CUBLAS_SOURCE,
        functions=["saxpy"],
        extra_ldflags=["-lcublas"],
        compute_capability="9.0",
    )
    assert [p.kind for p in mod.saxpy.spec.params] == [
        "arg",
        "arg",
        "ret",
        "state",
        "attr",
        "stream",
    ]
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("built; running it needs a GPU (JAX sees none)")
    x = jnp.arange(1000, dtype=jnp.float32, device=jax.devices("gpu")[0])
    y = jax.jit(lambda x: mod.saxpy(x, x, outs=f32((1000,)), alpha=2.0))(x)
    np.testing.assert_allclose(np.asarray(y), 3 * np.arange(1000, dtype=np.float32))


def test_scratch_is_a_hidden_result_sized_at_trace_time(mod):
    assert [p.kind for p in mod.reverse_cumsum.spec.params] == ["arg", "ret", "scratch"]
    x = jnp.arange(1, 101, dtype=jnp.float32)
    fn = jax.jit(lambda x: mod.reverse_cumsum(x, scratch_bytes=x.size * 4))
    y = fn(x)  # one output: the workspace is not returned
    np.testing.assert_array_equal(np.asarray(y), np.cumsum(np.asarray(x))[::-1])
    # XLA places it: the compiled program has no allocation of its own, just one more result
    text = fn.lower(x).as_text()
    assert "tensor<400xui8>" in text
    ys = jax.vmap(lambda x: mod.reverse_cumsum(x, scratch_bytes=x.size * 4))(jnp.stack([x, -x]))
    np.testing.assert_array_equal(np.asarray(ys[1]), -np.cumsum(np.asarray(x))[::-1])


def test_scratch_size_errors_name_the_function(mod):
    x = jnp.ones(8, jnp.float32)
    with pytest.raises(jaxcc.CallError, match="reverse_cumsum: takes a jaxcc::Scratch"):
        mod.reverse_cumsum(x)
    with pytest.raises(jaxcc.CallError, match=r"reverse_cumsum: scratch_bytes=17179869185"):
        mod.reverse_cumsum(x, scratch_bytes=jaxcc.MAX_SCRATCH_BYTES + 1)
    with pytest.raises(jaxcc.CallError, match="scratch_bytes must be an int"):
        mod.reverse_cumsum(x, scratch_bytes=3.5)
    with pytest.raises(Exception, match="reverse_cumsum: CHECK failed .*scratch too small: 4"):
        jax.block_until_ready(mod.reverse_cumsum(x, scratch_bytes=4))
    # A function of the operands: what it returns is checked the same way, at trace time.
    with pytest.raises(jaxcc.CallError, match="scratch_bytes function returned float"):
        mod.reverse_cumsum(x, scratch_bytes=lambda x: x.size * 4.0)
    with pytest.raises(jaxcc.CallError, match=r"reverse_cumsum: scratch_bytes=-8 is outside"):
        mod.reverse_cumsum(x, scratch_bytes=lambda x: -x.size)


def test_scratch_bytes_may_be_a_function_of_the_operands(mod):
    x = jnp.arange(1, 51, dtype=jnp.float32)
    seen = []

    def size(operand):
        seen.append(operand.shape)
        return operand.size * 4

    fn = jax.jit(lambda x: mod.reverse_cumsum(x, scratch_bytes=size))
    np.testing.assert_array_equal(np.asarray(fn(x)), np.cumsum(np.asarray(x))[::-1])
    assert seen == [(50,)] and "tensor<200xui8>" in fn.lower(x).as_text()
    # Under vmap it sees one batch element's operands.
    ys = jax.vmap(lambda x: mod.reverse_cumsum(x, scratch_bytes=size))(jnp.stack([x, -x]))
    np.testing.assert_array_equal(np.asarray(ys[1]), -np.cumsum(np.asarray(x))[::-1])
    assert seen[-1] == (50,)


# One source for several explicit specs: the third parameter's type is the user's own, so the
# signature stage trusts the token, and the bridge converts whatever it passes into `Extra`.
KEY_SOURCE = r"""
#include "jaxcc/jaxcc.h"
#include "jaxcc/parallel.h"
struct Extra {
  int kind;
  Extra(jaxcc::ThreadPool&) : kind(1) {}
  Extra(jaxcc::Scratch) : kind(2) {}
  Extra(jaxcc::Async) : kind(3) {}
  Extra(const jaxcc::Tensor&) : kind(4) {}
};
void probe(const jaxcc::Tensor& x, jaxcc::Tensor& y, Extra extra) {
  y.data_ptr<int32_t>()[0] = extra.kind;
}
"""


def test_cache_key_covers_the_pool_scratch_and_async_tokens(unique_name):
    """Same source, flags and name; only the third token differs. Each request must get its own
    entry: a key blind to the token would hand the second request the first one's library, whose
    handler passes the pool (kind 1) where a scratch (2) or async (3) one was asked for."""
    x = jnp.zeros(4, jnp.float32)
    out = i32((1,))
    keys = {}
    for kind, token, extra in [
        (1, "pool", {}),
        (2, "scratch", {"scratch_bytes": 8}),
        (3, "async", {}),
    ]:
        mod = jaxcc.load_cpp_inline(
            unique_name,
            KEY_SOURCE,
            functions={"probe": f"arg ret {token}"},
            target_prefix=f"{unique_name}_{token}",
        )
        keys[token] = (mod.key, mod.path)
        got = jax.jit(lambda x, mod=mod, extra=extra: mod.probe(x, outs=out, **extra))(x)
        assert int(got[0]) == kind, token
    assert len({key for key, _ in keys.values()}) == 3
    assert len({path for _, path in keys.values()}) == 3


def test_cache_key_covers_the_state_token(unique_name):
    """Loaded first with `pool`, the same source, flags and name asked for with `state` must not
    be served from the first entry: a key blind to the token would hand back the pool handler
    without a word. With the token in the key a build runs, and it fails where it should: the
    bridge cannot pass a state to the user's own `Extra` type."""
    first = jaxcc.load_cpp_inline(
        unique_name, KEY_SOURCE, functions={"probe": "arg ret pool"}, target_prefix=unique_name
    )
    assert not first.cache_hit
    with pytest.raises(jaxcc.CompileError, match="could not convert .*StateSlot.* to .Extra."):
        jaxcc.load_cpp_inline(
            unique_name, KEY_SOURCE, functions={"probe": "arg ret state"}, target_prefix=unique_name
        )
    again = jaxcc.load_cpp_inline(
        unique_name, KEY_SOURCE, functions={"probe": "arg ret pool"}, target_prefix=unique_name
    )
    assert (again.key, again.path) == (first.key, first.path)  # the first entry still serves


def _runtime_sum(mod, n, extra_bytes=0, align=64):
    x = jnp.full((4,), n, jnp.float32)
    fn = jax.jit(lambda x: mod.runtime_sum(x, outs=f32((3,)), extra_bytes=extra_bytes, align=align))
    return np.asarray(fn(x))


def test_scratch_allocator_gives_memory_sized_at_run_time_on_the_cpu(mod):
    """XLA:CPU lends no device allocator (its XLA_FFI_DeviceMemory_Allocate fails), so a CPU
    function's jaxcc::ScratchAllocator hands out aligned host memory, freed when the call returns
    (ASan in CI sees a leak otherwise)."""
    assert [p.kind for p in mod.runtime_sum.spec.params] == [
        "arg",
        "ret",
        "scratch_alloc",
        "attr",
        "attr",
    ]
    for n in (1, 100, 4096):
        sum_, aligned, blocks = _runtime_sum(mod, n)
        assert sum_ == n * (n + 1) / 2 and aligned == 1 and blocks == 51
    # The same compiled function, a size it has not seen: nothing was fixed at trace time.
    x = jnp.full((4,), 1000, jnp.float32)
    fn = jax.jit(lambda x: mod.runtime_sum(x, outs=f32((3,)), extra_bytes=0, align=64))
    assert float(fn(x)[0]) == 500500 and float(fn(x.at[0].set(10))[0]) == 55


@pytest.mark.parametrize(
    ("extra_bytes", "align", "message"),
    [
        (
            jaxcc.MAX_SCRATCH_BYTES + 1,
            64,
            r"RESOURCE_EXHAUSTED: runtime_sum: jaxcc::ScratchAllocator: 17179869185 bytes asked for, "
            r"above jaxcc.MAX_SCRATCH_BYTES \(17179869184\)",
        ),
        (
            8,
            1 << 40,
            r"RESOURCE_EXHAUSTED: runtime_sum: jaxcc::ScratchAllocator: allocating 8 bytes "
            r"\(alignment 1099511627776\) failed: out of host memory",
        ),
        (8, 48, r"runtime_sum: jaxcc::ScratchAllocator: alignment 48 is not a power of two"),
    ],
)
def test_scratch_allocator_refusals_name_the_function_and_the_size(
    mod, extra_bytes, align, message
):
    assert jaxcc.MAX_SCRATCH_BYTES == 17179869184  # the C++ cap (kMaxScratchBytes) in the message
    with pytest.raises(Exception, match=message):
        _runtime_sum(mod, 10, extra_bytes, align)
    assert _runtime_sum(mod, 10)[0] == 55  # the next call works


def test_scratch_allocator_cannot_be_async():
    with pytest.raises(jaxcc.SignatureError, match="takes both `scratch_alloc`"):
        jaxcc.load_cpp_inline(
            "scratch_alloc_async",
            "void f(jaxcc::Tensor& y, jaxcc::ScratchAllocator& a, jaxcc::Async) {}",
            functions=["f"],
        )


CUDA_SCRATCH_SOURCE = r"""
// y = 2 * x through a device workspace whose size is decided while the call runs.
__global__ void twice(const float* x, float* tmp, float* y, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) { tmp[i] = 2.0f * x[i]; y[i] = tmp[i]; }
}
void twice_rt(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ScratchAllocator& alloc,
              int64_t stream) {
  const int64_t n = x.numel();
  float* tmp = alloc.allocate_array<float>(static_cast<size_t>(n));
  twice<<<(n + 255) / 256, 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
      x.data_ptr<float>(), tmp, y.data_ptr<float>(), n);
}
"""


@pytest.mark.slow  # an nvcc build: the 3.11 leg runs it, the 3.12 leg skips it
def test_cuda_scratch_allocator_builds_and_runs_on_a_gpu():
    """The CUDA handler asks XLA's device allocator (and drops the command-buffer trait: the
    golden test CodegenGolden.ScratchAllocatorDropsTheGraphTrait). Builds here; runs where JAX
    sees a GPU."""
    mod = jaxcc.load_cuda_inline(
        "whole_machine_cuda_scratch",
        CUDA_SCRATCH_SOURCE,
        functions=["twice_rt"],
        compute_capability="9.0",
    )
    assert [p.kind for p in mod.twice_rt.spec.params] == ["arg", "ret", "scratch_alloc", "stream"]
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("built; running it needs a GPU (JAX sees none)")
    x = jnp.arange(5000, dtype=jnp.float32, device=jax.devices("gpu")[0])
    y = jax.jit(lambda x: mod.twice_rt(x, outs=f32((5000,))))(x)
    np.testing.assert_array_equal(np.asarray(y), 2 * np.arange(5000, dtype=np.float32))
