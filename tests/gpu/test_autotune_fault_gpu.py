"""A tuning variant that faults on the card (issue 51 item 7, decision 191): MODE 2 writes far
outside its output, an illegal address that poisons the CUDA context of the process it runs in.
Measured in the tuning child, it is excluded and named; the user's process, its context and
later GPU calls are untouched, and a second process reads the decision and never runs it. Runs
in scripts/gpu-session.sh's `autotune-fault` step; not yet run on a GPU."""

import json
import os
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from conftest import run_python  # noqa: E402

FAULTING = r"""
#include <cuda_runtime.h>
#include "jaxcc/jaxcc.h"

__global__ void twice_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (MODE == 2 && i == 0) y[n + (1 << 28)] = 1.0f;  // an illegal address
  if (i < n) y[i] = 2.0f * x[i];
}

// @BE twice arg ret stream tune="MODE=0,2,1"
void twice(const jaxcc::Tensor& x, jaxcc::Tensor& y, int64_t stream) {
  int n = static_cast<int>(x.numel());
  twice_kernel<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
}
"""


def test_a_variant_faulting_on_the_card_is_excluded_named_and_never_run_again(tmp_path):
    code = textwrap.dedent(f"""
        import json, jax, jax.numpy as jnp, numpy as np, jaxcc
        from jaxcc.tune import store
        mod = jaxcc.load_cuda_inline("gpu_fault_tune", {FAULTING!r})
        x = jnp.arange(1 << 16, dtype=jnp.float32)
        y = mod.twice(x)
        again = jax.jit(lambda v: v + 1)(x)  # this process's context is healthy
        (record,) = store.list_decisions(jaxcc.get_cache_dir())
        print("RESULT " + json.dumps({{
            "correct": bool(np.array_equal(np.asarray(y), np.asarray(x) * 2)),
            "healthy": bool(np.array_equal(np.asarray(again), np.asarray(x) + 1)),
            "excluded": record["excluded"], "chosen": record["chosen_text"]}}))
    """)
    env = {"JAXCC_CACHE_DIR": str(tmp_path / "cache"), "JAXCC_PRINT_AUTOTUNING": "1",
           "JAXCC_TUNE_BUDGET_S": "20"}  # fmt: skip
    first = run_python(code, env, timeout=280)
    assert first.returncode == 0, first.stderr[-3000:]
    result = json.loads(first.stdout.split("RESULT ", 1)[1])
    assert result["correct"] and result["healthy"], result
    assert list(result["excluded"]) == ["MODE=2"], result
    assert result["chosen"] in ("MODE=0", "MODE=1")
    second = run_python(code, env, timeout=200)
    assert second.returncode == 0, second.stderr[-3000:]
    lines = [ln for ln in second.stderr.splitlines() if ln.startswith("jaxcc autotune:")]
    # Read from the cache, or retimed once if the first was made under load: never running
    # MODE=2 again either way (decision 231).
    assert len(lines) == 1 and "MODE=2 (" in lines[0], lines
    assert lines[0].endswith("cached") or "retimed once" in lines[0], lines
