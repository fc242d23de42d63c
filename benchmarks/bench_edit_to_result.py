"""Edit-to-result against the compiler's floor (issue 39 item 5), side by side in one process.

Each round, interleaved:
  floor       g++ compiling the kernel unit jaxcc generates for the source, alone, with the very
              command jaxcc's build runs (the user's code under jaxcc's headers: the least any
              loader must compile); and the user's source file alone with the same flags (what
              compiling it by hand costs: its own `#include "jaxcc/jaxcc.h"` brings iostreams,
              which jaxcc's unit leaves out)
  reload      the notebook loop of issue 39 item 2: the source edited (a new constant), loaded
              again under the same name into the cache that holds the previous version, then
              called once (the first call traces and compiles the new target under jit)
  reload/ld   the same with the compiler's own linker (JAXCC_LINKER=system): what decision 161a
              changed
  first       the same source as the first module of an empty cache (a new cache directory; JAX
              already imported, as in a notebook)
  peers       with --peers PYTHON (an interpreter with brainevent 0.3, apache-tvm-ffi and
              jax-tvm-ffi): the same edit loop in a long-lived child process of that interpreter,
              one edit per round and tool, interleaved with jaxcc's. Neither peer can load edited
              code under a live name (brainevent refuses with KernelRegistrationError; a JAX FFI
              target cannot be replaced), so each edit is loaded under a new name, as their users
              must; each keeps its own cache warm between edits, as jaxcc's loop does

Where every millisecond of a reload and a first build goes: each ninja step (compiles, link),
ninja's own time around them, the core outside the build (request hashing, signature reading,
code generation, cache lookups and publish, dlopen), Python around the core (request, register
with JAX), and the first call.

Run:  python benchmarks/bench_edit_to_result.py [--rounds 9] [--peers /path/to/python3.12]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp

import jaxcc
from jaxcc import _core

SOURCE = r"""
#include "jaxcc/jaxcc.h"

void add_one(const jaxcc::Tensor x, jaxcc::Tensor out) {
    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + OFFSET;
}
"""

# The peers' edit loop: one JSON command per line on stdin ({"side": ..., "constant": ...}), one
# JSON result per line on stdout. JAX stays imported and each tool's cache warm, as in a notebook.
PEER_CHILD = r"""
import json, os, sys, tempfile, time
os.environ.setdefault("BRAINEVENT_CACHE_DIR", tempfile.mkdtemp())
os.environ.setdefault("TVM_FFI_CACHE_DIR", tempfile.mkdtemp())  # else ~/.cache/tvm-ffi, warm
import jax, jax.numpy as jnp
SOURCES = json.loads(sys.argv[1])
x = jnp.zeros(8, jnp.float32)
count = 0
def call(target):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.jit(lambda v: jax.ffi.ffi_call(target, out)(v))(x).block_until_ready()
for line in sys.stdin:
    command = json.loads(line)
    side, constant = command["side"], command["constant"]
    count += 1
    name = f"nb_{side}_{count}"
    start = time.perf_counter()
    if side == "brainevent":
        import brainevent
        brainevent.load_cpp_inline(name, SOURCES["jaxcc"].replace("OFFSET", f"{constant}.0f"),
                                   ["add_one"])
    else:
        import tvm_ffi.cpp, jax_tvm_ffi
        mod = tvm_ffi.cpp.load_inline(name, cpp_sources=SOURCES["tvm"].replace(
            "OFFSET", f"{constant}.0f"), functions=["add_one"], extra_cflags=["-O3"])
        jax_tvm_ffi.register_ffi_target(f"{name}.add_one", mod.add_one, platform="cpu")
    loaded = time.perf_counter()
    result = call(f"{name}.add_one")
    done = time.perf_counter()
    assert float(result[0]) == constant, (side, float(result[0]), constant)
    print(json.dumps({"load": loaded - start, "result": done - start}), flush=True)
"""

TVM_SOURCE = r"""
void add_one(tvm::ffi::TensorView x, tvm::ffi::TensorView out) {
    const float* in = static_cast<const float*>(x.data_ptr());
    float* o = static_cast<float*>(out.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + OFFSET;
}
"""
PEER_SOURCE = r"""
#include "brainevent/common.h"

void add_one(const BE::Tensor x, BE::Tensor out) {
    const float* in = static_cast<const float*>(x.data_ptr());
    float* o = static_cast<float*>(out.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + OFFSET;
}
"""


class PeerLoop:
    """The child process that runs the peers' edit loop."""

    def __init__(self, python: str):
        sources = json.dumps({"jaxcc": PEER_SOURCE, "tvm": TVM_SOURCE})
        self.child = subprocess.Popen(
            [python, "-W", "ignore", "-c", PEER_CHILD, sources],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def edit(self, side: str, constant: int) -> dict:
        self.child.stdin.write(json.dumps({"side": side, "constant": constant}) + "\n")
        self.child.stdin.flush()
        line = self.child.stdout.readline()
        if not line:
            raise RuntimeError(f"the peer child died during {side}'s edit")
        return json.loads(line)

    def close(self) -> None:
        self.child.stdin.close()
        self.child.wait(timeout=60)


_core_seconds: list[float] = []


def _timed_core_load():
    """Wraps the core's load so each load's core time is recorded (the rest is Python's)."""
    inner = _core.load_module

    def load_module(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            _core_seconds.append(time.perf_counter() - start)

    _core.load_module = load_module


def source_with(constant: int) -> str:
    return SOURCE.replace("OFFSET", f"{constant}.0f")


def floor_commands(work: str) -> tuple[list[str], str, str]:
    """The kernel unit jaxcc generates for SOURCE and the exact command its build compiles it
    with (read from the build.ninja of a build into `work`), and the user's source as a file."""
    build_dir = os.path.join(work, "floor_build")
    jaxcc.set_cache_dir(os.path.join(work, "floor_cache"))
    jaxcc.load_cpp_inline(
        "floor", source_with(1), ["add_one"], build_directory=build_dir, auto_register=False
    )
    ninja = open(os.path.join(build_dir, "build.ninja")).read()
    match = re.search(r"rule compile_0\n  command = (.*)\n", ninja)
    command = [w for w in shlex.split(match.group(1)) if w not in ("$out.d",)]
    command = [w for w in command if w not in ("-MMD", "-MF", "-c", "$in", "-o", "$out")]
    user_file = os.path.join(work, "user_source.cc")
    with open(user_file, "w") as f:
        f.write(source_with(1))
    return command, os.path.join(build_dir, "kernel_0.cc"), user_file


def compile_alone(command: list[str], source: str, out: str) -> float:
    start = time.perf_counter()
    subprocess.run([*command, "-c", source, "-o", out], check=True)
    return time.perf_counter() - start


def load_and_call(name: str, constant: int, x) -> dict:
    _core_seconds.clear()
    start = time.perf_counter()
    module = jaxcc.load_cpp_inline(name, source_with(constant), ["add_one"])
    loaded = time.perf_counter()
    result = module.add_one(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))
    result.block_until_ready()
    done = time.perf_counter()
    assert not module.cache_hit
    assert float(result[0]) == constant, "the edited kernel did not run"
    # build_steps: where an older jaxcc (measured with the same script) lacks it, no breakdown.
    steps = {s.output: (s.start_seconds, s.end_seconds) for s in getattr(module, "build_steps", [])}
    link = next((v for k, v in steps.items() if k.endswith(".so")), (0.0, 0.0))
    compiles = {k: v[1] - v[0] for k, v in steps.items() if k.endswith(".o")}
    core = sum(_core_seconds)
    return {
        "load": loaded - start,
        "result": done - start,
        "first call": done - loaded,
        "kernel unit": compiles.get("kernel_0.o", 0.0),
        "frame runtime": compiles.get("ffi_frame_runtime.o", 0.0),
        "wrapper": compiles.get("ffi_wrapper.o", 0.0),
        "link": link[1] - link[0],
        "ninja around steps": module.build_seconds - link[1],
        "core outside the build": core - module.build_seconds,
        "python around the core": (loaded - start) - core,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--peers", help="a Python with brainevent, tvm-ffi and jax-tvm-ffi")
    args = parser.parse_args()
    _timed_core_load()
    x = jnp.zeros(8, jnp.float32)
    samples: dict[str, list] = {k: [] for k in ("K", "U", "reload", "reload/ld", "first")}
    peers = PeerLoop(args.peers) if args.peers else None
    if peers:  # each peer's first load in its empty cache, then the loop edits
        samples.update({"brainevent": [], "tvm_ffi": []})
        for side in ("brainevent", "tvm_ffi"):
            peers.edit(side, 1)
    with tempfile.TemporaryDirectory() as work:
        command, kernel_unit, user_file = floor_commands(work)
        warm_cache = os.path.join(work, "warm")
        jaxcc.set_cache_dir(warm_cache)
        load_and_call("nb", 1, x)  # the version the loop edits
        constant = 1
        for r in range(args.rounds):
            samples["K"].append(compile_alone(command, kernel_unit, os.path.join(work, "k.o")))
            samples["U"].append(compile_alone(command, user_file, os.path.join(work, "u.o")))
            jaxcc.set_cache_dir(warm_cache)
            constant += 1
            samples["reload"].append(load_and_call("nb", constant, x))
            os.environ["JAXCC_LINKER"] = "system"
            try:
                constant += 1
                samples["reload/ld"].append(load_and_call("nb", constant, x))
            finally:
                del os.environ["JAXCC_LINKER"]
            jaxcc.set_cache_dir(os.path.join(work, f"empty{r}"))
            samples["first"].append(load_and_call(f"first{r}", 1, x))
            if peers:
                for side in ("brainevent", "tvm_ffi"):
                    samples[side].append(peers.edit(side, constant))
    if peers:
        peers.close()
    report(samples, args.rounds)


def report(samples: dict, rounds: int) -> None:
    floor = statistics.median(samples["K"])
    user_alone = statistics.median(samples["U"])
    print(f"# Edit-to-result, medians of {rounds} rounds")
    python = sys.version.split()[0]
    print(f"{platform.node()}, {os.cpu_count()} cores, jax {jax.__version__}, Python {python}")
    print()
    print("| | median | / kernel unit alone | / user's source alone |")
    print("|---|---|---|---|")
    ratio = floor / user_alone
    print(f"| kernel unit alone (the floor) | {floor * 1e3:.0f} ms | 1.00 | {ratio:.2f} |")
    print(f"| user's source alone | {user_alone * 1e3:.0f} ms | {user_alone / floor:.2f} | 1.00 |")
    labels = [
        k for k in ("reload", "reload/ld", "first", "brainevent", "tvm_ffi") if samples.get(k)
    ]
    for label in labels:
        for what in ("load", "result"):
            v = statistics.median(s[what] for s in samples[label])
            print(
                f"| {label}: {what} | {v * 1e3:.0f} ms | {v / floor:.2f} | {v / user_alone:.2f} |"
            )
    print()
    parts = [k for k in samples["reload"][0] if k not in ("load", "result")]
    print(
        "| where the time goes (ms, medians) | "
        + " | ".join(("reload", "reload/ld", "first"))
        + " |"
    )
    print("|---|---|---|---|")
    for part in parts:
        cells = [
            f"{statistics.median(s[part] for s in samples[label]) * 1e3:.1f}"
            for label in ("reload", "reload/ld", "first")
        ]
        print(f"| {part} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
