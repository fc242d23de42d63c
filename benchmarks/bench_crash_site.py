"""Cost of the crash report's mark on each call (decision 150b): a generated body with and without
`FrameSiteScope` around its bridge call, in a C++ loop, built as jaxcc builds them (the body at the
wrapper's -O1, the slot an initial-exec thread-local of another shared library, reached through
the accessor pointer the loader hands over). The whole per-call benchmark (bench_per_call.py)
cannot resolve nanoseconds on a shared machine: its rounds move by 20% between runs.

Run:  python benchmarks/bench_crash_site.py [--rounds N] [--calls N]
Prints the median ns per call of each body and their difference: without the mark, with decision
150b's slot, and with decision 182's (a row of the process-wide table of running kernels).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile

import jaxcc

CORE = r"""
// Stands in for _core: the slot and its accessor. SiteSlot is decision 150b's (the slot itself
// an initial-exec thread-local); TableSlot is decision 182's (src/loader/running_kernels.cc: the
// thread's row of a process-wide table, its address in an initial-exec thread-local, claimed on
// the thread's first call).
struct Site;
__attribute__((tls_model("initial-exec"))) thread_local const Site* t_site = nullptr;
extern "C" __attribute__((visibility("default"))) const Site** SiteSlot() { return &t_site; }
struct alignas(64) Row { const Site* volatile site; bool owned; };
Row g_rows[1024];
__attribute__((tls_model("initial-exec"))) thread_local const Site** t_slot = nullptr;
__attribute__((noinline)) const Site** Claim() {
  g_rows[0].owned = true;
  t_slot = const_cast<const Site**>(&g_rows[0].site);
  return t_slot;
}
extern "C" __attribute__((visibility("default"))) const Site** TableSlot() {
  const Site** slot = t_slot;
  return __builtin_expect(slot != nullptr, 1) ? slot : Claim();
}
"""

BRIDGE = r"""
// Stands in for the kernel unit's bridge: not inlined into the body, as in a module.
extern "C" __attribute__((noinline)) void bridge(long* sink) { ++*sink; }
"""

BODIES = r"""
// The generated bodies, with and without the mark, and the runtime's definition of the slot.
#include "jaxcc/detail/crash_site.h"
jaxcc::detail::FrameSiteSlot jaxcc::detail::frame_site_slot = nullptr;
extern "C" void bridge(long* sink);
constexpr jaxcc::detail::FrameCrashSite kSite = {"bench", "f", "<bench>"};
extern "C" void BodyPlain(long* sink) { bridge(sink); }
extern "C" void BodyMarked(long* sink) {
  jaxcc::detail::FrameSiteScope site(&kSite);
  bridge(sink);
}
extern "C" void Attach(jaxcc::detail::FrameSiteSlot slot) { jaxcc::detail::frame_site_slot = slot; }
"""

MAIN = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
struct Site;
extern "C" const Site** SiteSlot();
extern "C" const Site** TableSlot();
extern "C" void BodyPlain(long*);
extern "C" void BodyMarked(long*);
extern "C" void Attach(const Site** (*)());
int main(int argc, char** argv) {
  Attach(std::strcmp(argv[1], "table") == 0 ? &TableSlot : &SiteSlot);
  void (*body)(long*) = std::strcmp(argv[1], "plain") != 0 ? &BodyMarked : &BodyPlain;
  const long calls = std::atol(argv[2]);
  long sink = 0;
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) body(&sink);
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start);
  std::printf("%.3f %ld\n", ns.count() / calls, sink);
}
"""


def build(workdir: str) -> str:
    def write(name, text):
        path = os.path.join(workdir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    common = ["g++", "-std=c++17", "-fPIC", "-fvisibility=hidden", "-shared"]
    core = os.path.join(workdir, "libcore.so")
    subprocess.run([*common, "-O2", write("core.cc", CORE), "-o", core], check=True)
    module = os.path.join(workdir, "libmodule.so")
    bodies, bridge = write("bodies.cc", BODIES), write("bridge.cc", BRIDGE)
    # The body at the wrapper's -O1; exported so the driver can pick one.
    subprocess.run(
        [*common[:-1], "-O1", "-fvisibility=default", "-c", bodies, "-o", f"{workdir}/b.o",
         "-isystem", jaxcc.include_dir()],
        check=True,
    )  # fmt: skip
    subprocess.run([*common[:-1], "-O2", "-c", bridge, "-o", f"{workdir}/r.o"], check=True)
    subprocess.run(["g++", "-shared", f"{workdir}/b.o", f"{workdir}/r.o", "-o", module], check=True)
    binary = os.path.join(workdir, "bench")
    subprocess.run(
        ["g++", "-O2", write("main.cc", MAIN), module, core, "-o", binary,
         f"-Wl,-rpath,{workdir}"],
        check=True,
    )  # fmt: skip
    return binary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=50_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        binary = build(workdir)
        samples = {"plain": [], "marked": [], "table": []}
        sides = list(samples)
        for r in range(args.rounds):  # interleaved, order rotated
            for side in sides[r % 3 :] + sides[: r % 3]:
                out = subprocess.run(
                    [binary, side, str(args.calls)], capture_output=True, text=True
                )
                samples[side].append(float(out.stdout.split()[0]))
    plain, marked, table = (statistics.median(samples[s]) for s in ("plain", "marked", "table"))
    print(
        f"body without the mark {plain:.2f} ns, with it {marked:.2f} ns: +{marked - plain:.2f} ns;"
        f" with the table's slot (decision 182) {table:.2f} ns: +{table - plain:.2f} ns"
    )


if __name__ == "__main__":
    main()
