"""The debug profile (issue 37 item 5, decision 150c): `debug=True` or JAXCC_DEBUG=1 builds the
user's code at -O0 -g and runs CPU outputs on guarded copies, so a write past an output (or a
`jaxcc::Scratch`) is an error naming the function, the buffer and how far; it is its own cache
entry, and a build without it is unchanged."""

import os
import shutil
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import asan_preload

import jaxcc
from jaxcc.errors import LoadError, SpecError

OVERRUN = r"""
#include "jaxcc/jaxcc.h"

// Writes `past` floats beyond the end of `out`.
void overrun(const jaxcc::Tensor x, jaxcc::Tensor out, int32_t past) {
  float* o = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < out.numel() + past; ++i) o[i] = 1.0f;
}

// Writes one float before the start of `out`.
void underrun(const jaxcc::Tensor x, jaxcc::Tensor out) {
  static_cast<float*>(out.data_ptr())[-1] = 2.0f;
  static_cast<float*>(out.data_ptr())[0] = 3.0f;
}

// Writes one byte past its workspace.
void scratch_overrun(const jaxcc::Tensor x, jaxcc::Tensor out, jaxcc::Scratch scratch) {
  static_cast<unsigned char*>(scratch.data)[scratch.bytes] = 7;
  for (int64_t i = 0; i < out.numel(); ++i) static_cast<float*>(out.data_ptr())[i] = 0.0f;
}

// Writes one byte past a block of its run-time allocator.
void allocator_overrun(const jaxcc::Tensor x, jaxcc::Tensor out, jaxcc::ScratchAllocator& alloc) {
  auto* block = static_cast<unsigned char*>(alloc.allocate(16));
  block[16] = 1;
  for (int64_t i = 0; i < out.numel(); ++i) static_cast<float*>(out.data_ptr())[i] = 0.0f;
}

// #ifdef JAXCC_DEBUG: the profile's define reaches user code.
void debug_defined(const jaxcc::Tensor x, jaxcc::Tensor out) {
#ifdef JAXCC_DEBUG
  static_cast<float*>(out.data_ptr())[0] = 1.0f;
#else
  static_cast<float*>(out.data_ptr())[0] = 0.0f;
#endif
}
"""

FUNCTIONS = ["overrun", "underrun", "scratch_overrun", "allocator_overrun", "debug_defined"]


@pytest.fixture(scope="module")
def debug_mod():
    return jaxcc.load_cpp_inline("debug_profile_mod", OVERRUN, FUNCTIONS, debug=True)


def test_write_past_an_output_is_an_error_naming_function_buffer_and_distance(debug_mod):
    x = jnp.zeros(4, jnp.float32)
    with pytest.raises(Exception) as caught:
        jax.block_until_ready(debug_mod.overrun(x, past=3))
    message = str(caught.value)
    assert "function 'overrun' wrote past the end of its output 'out' (16 bytes)" in message
    assert "bytes 0 to 11 past the end" in message
    # An in-bounds call of the same kernel is right, and its output was copied back.
    np.testing.assert_array_equal(debug_mod.overrun(x, past=0), np.ones(4, np.float32))


def test_write_before_an_output_is_an_error(debug_mod):
    with pytest.raises(Exception, match="'underrun' wrote before the start of its output 'out'"):
        jax.block_until_ready(debug_mod.underrun(jnp.zeros(4, jnp.float32)))


def test_write_past_a_scratch_is_an_error(debug_mod):
    with pytest.raises(Exception, match="'scratch_overrun' wrote past the end of its output"):
        jax.block_until_ready(
            debug_mod.scratch_overrun(jnp.zeros(4, jnp.float32), scratch_bytes=64)
        )


def test_write_past_a_scratch_allocator_block_is_an_error(debug_mod):
    with pytest.raises(Exception, match="'allocator_overrun' wrote past the end of jaxcc::Scratch"):
        jax.block_until_ready(debug_mod.allocator_overrun(jnp.zeros(4, jnp.float32)))


def test_debug_build_defines_jaxcc_debug_and_is_its_own_cache_entry(debug_mod):
    plain = jaxcc.load_cpp_inline(
        "debug_profile_mod", OVERRUN, FUNCTIONS, target_prefix="debug_profile_plain"
    )
    assert plain.key != debug_mod.key
    x = jnp.zeros(4, jnp.float32)
    assert float(debug_mod.debug_defined(x)[0]) == 1.0
    assert float(plain.debug_defined(x)[0]) == 0.0
    # Without the profile nothing is checked: the overrun goes unnoticed (the old behaviour).
    jax.block_until_ready(plain.overrun(x, past=1))


def test_jaxcc_debug_environment_variable_selects_the_profile(tmp_path):
    code = textwrap.dedent(
        f"""
        import jax.numpy as jnp, jaxcc
        mod = jaxcc.load_cpp_inline("debug_env_mod", {OVERRUN!r}, {FUNCTIONS!r})
        print(float(mod.debug_defined(jnp.zeros(4, jnp.float32))[0]))
        """
    )
    env = {**os.environ, "JAXCC_DEBUG": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("1.0")


def test_a_bad_jaxcc_debug_value_is_a_spec_error(monkeypatch):
    monkeypatch.setenv("JAXCC_DEBUG", "yes")
    with pytest.raises(SpecError, match="JAXCC_DEBUG=yes is not a setting"):
        jaxcc.load_cpp_inline("debug_bad_env", OVERRUN, FUNCTIONS)
    with pytest.raises(SpecError, match="debug must be True, False or 'asan'"):
        jaxcc.load_cpp_inline("debug_bad_arg", OVERRUN, FUNCTIONS, debug="yes")


HEAP_OVERFLOW = r"""
#include "jaxcc/jaxcc.h"
#include <vector>

void heap_overflow(const jaxcc::Tensor x, jaxcc::Tensor out) {
  std::vector<float> tmp(4);
  tmp[x.numel()] = 1.0f;  // line 7: one past the end of a heap block
  static_cast<float*>(out.data_ptr())[0] = tmp[0];
}
"""


def test_asan_without_the_preload_is_refused_with_the_exact_command(monkeypatch):
    monkeypatch.setenv("CXX", shutil.which("g++"))
    with pytest.raises(LoadError) as caught:
        jaxcc.load_cpp_inline("debug_asan_refused", HEAP_OVERFLOW, ["heap_overflow"], debug="asan")
    gxx = shutil.which("g++")
    assert (
        f'LD_PRELOAD="$({gxx} -print-file-name=libasan.so) $({gxx} -print-file-name=libstdc++'
        in (str(caught.value))
    )


def test_a_users_own_address_sanitizer_flag_without_the_runtime_is_an_error_not_an_exit(tmp_path):
    # ASan's runtime ends a process that dlopens an instrumented library without it preloaded
    # ("ASan runtime does not come first"); jaxcc refuses the load first (decision 168), whether
    # nothing is built yet or a preloaded process built the entry.
    code = textwrap.dedent(
        f"""
        import jaxcc
        jaxcc.set_cache_dir({str(tmp_path / "cache")!r})
        try:
            m = jaxcc.load_cpp_inline("own_asan_flag", {HEAP_OVERFLOW!r}, ["heap_overflow"],
                                      extra_cflags=["-fsanitize=address"],
                                      extra_ldflags=["-fsanitize=address"])
            print("loaded, cache hit:", m.cache_hit)
        except jaxcc.errors.LoadError as e:
            print("refused:", str(e).replace("\\n", " "))
        print("survived")
        """
    )
    env = {**os.environ, "CXX": shutil.which("g++"), "ASAN_OPTIONS": "detect_leaks=0"}

    def run(**extra):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
            env={**env, **extra},
        )  # fmt: skip
        assert "survived" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
        return done.stdout.splitlines()[0]

    cold = run()
    assert cold.startswith("refused: module 'own_asan_flag' is built with AddressSanitizer"), cold
    assert "g++ -print-file-name=libasan.so" in cold
    assert run(LD_PRELOAD=asan_preload()) == "loaded, cache hit: False"
    warm = run()  # the entry is cached now: refused all the same, before the library is mapped
    assert warm.startswith("refused: module 'own_asan_flag'"), warm
    assert "g++ -print-file-name=libasan.so" in warm


def test_asan_with_the_preload_reports_the_kernels_line():
    code = textwrap.dedent(
        f"""
        import jax.numpy as jnp, jaxcc
        mod = jaxcc.load_cpp_inline("debug_asan_mod", {HEAP_OVERFLOW!r}, ["heap_overflow"])
        mod.heap_overflow(jnp.zeros(4, jnp.float32)).block_until_ready()
        print("survived")
        """
    )
    preload = asan_preload()
    env = {
        **os.environ,
        "LD_PRELOAD": preload,
        "ASAN_OPTIONS": "detect_leaks=0",
        "JAXCC_DEBUG": "asan",
    }
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )
    assert "survived" not in done.stdout
    assert "AddressSanitizer: heap-buffer-overflow" in done.stderr, done.stderr[-3000:]
    assert "in heap_overflow(jaxcc::Tensor, jaxcc::Tensor) " in done.stderr
    assert "<debug_asan_mod>:7" in done.stderr


def _nvcc_home():
    if shutil.which("nvcc"):
        return None
    return "/usr/local/cuda" if os.path.exists("/usr/local/cuda/bin/nvcc") else False


@pytest.mark.skipif(_nvcc_home() is False, reason="nvcc is not installed")
def test_cuda_debug_build_has_device_debug_information(monkeypatch):
    """Build only, with an explicit architecture (no GPU needed): ptxas refuses an optimisation
    level beside -G, so the profile must drop it; the module carries device debug sections."""
    from cuda_sources import SCALE_BY

    if _nvcc_home():
        monkeypatch.setenv("CUDA_HOME", _nvcc_home())
    plain = jaxcc.load_cuda_inline("debug_cuda_plain", SCALE_BY, compute_capability="9.0")
    debug = jaxcc.load_cuda_inline("debug_cuda_mod", SCALE_BY, compute_capability="9.0", debug=True)
    assert debug.key != plain.key
    # Host debug information (-g) in the debug module's ELF, none in the plain one.
    with open(debug.path, "rb") as f, open(plain.path, "rb") as g:
        assert b".debug_line" in f.read() and b".debug_line" not in g.read()
    cuobjdump = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    if not os.path.exists(cuobjdump):
        pytest.skip("cuobjdump not installed")

    def sections(module):
        done = subprocess.run([cuobjdump, "-elf", module.path], capture_output=True, text=True)
        return done.stdout

    assert ".nv_debug" in sections(debug) or ".debug_info" in sections(debug)
    assert ".debug_info" not in sections(plain)
