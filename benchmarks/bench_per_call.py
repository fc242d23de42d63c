"""Per-call time of a jitted jaxcc kernel against a hand-written XLA FFI handler, optionally also
against an older generated wrapper (e.g. the ffi.h-typed one before decision 70), at several
sizes, every side in one process with rounds interleaved.

Run:  python benchmarks/bench_per_call.py [--rounds N] [--old-bridge PATH] [--old-wrapper PATH]
                                          [--peers] [--declared]
  e.g. git show <commit>:include/jaxcc/detail/ffi_bridge.h > /tmp/old_ffi_bridge.h
       python benchmarks/bench_per_call.py --old-bridge /tmp/old_ffi_bridge.h
  --old-wrapper: the ffi_wrapper.cc an older jaxcc generated for this script's add_one (load it
  there with build_directory=...); it is linked with this jaxcc's kernel object.
Prints median µs per call and ratios to the hand-written handler; figures go to
benchmarks/RESULTS.md by hand. With --old-bridge it also times the conversion itself (XLA buffer
-> jaxcc::Tensor, `TensorFromBuffer`, what a generated handler runs once per tensor per call) in a
C++ loop, old against this bridge, with a short and a long parameter name: a per-call difference
of nanoseconds is far below the noise of a whole XLA call. With --peers it adds the same kernel
built by brainevent (`load_cpp_inline`, with -O3) and by TVM-FFI (`tvm_ffi.cpp.load_inline`,
-O3, registered through jax-tvm-ffi), where those packages are installed (brainevent 0.3 needs
Python >= 3.12: run this script from a virtual environment that has them and jaxcc).
With --declared it adds the same kernel loaded with declared dtypes (`arg:float32 ret:float32`),
whose handler checks each buffer's dtype when the call arrives (decision 180): "jaxcc declared /
jaxcc" is that check's cost per call (run it with an older jaxcc too: there the two handlers are
the same code, and the ratio is the noise).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
from bench_core import HAND_WRITTEN  # the same hand-written XLA FFI handler as bench_core
from peer_probes import JAXCC_SOURCE, TVM_SOURCE  # the kernel each peer compiles

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"

void add_one(const jaxcc::Tensor x, jaxcc::Tensor out) {
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + 1.0f;
}
"""


CONVERSION_LOOP = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include "jaxcc/detail/ffi_bridge.h"

namespace ffi = xla::ffi;

// ns per TensorFromBuffer(buffer, name), for a rank-1 float32 buffer; `name` comes from argv so
// the compiler cannot fold it.
int main(int argc, char** argv) {
  float data[16] = {};
  std::int64_t dims[1] = {16};
  XLA_FFI_Buffer raw{};
  raw.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  raw.dtype = XLA_FFI_DataType_F32;
  raw.data = data;
  raw.rank = 1;
  raw.dims = dims;
  const long iterations = std::atol(argv[2]);
  std::int64_t sink = 0;
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < iterations; ++i) {
    jaxcc::Tensor t = jaxcc::detail::TensorFromBuffer(ffi::AnyBuffer(&raw), argv[1]);
    sink += t.numel();
    asm volatile("" : : "r"(&t) : "memory");
  }
  auto stop = std::chrono::steady_clock::now();
  std::printf("%.3f %lld\n", std::chrono::duration<double, std::nano>(stop - start).count() /
                  iterations, static_cast<long long>(sink));
  return 0;
}
"""


def add_peers(sides: dict) -> None:
    """Adds brainevent's and TVM-FFI's build of add_one, each where it is installed."""
    try:
        import brainevent
    except ImportError:
        print("brainevent not installed: no brainevent column")
    else:
        brainevent.load_cpp_inline(
            "bench_per_call_be", JAXCC_SOURCE, ["add_one"], extra_cflags=["-O3"]
        )
        sides[f"brainevent {brainevent.__version__}"] = jax.jit(
            lambda v: jax.ffi.ffi_call(
                "bench_per_call_be.add_one", jax.ShapeDtypeStruct(v.shape, v.dtype)
            )(v)
        )
    try:
        import jax_tvm_ffi
        import tvm_ffi.cpp
    except ImportError:
        print("tvm_ffi / jax_tvm_ffi not installed: no TVM-FFI column")
    else:
        mod = tvm_ffi.cpp.load_inline(
            "bench_per_call_tvm",
            cpp_sources=TVM_SOURCE,
            functions=["add_one"],
            extra_cflags=["-O3"],
        )
        jax_tvm_ffi.register_ffi_target("bench_per_call_tvm.add_one", mod.add_one, platform="cpu")
        sides[f"TVM-FFI {tvm_ffi.__version__}"] = jax.jit(
            lambda v: jax.ffi.ffi_call(
                "bench_per_call_tvm.add_one", jax.ShapeDtypeStruct(v.shape, v.dtype)
            )(v)
        )


# jaxcc's flags for the wrapper unit (see docs/cache.md); the hand-written handler gets -O3.
WRAPPER_FLAGS = ["-std=c++17", "-O1", "-fPIC", "-fvisibility=hidden", "-DNDEBUG"]


def compile_shared(sources: list[str], flags: list[str], output: str) -> ctypes.CDLL:
    subprocess.run(["g++", *flags, "-shared", *sources, "-o", output], check=True)
    return ctypes.CDLL(output)


def build_sides(workdir: str, old_wrapper: str | None, declared: bool = False) -> dict:
    """name -> jitted add_one. "jaxcc" is the module as jaxcc builds it; "old wrapper" and "this
    wrapper" link jaxcc's kernel object with an older generated ffi_wrapper.cc and this one."""
    build = os.path.join(workdir, "build")
    mod = jaxcc.load_cpp_inline(
        "bench_per_call", SOURCE, ["add_one"], build_directory=build, force_rebuild=True
    )
    sides = {"jaxcc": jax.jit(mod.add_one)}
    if declared:
        typed = jaxcc.load_cpp_inline(
            "bench_per_call_declared",
            SOURCE,
            {"add_one": ["arg:float32", "ret:float32"]},
            build_directory=os.path.join(workdir, "build_declared"),
            force_rebuild=True,
        )
        sides["jaxcc declared"] = jax.jit(typed.add_one)
    includes = ["-isystem", jax.ffi.include_dir(), "-isystem", jaxcc.include_dir()]

    def register(name: str, lib: ctypes.CDLL, symbol: str) -> None:
        target = f"bench_per_call_{len(sides)}"
        jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(lib, symbol)), platform="cpu")
        sides[name] = jax.jit(
            lambda v, t=target: jax.ffi.ffi_call(t, jax.ShapeDtypeStruct(v.shape, v.dtype))(v)
        )

    hand_src = os.path.join(workdir, "hand.cc")
    with open(hand_src, "w") as f:
        f.write(HAND_WRITTEN)
    hand_flags = ["-std=c++17", "-O3", "-fPIC", "-fvisibility=hidden", "-DNDEBUG", *includes]
    register(
        "hand-written", compile_shared([hand_src], hand_flags, f"{workdir}/hand.so"), "HandAddOne"
    )
    if old_wrapper:
        # The same kernel object linked with an older generated wrapper (the bridge signature did
        # not change) and with this one: the two differ only in how they decode XLA's call frame.
        kernel_obj = os.path.join(build, "kernel_0.o")
        for name, wrapper in (
            ("old wrapper", old_wrapper),
            ("this wrapper", os.path.join(build, "ffi_wrapper.cc")),
        ):
            lib = compile_shared(
                [wrapper, kernel_obj],
                WRAPPER_FLAGS + includes,
                os.path.join(workdir, f"side{len(sides)}.so"),
            )
            register(name, lib, "jaxcc_ffi_add_one")
    return sides


def conversion_ns(workdir: str, old_bridge: str, rounds: int) -> None:
    """Times TensorFromBuffer in C++ (at the wrapper's -O1), old bridge against this one."""
    src = os.path.join(workdir, "conversion.cc")
    with open(src, "w") as f:
        f.write(CONVERSION_LOOP)
    includes = ["-isystem", jax.ffi.include_dir(), "-isystem", jaxcc.include_dir()]
    binaries = {}
    for side, extra in (("old", ["-I", os.path.join(workdir, "old_include")]), ("this", [])):
        binaries[side] = os.path.join(workdir, f"conversion_{side}")
        flags = WRAPPER_FLAGS + extra + includes
        subprocess.run(["g++", *flags, src, "-o", binaries[side]], check=True)
    print("\nTensorFromBuffer, ns per conversion (C++ loop, -O1, median of rounds interleaved)")
    for name in ("x", "input_features_batch"):  # within / beyond std::string's inline buffer
        samples = {side: [] for side in binaries}
        for _ in range(rounds):
            for side, binary in binaries.items():
                out = subprocess.run([binary, name, "20000000"], capture_output=True, text=True)
                samples[side].append(float(out.stdout.split()[0]))
        old, new = (statistics.median(samples[s]) for s in ("old", "this"))
        print(f"  name {name!r:24} old {old:7.2f} ns  this {new:7.2f} ns  this/old {new / old:.3f}")


def per_call_us(fn, x, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        y = fn(x)
    jax.block_until_ready(y)
    return (time.perf_counter() - t0) * 1e6 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--old-bridge", help="an ffi_bridge.h to compare with the installed one")
    parser.add_argument(
        "--old-wrapper", help="a generated ffi_wrapper.cc of add_one from an older jaxcc"
    )
    parser.add_argument("--peers", action="store_true", help="add brainevent and TVM-FFI")
    parser.add_argument(
        "--declared", action="store_true", help="add add_one with declared dtypes (decision 180)"
    )
    args = parser.parse_args()
    print(f"jax {jax.__version__}, jaxcc {jaxcc.__version__}, {os.cpu_count()} cores")
    workdir = tempfile.mkdtemp(prefix="jaxcc-per-call-")
    sides = build_sides(workdir, args.old_wrapper, args.declared)
    if args.peers:
        add_peers(sides)
    others = [name for name in sides if name != "hand-written"]
    header = ["floats", *[f"{name} µs" for name in sides], *[f"{n} / hand" for n in others]]
    if args.old_wrapper:
        header.append("this wrapper / old wrapper")
    if args.declared:
        header.append("declared / jaxcc")
    rows = []
    for size, calls in ((16, 2000), (4096, 1000), (65536, 300)):
        x = jnp.arange(size, dtype=jnp.float32)
        for fn in sides.values():
            np.testing.assert_array_equal(fn(x), np.arange(size, dtype=np.float32) + 1)
        samples = {name: [] for name in sides}
        names = list(sides)
        for r in range(args.rounds):  # interleaved, order rotated: drift hits every side alike
            for name in names[r % len(names) :] + names[: r % len(names)]:
                samples[name].append(per_call_us(sides[name], x, calls))
        med = {name: statistics.median(s) for name, s in samples.items()}
        fastest = {name: min(s) for name, s in samples.items()}
        print(
            f"{size} floats, fastest round µs: "
            + ", ".join(f"{n} {v:.2f}" for n, v in fastest.items())
        )
        row = [size, *[f"{v:.2f}" for v in med.values()]]
        row += [f"{med[n] / med['hand-written']:.3f}" for n in others]
        if args.old_wrapper:
            row.append(f"{med['this wrapper'] / med['old wrapper']:.3f}")
        if args.declared:
            row.append(f"{med['jaxcc declared'] / med['jaxcc']:.3f}")
        rows.append(row)
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    for row in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))
    if args.old_bridge:
        conversion_ns(workdir, args.old_bridge, args.rounds)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
