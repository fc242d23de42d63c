"""What a full check_kernel costs (issue 50 item 10): every row of a typical kernel (a row softmax
on float32[6, 10] with a JAX reference, its extra shapes derived), in fresh processes.

Run:  python benchmarks/bench_check_kernel.py [--rounds 3] [--plain] [--torch-python PATH]
(`--plain`: no reference=, so an older jaxcc can be timed with PYTHONPATH pointing at it.)
Beside it, torch's `torch.library.opcheck` on the equivalent PyTorch custom op (a row softmax
defined with `torch.library.custom_op`, a fake kernel and an autograd rule) in fresh processes
of `--torch-python` (default: build/venv-torch/bin/python when it exists, else this Python):
opcheck's first call and a second one. Skipped, with the reason printed, where torch does not
import.
Per round, three child processes: `cold` (an empty cache directory: the module and its debug
twin are built), `warm` (the same directory again: both load from the cache), and in the warm
process a second check (`again`: every jit and load already made). Timed: the check_kernel call
alone, and the whole process's load + check (`with load`), after `import jax, jaxcc`. Each row's
own time comes from timing the row functions in the probe. Medians printed, then JSON."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

PROBE = textwrap.dedent(
    r'''
    import json, sys, time
    import jax, numpy as np
    import jaxcc
    from jaxcc.check import check_kernel as ck

    SRC = r"""
    #include "jaxcc/jaxcc.h"
    #include <cmath>
    void softmax(const jaxcc::Tensor x, jaxcc::Tensor out) {
      const int64_t rows = x.size(0), cols = x.size(1);
      const float* a = x.data_ptr<float>();
      float* o = out.data_ptr<float>();
      for (int64_t r = 0; r < rows; ++r) {
        float m = -INFINITY, s = 0;
        for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, a[r * cols + c]);
        for (int64_t c = 0; c < cols; ++c) s += (o[r * cols + c] = std::exp(a[r * cols + c] - m));
        for (int64_t c = 0; c < cols; ++c) o[r * cols + c] /= s;
      }
    }
    """
    rows = {}
    for name, fn in list(ck.CHECKS.items()):
        def timed(subject, reference, fn=fn, name=name):
            t = time.perf_counter()
            try:
                return fn(subject, reference)
            finally:
                rows[name] = rows.get(name, 0.0) + time.perf_counter() - t
        ck.CHECKS[name] = timed
    start = time.perf_counter()
    mod = jaxcc.load_cpp_inline("bench_check", SRC, ["softmax"])
    loaded = time.perf_counter()
    x = np.random.default_rng(0).standard_normal((6, 10)).astype(np.float32)
    ref = {} if "--plain" in sys.argv else {"reference": lambda x: jax.nn.softmax(x, axis=-1)}
    report = jaxcc.check_kernel(mod.softmax, x, **ref)
    done = time.perf_counter()
    first_rows = dict(rows)
    rows.clear()
    again = time.perf_counter()
    report2 = jaxcc.check_kernel(mod.softmax, x, **ref)
    end = time.perf_counter()
    assert report.ok and report2.ok, str(report)
    print(json.dumps({"load": loaded - start, "check": done - loaded, "again": end - again,
                      "rows": first_rows, "rows_again": dict(rows), "devices": len(jax.devices()),
                      "jax": jax.__version__}))
    '''
)


# torch's opcheck on the same computation: a custom op (schema, fake tensor, autograd and AOT
# dispatch with dynamic shapes are what opcheck tests), on float32[6, 10].
TORCH_PROBE = textwrap.dedent(
    r"""
    import json, time
    start = time.perf_counter()
    import torch
    imported = time.perf_counter()

    @torch.library.custom_op("jaxcc_bench::softmax", mutates_args=())
    def softmax(x: torch.Tensor) -> torch.Tensor:
        e = (x - x.max(dim=-1, keepdim=True).values).exp()
        return e / e.sum(dim=-1, keepdim=True)

    @softmax.register_fake
    def _(x):
        return torch.empty_like(x)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return y * (grad - (grad * y).sum(dim=-1, keepdim=True))

    softmax.register_autograd(backward, setup_context=setup_context)
    x = torch.randn(6, 10, requires_grad=True)
    first = time.perf_counter()
    torch.library.opcheck(softmax, (x,))
    second = time.perf_counter()
    torch.library.opcheck(softmax, (x,))
    end = time.perf_counter()
    print(json.dumps({"import": imported - start, "opcheck": second - first,
                      "again": end - second, "torch": torch.__version__}))
    """
)
_VENV_TORCH = os.path.join(os.path.dirname(__file__), "..", "build", "venv-torch", "bin", "python")


def run_torch(python: str) -> dict | str:
    """opcheck's times from a fresh `python` process, or why it could not run."""
    try:
        proc = subprocess.run([python, "-c", TORCH_PROBE], capture_output=True, text=True,
                              timeout=600, check=False)  # fmt: skip
    except OSError as e:
        return f"cannot start {python}: {e}"
    if proc.returncode:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"torch's opcheck did not run under {python}: {tail[0]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(cache: str, plain: bool) -> dict:
    env = dict(os.environ, JAXCC_CACHE_DIR=cache)
    env.pop("XLA_FLAGS", None)
    command = [sys.executable, "-c", PROBE, *(["--plain"] if plain else [])]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600,
                          check=False)  # fmt: skip
    if proc.returncode:
        raise SystemExit(f"probe failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--plain", action="store_true", help="no reference= (to time a check_kernel without one)"
    )
    parser.add_argument(
        "--torch-python",
        default=_VENV_TORCH if os.path.exists(_VENV_TORCH) else sys.executable,
        help="the Python whose torch runs opcheck beside check_kernel",
    )
    args = parser.parse_args()
    cold, warm = [], []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="jaxcc-bench-check-") as cache:
            cold.append(run(cache, args.plain))
            warm.append(run(cache, args.plain))

    def median(runs, key):
        return statistics.median(r[key] for r in runs)

    print(f"jax {cold[0]['jax']}, {os.cpu_count()} CPUs, {args.rounds} rounds (medians, s)")
    for label, runs in (("cold  (empty cache)", cold), ("warm  (cached)     ", warm)):
        print(f"{label}: load {median(runs, 'load'):.2f}  check {median(runs, 'check'):.2f}")
    print(f"again (same process):           check {median(warm, 'again'):.2f}")
    for label, runs, key in (("cold", cold, "rows"), ("warm", warm, "rows"),
                             ("again", warm, "rows_again")):  # fmt: skip
        names = runs[0][key]
        shown = ", ".join(f"{n} {statistics.median(r[key][n] for r in runs):.2f}" for n in names)
        print(f"rows {label}: {shown}")
    torch_runs = [run_torch(args.torch_python) for _ in range(args.rounds)]
    failed = [r for r in torch_runs if isinstance(r, str)]
    if failed:
        print(f"torch opcheck: skipped ({failed[0]})")
        torch_runs = []
    else:
        print(f"torch {torch_runs[0]['torch']} opcheck (fresh process, after import torch "
              f"{median(torch_runs, 'import'):.2f}): first {median(torch_runs, 'opcheck'):.2f}"
              f"  again {median(torch_runs, 'again'):.2f}")  # fmt: skip
    print(json.dumps({"cold": cold, "warm": warm, "torch": torch_runs}))


if __name__ == "__main__":
    main()
