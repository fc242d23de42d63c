"""The frame runtime carries only the FFI lifecycle features a CPU module's functions take
(decision 161c): a module without async, state, pool or run-time scratch links a lean runtime, a
module with them one that has them, and both objects live side by side in one cache, each shared
by every later module with the same set."""

import shutil
import subprocess

import jax.numpy as jnp
import numpy as np
from conftest import compiled_units, logging_compiler

import jaxcc

PLAIN = """
void neg(const jaxcc::Tensor& x, jaxcc::Tensor& y) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = -x.data_ptr<float>()[i];
}
"""

FEATURED = """
void later(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::Async) {
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = 2.0f * x.data_ptr<float>()[i];
}
void scratchy(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::ScratchAllocator& alloc) {
  float* tmp = alloc.allocate_array<float>(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) tmp[i] = x.data_ptr<float>()[i] + 1.0f;
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = tmp[i];
}
"""


def cached_decoders(cache):
    """The RunFrameWith instantiations of the cache's shared objects (one per runtime object)."""
    found = []
    for obj in sorted((cache / ".objects").glob("*.o")):
        symbols = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True).stdout
        found += [
            line.split("RunFrameWith<", 1)[1].split(">", 1)[0]
            for line in symbols.splitlines()
            if " RunFrameWith<" in line or "::RunFrameWith<" in line
        ]
    return sorted(found)


def test_lean_and_featured_runtimes_are_both_cached_and_both_work(
    fresh_cache, unique_name, tmp_path, monkeypatch
):
    log = logging_compiler(tmp_path, monkeypatch)
    x = jnp.arange(4, dtype=jnp.float32)

    plain = jaxcc.load_cpp_inline(unique_name + "_plain", PLAIN, ["neg"])
    assert "ffi_frame_runtime.cc" in compiled_units(log)
    np.testing.assert_array_equal(plain.neg(x), -np.arange(4))

    # Another feature set is another runtime text: compiled once more, into its own object.
    featured = jaxcc.load_cpp_inline(unique_name + "_featured", FEATURED, ["later", "scratchy"])
    assert "ffi_frame_runtime.cc" in compiled_units(log)
    np.testing.assert_array_equal(featured.later(x), 2 * np.arange(4))
    np.testing.assert_array_equal(featured.scratchy(x), np.arange(4) + 1)
    np.testing.assert_array_equal(plain.neg(x), -np.arange(4))
    if shutil.which("nm"):
        # The lean decoder (no feature) and the one with async (1) and the allocator (8).
        assert cached_decoders(fresh_cache) == [
            "jaxcc::detail::NoCallScope, 0u",
            "jaxcc::detail::NoCallScope, 9u",
        ]

    # Each set's object stays cached: later modules of either set compile no runtime.
    again_plain = jaxcc.load_cpp_inline(
        unique_name + "_plain2", PLAIN.replace("-x", "-2.0f * x"), ["neg"]
    )
    assert compiled_units(log) == ["ffi_wrapper.cc", "kernel_0.cc"]
    assert again_plain.objects_reused == 1
    np.testing.assert_array_equal(again_plain.neg(x), -2 * np.arange(4))
    again_featured = jaxcc.load_cpp_inline(
        unique_name + "_featured2", FEATURED.replace("2.0f", "3.0f"), ["later", "scratchy"]
    )
    assert compiled_units(log) == ["ffi_wrapper.cc", "kernel_0.cc"]
    assert again_featured.objects_reused == 1
    np.testing.assert_array_equal(again_featured.later(x), 3 * np.arange(4))
