"""Per-call cost of the handler's check of declared dtypes (decision 180): the frame decoder every
generated handler calls (`RunFrameWith`, jaxcc/detail/ffi_frame.h, compiled at the frame runtime's
-O1 as jaxcc builds it), on a call frame of two float32 buffers built as XLA builds one, with the
FrameSpec of `add_one(const Tensor x, Tensor out)` without declared dtypes and with `arg:float32
ret:float32`, in a C++ loop. A whole jitted call (bench_per_call.py --declared) costs 7-30 µs and
moves by 10-20 % between runs on a shared machine, far above the nanoseconds measured here.

Run:  python benchmarks/bench_per_call_dtype.py [--rounds N] [--calls N]
Prints the median and fastest ns per decoded call of each spec, and the difference.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile

import jax

import jaxcc

RUNTIME = r"""
// The frame runtime unit as codegen::FrameRuntimeSource writes it for a plain CPU module.
#define JAXCC_DETAIL_NO_STD_COMPLEX 1
#define JAXCC_DETAIL_NO_OSTREAM 1
#include "jaxcc/detail/ffi_frame.h"
XLA_FFI_Error* jaxcc::detail::RunFrame(XLA_FFI_CallFrame* frame, const FrameSpec& spec,
                                       FrameBody body, FrameInstantiate instantiate,
                                       FrameSlots slots) noexcept {
  return RunFrameWith<NoCallScope, 0u>(frame, spec, body, instantiate, slots);
}
jaxcc::detail::FrameSiteSlot jaxcc::detail::frame_site_slot = nullptr;
"""

MAIN = r"""
// Two generated handlers of add_one: the spec without declared dtypes and with them.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include "jaxcc/detail/frame_entry.h"
#include "xla/ffi/api/c_api.h"
using namespace jaxcc::detail;
extern "C" __attribute__((noinline)) void Bridge(const FrameView& call, long* sink);
long g_sink = 0;
void Body(const FrameView& call) { Bridge(call, &g_sink); }
constexpr const char* kArgs[] = {"x"};
constexpr const char* kRets[] = {"out"};
constexpr FrameElement kDTypes[] = {FrameElement::kF32, FrameElement::kF32};
constexpr FrameSpec kPlain = {"add_one", 1, 1, 0, kArgs, kRets, nullptr, false, 0};
constexpr FrameSpec kDeclared = {"add_one", 1, 1, 0, kArgs, kRets, nullptr, false, 0,
                                 false, nullptr, false, FrameScratch::kNone, kDTypes};
__attribute__((noinline)) XLA_FFI_Error* HandlePlain(XLA_FFI_CallFrame* frame) {
  FrameTensorSlot args[1], rets[1];
  const void* attrs[1];
  return RunFrame(frame, kPlain, &Body, nullptr, {args, rets, attrs});
}
__attribute__((noinline)) XLA_FFI_Error* HandleDeclared(XLA_FFI_CallFrame* frame) {
  FrameTensorSlot args[1], rets[1];
  const void* attrs[1];
  return RunFrame(frame, kDeclared, &Body, nullptr, {args, rets, attrs});
}
int main(int argc, char** argv) {
  float in[16] = {}, out[16] = {};
  std::int64_t dims[1] = {16};
  XLA_FFI_Buffer x{}, y{};
  for (XLA_FFI_Buffer* b : {&x, &y}) {
    b->struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
    b->dtype = XLA_FFI_DataType_F32;
    b->rank = 1;
    b->dims = dims;
  }
  x.data = in;
  y.data = out;
  XLA_FFI_ArgType arg_types[1] = {XLA_FFI_ArgType_BUFFER};
  XLA_FFI_RetType ret_types[1] = {XLA_FFI_RetType_BUFFER};
  void* args[1] = {&x};
  void* rets[1] = {&y};
  XLA_FFI_Api api{};
  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.api = &api;
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, 1, arg_types, args};
  frame.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, 1, ret_types, rets};
  frame.attrs = {XLA_FFI_Attrs_STRUCT_SIZE, nullptr, 0, nullptr, nullptr, nullptr};
  auto handler = std::strcmp(argv[1], "declared") == 0 ? &HandleDeclared : &HandlePlain;
  const long calls = std::atol(argv[2]);
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) {
    if (handler(&frame) != nullptr) return 1;
  }
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start);
  std::printf("%.3f %ld\n", ns.count() / calls, g_sink);
}
"""

BRIDGE = r"""
// Stands in for the kernel unit's bridge: another unit, not inlined.
#include "jaxcc/detail/frame_entry.h"
extern "C" __attribute__((noinline)) void Bridge(const jaxcc::detail::FrameView&, long* sink) {
  ++*sink;
}
"""


def build(workdir: str) -> str:
    includes = ["-isystem", jaxcc.include_dir(), "-isystem", jax.ffi.include_dir()]
    flags = ["g++", "-std=c++17", "-fPIC", "-DNDEBUG", *includes]
    objects = []
    for name, text, level in (("runtime", RUNTIME, "-O1"), ("main", MAIN, "-O1"),
                              ("bridge", BRIDGE, "-O2")):  # fmt: skip
        source = os.path.join(workdir, f"{name}.cc")
        with open(source, "w") as f:
            f.write(text)
        objects.append(os.path.join(workdir, f"{name}.o"))
        subprocess.run([*flags, level, "-c", source, "-o", objects[-1]], check=True)
    binary = os.path.join(workdir, "bench")
    subprocess.run(["g++", *objects, "-o", binary], check=True)
    return binary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--calls", type=int, default=20_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        binary = build(workdir)
        samples = {"plain": [], "declared": []}
        for r in range(args.rounds):  # interleaved, order alternating
            for side in ("plain", "declared") if r % 2 == 0 else ("declared", "plain"):
                out = subprocess.run(
                    [binary, side, str(args.calls)], capture_output=True, text=True, check=True
                )
                samples[side].append(float(out.stdout.split()[0]))
    med = {side: statistics.median(v) for side, v in samples.items()}
    low = {side: min(v) for side, v in samples.items()}
    print(f"jax {jax.__version__}, jaxcc {jaxcc.__version__}, {os.cpu_count()} cores")
    for side in samples:
        print(f"  {side:9} median {med[side]:6.2f} ns, fastest {low[side]:6.2f} ns per call")
    print(
        f"  declared - plain: median {med['declared'] - med['plain']:+.2f} ns, fastest "
        f"{low['declared'] - low['plain']:+.2f} ns"
    )


if __name__ == "__main__":
    main()
