"""Autotuning a tiled CUDA kernel on a real GPU (issue 40 item 5, decision 159e): threads per
block x items per thread declared by annotation, timed on the card, the decision keyed and
remembered per device model (JAX's `device_kind`). Runs in scripts/gpu-check.sh's `gpu` steps;
green on an H200 under both CUDA runtimes (seventeenth and eighteenth sessions)."""

import os
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc
from jaxcc.tune import store

pytestmark = pytest.mark.gpu
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from conftest import run_python  # noqa: E402

TILED = r"""
#include <cuda_runtime.h>
#include "jaxcc/jaxcc.h"

__global__ void tiled_twice_kernel(const float* x, float* y, int n) {
  int base = (blockIdx.x * THREADS + threadIdx.x) * ITEMS;
  for (int k = 0; k < ITEMS; ++k)
    if (base + k < n) y[base + k] = 2.0f * x[base + k];
}

// @BE tiled_twice arg ret stream tune="THREADS=64,128,256; ITEMS=1,4"
void tiled_twice(const jaxcc::Tensor& x, jaxcc::Tensor& y, int64_t stream) {
  int n = static_cast<int>(x.numel());
  int per_block = THREADS * ITEMS;
  tiled_twice_kernel<<<(n + per_block - 1) / per_block, THREADS, 0, (cudaStream_t)stream>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
}
"""


def test_tiled_cuda_kernel_is_tuned_on_the_card_and_remembered_per_device_model(tmp_path):
    cache = tmp_path / "cache"
    code = textwrap.dedent(f"""
        import json, jax, jax.numpy as jnp, numpy as np, jaxcc
        from jaxcc.tune import store
        mod = jaxcc.load_cuda_inline("gpu_tiled_tune", {TILED!r})
        x = jnp.arange(1 << 20, dtype=jnp.float32)
        y = jax.jit(mod.tiled_twice)(x)
        hlo = jax.jit(mod.tiled_twice).lower(x).as_text()
        records = store.list_decisions(jaxcc.get_cache_dir())
        print("RESULT " + json.dumps({{
            "correct": bool(np.array_equal(np.asarray(y), np.asarray(x) * 2)),
            "variants": len(mod.tiled_twice.variant_targets),
            "devices": [r["device"] for r in records],
            "chosen": [r["target"] for r in records],
            "in_hlo": all(r["target"] in hlo for r in records),
            "kind": jax.devices("gpu")[0].device_kind}}))
    """)
    env = {"JAXCC_CACHE_DIR": str(cache), "JAXCC_PRINT_AUTOTUNING": "1"}
    first = run_python(code, env)
    assert first.returncode == 0, first.stderr[-3000:]
    import json

    result = json.loads(first.stdout.split("RESULT ", 1)[1])
    assert result["correct"] and result["variants"] == 6 and result["in_hlo"]
    assert result["devices"] == [f"gpu:{result['kind']}"]
    lines = [ln for ln in first.stderr.splitlines() if ln.startswith("jaxcc autotune:")]
    assert len(lines) == 1 and not lines[0].endswith("cached"), lines
    # The same device model in another process: remembered, nothing timed.
    second = run_python(code, env)
    assert second.returncode == 0, second.stderr[-3000:]
    lines = [ln for ln in second.stderr.splitlines() if ln.startswith("jaxcc autotune:")]
    assert len(lines) == 1 and lines[0].endswith("cached"), lines
    # Another device model (as a different card would report it): tuned again, kept beside.
    other = code.replace("import json,", "import jaxcc.tune.choose as tc\n"
                         "tc.TunedFunction._device_model = lambda self: 'gpu:Another Card'\n"
                         "import json,")  # fmt: skip
    third = run_python(other, env)
    assert third.returncode == 0, third.stderr[-3000:]
    lines = [ln for ln in third.stderr.splitlines() if ln.startswith("jaxcc autotune:")]
    assert len(lines) == 1 and "device=gpu:Another Card" in lines[0], lines
    assert not lines[0].endswith("cached")
    devices = {r["device"] for r in store.list_decisions(str(cache))}
    assert devices == {f"gpu:{result['kind']}", "gpu:Another Card"}


def test_in_process_call_uses_the_gpu_model_key(unique_name):
    mod = jaxcc.load_cuda_inline(unique_name, TILED)
    x = jnp.ones(4096, jnp.float32)
    np.testing.assert_array_equal(mod.tiled_twice(x), x * 2)
    (record,) = [
        r for r in store.list_decisions(jaxcc.get_cache_dir()) if r["module"] == unique_name
    ]
    assert record["device"] == f"gpu:{jax.devices('gpu')[0].device_kind}"
    assert record["key"] == "float32[4096]"
