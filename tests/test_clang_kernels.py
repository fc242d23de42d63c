"""Kernels built with Clang (`CXX=clang++`, decision 167): every jaxcc and brainevent kernel header
a user includes, the FFI wrapper and the frame runtime compile under Clang, and what they build
computes, checks and refuses as g++'s build does. jaxcc 0.1's `jaxcc/tensor.h` did not compile
under Clang at all (a GNU attribute before `[[noreturn]]`), so every kernel failed to build.

Needs clang++ (scripts/setup.sh installs it); skipped without one, except under CI=true, where a
missing Clang fails the module instead of hiding it."""

import json
import os
import platform
import shutil
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import asan_preload, compiled_units, logging_compiler, run_python

import jaxcc

CLANG = shutil.which("clang++")
if CLANG is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("clang++ is not installed: scripts/setup.sh installs it")
    pytest.skip("clang++ is not installed (scripts/setup.sh installs it)", allow_module_level=True)

# jaxcc's own spelling: a dtype-checked data_ptr, the pool, State under its lock, Scratch, an
# asynchronous kernel and a scratch allocator (the frame runtime's features, decision 161c).
JAXCC_SOURCE = r"""
#include "jaxcc/jaxcc.h"
void twice(const jaxcc::Tensor& x, jaxcc::Tensor& y) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = 2.0f * x.data_ptr<float>()[i];
}
void pooled(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ThreadPool& pool) {
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  pool.parallel_for(0, x.numel(), 16, [&](int64_t i) { b[i] = a[i] * a[i]; });
}
struct Counter { int64_t calls = 0; };
void count_calls(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::State<Counter>& counter) {
  auto lock = counter.lock();
  y.data_ptr<int32_t>()[0] = static_cast<int32_t>(++counter->calls);
}
void reverse_cumsum(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::Scratch scratch) {
  const int64_t n = x.numel();
  JAXCC_CHECK(scratch.count<float>() >= static_cast<size_t>(n)) << "scratch too small";
  float* tmp = scratch.as<float>();
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) tmp[i] = sum += x.data_ptr<float>()[i];
  for (int64_t i = 0; i < n; ++i) y.data_ptr<float>()[i] = tmp[n - 1 - i];
}
void later(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::Async) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1.0f;
}
void shifted(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ScratchAllocator& alloc) {
  float* tmp = alloc.allocate_array<float>(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) tmp[i] = x.data_ptr<float>()[i] - 1.0f;
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = tmp[i];
}
"""
JAXCC_FUNCTIONS = ["twice", "pooled", "count_calls", "reverse_cumsum", "later", "shifted"]

# brainevent's spelling (`// @BE`, BE::Tensor, BE_DISPATCH_*, streamed checks, complex values).
BRAINEVENT_SOURCE = r"""
#include "brainevent/common.h"
// @BE scaled
void scaled(const BE::Tensor x, BE::Tensor y) {
  JAXCC_CHECK(x.numel() < 100) << "too long: " << x.numel() << " " << x.dtype();
  BE_DISPATCH_FLOATING(x.dtype(), T, {
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<T>()[i] = x.data_ptr<const T>()[i] * T(3);
  });
}
// @BE conj_twice
void conj_twice(const BE::Tensor x, BE::Tensor y) {
  BE_DISPATCH_COMPLEX(x.dtype(), T, {
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<T>()[i] = x.data_ptr<const T>()[i] * T(2);
  });
}
// @BE be_add_one
void be_add_one(const BE::Tensor& x, BE::Tensor& y, BE::ThreadPool& pool) {
  BE::parallel_for(0, x.numel(), 128, [&](int64_t i) {
    y.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1.0f;
  });
}
"""

TWICE = r"""
#include "jaxcc/jaxcc.h"
void twice(const jaxcc::Tensor& x, jaxcc::Tensor& y) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = 2.0f * x.data_ptr<float>()[i];
}
"""

# Writes one element past its output: the debug profile's guard zones name it (decision 150c).
OVERRUN = r"""
#include "jaxcc/jaxcc.h"
void overrun(const jaxcc::Tensor& x, jaxcc::Tensor& y) {
  for (int64_t i = 0; i <= x.numel(); ++i) y.data_ptr<float>()[i] = x.data_ptr<float>()[0];
}
"""


@pytest.fixture
def clang(tmp_path, monkeypatch):
    """$CXX set to clang++ behind a script that logs each command line; returns the log."""
    return logging_compiler(tmp_path, monkeypatch, CLANG)


def test_jaxcc_kernels_build_and_run_with_clang(fresh_cache, unique_name, clang):
    module = jaxcc.load_cpp_inline(unique_name, JAXCC_SOURCE, JAXCC_FUNCTIONS)
    # Every unit of the module went through Clang: the user's, the wrapper and the runtime.
    assert compiled_units(clang) == ["ffi_frame_runtime.cc", "ffi_wrapper.cc", "kernel_0.cc"]
    x = jnp.arange(1, 65, dtype=jnp.float32)
    np.testing.assert_array_equal(module.twice(x), 2 * np.asarray(x))
    np.testing.assert_array_equal(module.pooled(x), np.asarray(x) ** 2)
    count = jax.jit(lambda x: module.count_calls(x, outs=jax.ShapeDtypeStruct((1,), jnp.int32)))
    assert [int(count(x)[0]) for _ in range(3)] == [1, 2, 3]  # one State, kept across calls
    cumsum = np.asarray(module.reverse_cumsum(x, scratch_bytes=x.size * 4))
    np.testing.assert_array_equal(cumsum, np.cumsum(np.asarray(x))[::-1])
    np.testing.assert_array_equal(module.later(x), np.asarray(x) + 1)
    np.testing.assert_array_equal(module.shifted(x), np.asarray(x) - 1)


def test_a_dtype_mismatch_is_the_typed_error_under_clang(fresh_cache, unique_name, clang):
    # The declaration Clang refused: data_ptr<float>() of an int32 buffer throws DTypeError.
    module = jaxcc.load_cpp_inline(unique_name, TWICE, ["twice"])
    with pytest.raises(
        Exception, match=r"parameter 'x' is int32, but the kernel reads it as float"
    ):
        jax.block_until_ready(module.twice(jnp.arange(4, dtype=jnp.int32)))


def test_brainevent_kernels_build_and_run_with_clang(fresh_cache, unique_name, clang):
    module = jaxcc.load_cpp_inline(unique_name, BRAINEVENT_SOURCE)
    assert "kernel_0.cc" in compiled_units(clang)
    x = jnp.arange(5, dtype=jnp.float32)
    np.testing.assert_array_equal(module.scaled(x), 3 * np.asarray(x))
    with pytest.raises(Exception, match=r"scaled: unsupported dtype int32 in JAXCC_DISPATCH_FLOAT"):
        jax.block_until_ready(module.scaled(jnp.arange(5, dtype=jnp.int32)))
    z = jnp.array([1 + 2j, -3 + 0.5j], jnp.complex64)
    np.testing.assert_allclose(module.conj_twice(z), 2 * np.asarray(z))
    np.testing.assert_array_equal(module.be_add_one(jnp.ones(300, jnp.float32)), np.full(300, 2.0))
    with pytest.raises(Exception, match=r"x\.numel\(\) < 100: too long: 200 float32"):
        jax.block_until_ready(module.scaled(jnp.ones(200, jnp.float32)))


def test_the_debug_profile_guards_outputs_under_clang(fresh_cache, unique_name, clang):
    module = jaxcc.load_cpp_inline(unique_name, OVERRUN, ["overrun"], debug=True)
    assert "kernel_0.cc" in compiled_units(clang)
    with pytest.raises(Exception, match="'overrun' wrote past the end of its output"):
        jax.block_until_ready(module.overrun(jnp.ones(8, jnp.float32)))


def test_clang_and_gxx_builds_are_separate_cache_entries_sharing_no_object(tmp_path):
    # One process a load, one cache: each compiler's build is its own entry, found again by the
    # next process with the same compiler, and nothing one compiled is linked into the other's.
    step = (
        "import json, jax.numpy as jnp, jaxcc\n"
        f"jaxcc.set_cache_dir({str(tmp_path / 'cache')!r})\n"
        f"m = jaxcc.load_cpp_inline('clang_or_gxx', {TWICE!r}, ['twice'])\n"
        "y = [float(v) for v in m.twice(jnp.arange(3, dtype=jnp.float32))]\n"
        "print(json.dumps([m.key, m.cache_hit, m.objects_reused, y]))\n"
    )
    seen = []
    for compiler in ("clang++", "g++", "clang++", "g++"):
        result = run_python(step, env={"CXX": shutil.which(compiler)})
        assert result.returncode == 0, result.stderr[-3000:]
        seen.append(json.loads(result.stdout.strip().splitlines()[-1]))
    (clang_key, clang_hit, _, clang_y), (gxx_key, gxx_hit, gxx_reused, gxx_y) = seen[:2]
    assert clang_key != gxx_key and not clang_hit and not gxx_hit
    assert gxx_reused == 0
    assert clang_y == gxx_y == [0.0, 2.0, 4.0]
    assert [(key, hit) for key, hit, _, _ in seen[2:]] == [(clang_key, True), (gxx_key, True)]


@pytest.mark.parametrize("compiler", ["clang++", "g++"])
def test_a_pool_or_state_name_outside_their_units_gets_the_header_to_include(
    fresh_cache, unique_name, monkeypatch, compiler
):
    # Only `twice` is loaded, so the unit leaves out the pool and state headers its other
    # functions need: each compiler's "undeclared" gets the include that fixes it.
    monkeypatch.setenv("CXX", shutil.which(compiler))
    with pytest.raises(jaxcc.errors.CompileError) as failure:
        jaxcc.load_cpp_inline(unique_name, JAXCC_SOURCE, ["twice"])
    assert 'add `#include "jaxcc/parallel.h"` at the top of the source' in str(failure.value)
    source = JAXCC_SOURCE.replace(
        '#include "jaxcc/jaxcc.h"', '#include "jaxcc/jaxcc.h"\n#include "jaxcc/parallel.h"'
    )
    with pytest.raises(jaxcc.errors.CompileError) as failure:
        jaxcc.load_cpp_inline(unique_name + "_pool", source, ["twice"])
    assert 'add `#include "jaxcc/state.h"` at the top of the source' in str(failure.value)
    source = source.replace(
        '#include "jaxcc/parallel.h"', '#include "jaxcc/parallel.h"\n#include "jaxcc/state.h"'
    )
    module = jaxcc.load_cpp_inline(unique_name + "_both", source, ["twice"])
    np.testing.assert_array_equal(module.twice(jnp.ones(3, jnp.float32)), np.full(3, 2.0))


HEAP_OVERFLOW = r"""
#include "jaxcc/jaxcc.h"
void heap_overflow(const jaxcc::Tensor& x, jaxcc::Tensor& y) {
  float* heap = new float[4];
  heap[x.numel()] = 1.0f;  // line 5: past the end of a heap block
  y.data_ptr<float>()[0] = heap[0];
  delete[] heap;
}
"""

ASAN_CHILD = """
import jax, jax.numpy as jnp, jaxcc
jaxcc.set_cache_dir({cache!r})
try:
    mod = jaxcc.load_cpp_inline("clang_asan_mod", {source!r}, ["heap_overflow"], debug="asan")
except jaxcc.errors.LoadError as e:
    print("refused:", str(e).replace("\\n", " "))
else:
    jax.block_until_ready(mod.heap_overflow(jnp.zeros(8, jnp.float32)))
print("survived")
"""


def test_debug_asan_under_clang_reports_the_kernels_line(tmp_path):
    # Clang links a shared library's sanitizer runtime only with -shared-libsan, which jaxcc adds
    # (decision 168); the process must start with Clang's runtime, not GCC's libasan.
    code = ASAN_CHILD.format(cache=str(tmp_path / "cache"), source=HEAP_OVERFLOW)
    env = {**os.environ, "CXX": CLANG, "ASAN_OPTIONS": "detect_leaks=0"}
    runtime = f"libclang_rt.asan-{platform.machine()}.so"
    clang_run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
        env={**env, "LD_PRELOAD": asan_preload(CLANG, runtime)},
    )  # fmt: skip
    assert "survived" not in clang_run.stdout, clang_run.stdout
    assert "AddressSanitizer: heap-buffer-overflow" in clang_run.stderr, clang_run.stderr[-3000:]
    assert "in heap_overflow(jaxcc::Tensor const&, jaxcc::Tensor&) " in clang_run.stderr
    assert "<clang_asan_mod>:5" in clang_run.stderr

    # GCC's runtime in a process whose kernels Clang builds: refused with Clang's command.
    gcc_run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
        env={**env, "LD_PRELOAD": asan_preload()},
    )  # fmt: skip
    assert "survived" in gcc_run.stdout, gcc_run.stdout[-2000:] + gcc_run.stderr[-2000:]
    assert "but this process preloaded GCC's libasan" in gcc_run.stdout, gcc_run.stdout
    assert f"{CLANG} -print-file-name=libclang_rt.asan-" in gcc_run.stdout
