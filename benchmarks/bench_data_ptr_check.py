"""What data_ptr<T>()'s dtype check (decision 149) costs a kernel that calls it in its inner loop,
as the README quickstart's add_one does, against the same loop through the untyped data_ptr()
(`static_cast<float*>(x.data_ptr())`, exactly what data_ptr<float>() compiled to before the
check). Both kernels are in one module, so they share the wrapper and the call path; rounds are
interleaved in one process.

Run:  python benchmarks/bench_data_ptr_check.py [--rounds N] [--sizes 16,4096,1048576]
Prints the median and the fastest round's µs per jitted call of each and checked/unchecked, then
the same two kernels called directly from a C++ loop (g++ -O3, jaxcc's flags for user code; the
fastest of the rounds, which a busy host can only slow down); figures go to
benchmarks/RESULTS.md by hand. The handler's own per-call cost (the parameter name stored in
each Tensor) is bench_per_call.py's to measure, against a build of the previous commit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time

import jax
import jax.numpy as jnp

import jaxcc

SOURCE = r"""
#include "brainevent/common.h"

// The README quickstart: typed data_ptr in the inner loop, checked.
void add_one(const BE::Tensor x, BE::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i)
        out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1.0f;
}

// The same loop unchecked: what data_ptr<float>() was before the check.
void add_one_unchecked(const BE::Tensor x, BE::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i)
        static_cast<float*>(out.data_ptr())[i] = static_cast<float*>(x.data_ptr())[i] + 1.0f;
}
"""


KERNEL_LOOP = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
__attribute__((noinline)) void add_one(const BE::Tensor x, BE::Tensor out);
__attribute__((noinline)) void add_one_unchecked(const BE::Tensor x, BE::Tensor out);
// argv: size, calls per round, rounds. Prints the fastest round's ns per call of each kernel,
// rounds interleaved.
int main(int argc, char** argv) {
  const std::int64_t n = std::atoll(argv[1]);
  const long calls = std::atol(argv[2]), rounds = std::atol(argv[3]);
  std::vector<float> in(n, 1.0f), out(n);
  BE::Tensor x(in.data(), &n, 1, BE::DType::Float32), y(out.data(), &n, 1, BE::DType::Float32);
  double best[2] = {1e300, 1e300};
  for (long r = 0; r < rounds; ++r) {
    for (int side = 0; side < 2; ++side) {
      auto start = std::chrono::steady_clock::now();
      for (long i = 0; i < calls; ++i) side ? add_one_unchecked(x, y) : add_one(x, y);
      double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() -
                                                            start).count() / calls;
      if (ns < best[side]) best[side] = ns;
    }
  }
  std::printf("%.2f %.2f %g\n", best[0], best[1], static_cast<double>(out[n - 1]));
}
"""


def kernel_loop(sizes: list[int], rounds: int) -> None:
    """The two kernels called from C++ (no XLA), fastest round of each."""
    with tempfile.TemporaryDirectory() as tmp:
        kernels, main = os.path.join(tmp, "kernels.cc"), os.path.join(tmp, "main.cc")
        with open(kernels, "w") as f:
            f.write(SOURCE)
        with open(main, "w") as f:
            f.write('#include "brainevent/common.h"\n' + KERNEL_LOOP)
        binary = os.path.join(tmp, "loop")
        flags = ["-std=c++17", "-O3", "-DNDEBUG", "-I", jaxcc.include_dir()]
        subprocess.run(["g++", *flags, kernels, main, "-o", binary], check=True)
        print("the kernels alone, called from C++ (-O3), fastest round, ns per call")
        for size in sizes:
            calls = max(10, min(200_000, 50_000_000 // max(size, 1)))
            out = subprocess.run(
                [binary, str(size), str(calls), str(rounds)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            checked, unchecked = (float(v) for v in out.stdout.split()[:2])
            print(
                f"  {size:>8} floats: checked {checked:11.2f} ns  unchecked {unchecked:11.2f} ns"
                f"  checked/unchecked {checked / unchecked:.3f}"
            )


def per_call_us(fn, x, calls: int) -> float:
    y = fn(x)
    jax.block_until_ready(y)
    t0 = time.perf_counter()
    for _ in range(calls):
        y = fn(x)
    jax.block_until_ready(y)
    return (time.perf_counter() - t0) * 1e6 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--sizes", default="16,4096,1048576")
    args = parser.parse_args()
    mod = jaxcc.load_cpp_inline("bench_data_ptr_check", SOURCE, ["add_one", "add_one_unchecked"])
    sides = {"checked": jax.jit(mod.add_one), "unchecked": jax.jit(mod.add_one_unchecked)}
    print(f"jaxcc {jaxcc.__version__}, jax {jax.__version__}; median µs per jitted call")
    sizes = [int(s) for s in args.sizes.split(",")]
    for size in sizes:
        x = jnp.arange(size, dtype=jnp.float32)
        calls = max(20, min(5000, 20_000_000 // max(size, 1) // 4))
        samples = {name: [] for name in sides}
        for fn in sides.values():  # warm-up
            per_call_us(fn, x, calls // 4 + 1)
        for r in range(args.rounds):
            order = list(sides.items()) if r % 2 == 0 else list(reversed(sides.items()))
            for name, fn in order:
                samples[name].append(per_call_us(fn, x, calls))
        checked, unchecked = (statistics.median(samples[n]) for n in ("checked", "unchecked"))
        fast_c, fast_u = (min(samples[n]) for n in ("checked", "unchecked"))
        print(
            f"  {size:>8} floats: checked {checked:9.2f} µs  unchecked {unchecked:9.2f} µs  "
            f"checked/unchecked {checked / unchecked:.3f}; fastest rounds {fast_c:.2f} / "
            f"{fast_u:.2f} µs = {fast_c / fast_u:.3f}"
        )
    kernel_loop(sizes, args.rounds)


if __name__ == "__main__":
    main()
