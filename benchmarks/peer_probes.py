"""The code bench_peers.py runs in child processes, one tool or all three in each: the shared
kernel sources, the fresh-process load probe, the per-call probe (dispatched calls or calls
inside one jitted loop) and the eager XLACustomKernel probe. Each prints one JSON line."""

import textwrap

JAXCC_SOURCE = r"""
#include "brainevent/common.h"
void add_one(const BE::Tensor x, BE::Tensor out) {
  const float* in = static_cast<const float*>(x.data_ptr());
  float* o = static_cast<float*>(out.data_ptr());
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = in[i] + 1.0f;
}
"""
TVM_SOURCE = r"""
void add_one(tvm::ffi::TensorView x, tvm::ffi::TensorView out) {
  const float* in = static_cast<const float*>(x.data_ptr());
  float* o = static_cast<float*>(out.data_ptr());
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = in[i] + 1.0f;
}
"""

# One probe per process: argv = side, action (import | load), cache dir, "O3" or "default".
# Prints one JSON line. The tool's import is timed apart from the load.
PROBE = textwrap.dedent(
    """
    import json, os, sys, time
    import jax
    side, action, cache, flags = sys.argv[1:5]
    src = sys.stdin.read()
    cflags = ["-O3"] if flags == "O3" else None
    t0 = time.perf_counter()
    if side == "jaxcc":
        import jaxcc
    elif side == "brainevent":
        import brainevent
    else:
        import tvm_ffi.cpp, jax_tvm_ffi
    t1 = time.perf_counter()
    if action == "load":
        if side == "jaxcc":  # its cache directory comes from $JAXCC_CACHE_DIR, as brainevent's
            extra = {"extra_cflags": cflags} if cflags else {}
            jaxcc.load_cpp_inline("peer_add_one", src, ["add_one"], **extra)
        elif side == "brainevent":
            extra = {"extra_cflags": cflags} if cflags else {}
            brainevent.load_cpp_inline("peer_add_one", src, ["add_one"], **extra)
        else:
            mod = tvm_ffi.cpp.load_inline("peer_add_one", cpp_sources=src, functions=["add_one"],
                                          extra_cflags=cflags, build_directory=cache)
            jax_tvm_ffi.register_ffi_target("peer_add_one.add_one", mod.add_one, platform="cpu")
    t2 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "load": t2 - t1}))
    """
)

# Every side in one process, jitted ffi_call per side, timed interleaved at every size.
PER_CALL = textwrap.dedent(
    """
    import json, sys, time, tempfile
    import jax, jax.numpy as jnp
    jax_src, tvm_src, rounds, calls = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    sizes = [int(s) for s in sys.argv[5].split(",")]
    loop = int(sys.argv[6])  # 0: one dispatch per call; N: N calls in one jitted fori_loop
    sides = {}
    def call_of(target):
        shape = lambda v: jax.ShapeDtypeStruct(v.shape, v.dtype)
        if loop:
            body = lambda i, a: jax.ffi.ffi_call(target, shape(a))(a)
            return jax.jit(lambda v: jax.lax.fori_loop(0, loop, body, v))
        return jax.jit(lambda v: jax.ffi.ffi_call(target, shape(v))(v))
    try:
        import jaxcc
        jaxcc.set_cache_dir(tempfile.mkdtemp())
        jaxcc.load_cpp_inline("pc_jaxcc", jax_src, ["add_one"], extra_cflags=["-O3"])
        sides["jaxcc"] = call_of("pc_jaxcc.add_one")
    except ImportError:
        pass
    try:
        import brainevent
        brainevent.load_cpp_inline("pc_be", jax_src, ["add_one"], extra_cflags=["-O3"])
        sides["brainevent"] = call_of("pc_be.add_one")
    except ImportError:
        pass
    try:
        import tvm_ffi.cpp, jax_tvm_ffi
        mod = tvm_ffi.cpp.load_inline("pc_tvm", cpp_sources=tvm_src, functions=["add_one"],
                                      extra_cflags=["-O3"], build_directory=tempfile.mkdtemp())
        jax_tvm_ffi.register_ffi_target("pc_tvm.add_one", mod.add_one, platform="cpu")
        sides["tvm_ffi"] = call_of("pc_tvm.add_one")
    except ImportError:
        pass
    out = {}
    for n in sizes:
        x = jnp.arange(n, dtype=jnp.float32)
        for name, fn in sides.items():  # correct, and compiled before timing
            assert float(fn(x)[-1]) == n - 1 + max(loop, 1), name
        samples = {name: [] for name in sides}
        names = list(sides)
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                fn = sides[name]
                t = time.perf_counter()
                for _ in range(1 if loop else calls):
                    y = fn(x)
                jax.block_until_ready(y)
                samples[name].append((time.perf_counter() - t) / (loop or calls))
        out[str(n)] = samples
    print(json.dumps(out))
    """
)

EAGER = textwrap.dedent(
    """
    import json, sys, time, tempfile
    import jax, jax.numpy as jnp, jaxcc
    src, rounds, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    jaxcc.set_cache_dir(tempfile.mkdtemp())
    module = jaxcc.load_cpp_inline("eager_peer", src, ["add_one"], extra_cflags=["-O3"])
    kernel = jaxcc.XLACustomKernel("eager_peer_add_one")
    kernel.def_cpp_kernel(lambda **p: module.add_one)
    x = jnp.arange(16, dtype=jnp.float32)
    outs = jax.ShapeDtypeStruct(x.shape, x.dtype)
    direct = jax.ffi.ffi_call(module.target_name("add_one"), outs)
    sides = {"ffi_call (eager)": lambda: direct(x), "XLACustomKernel": lambda: kernel(x, outs=outs)}
    samples = {k: [] for k in sides}
    for fn in sides.values():
        jax.block_until_ready(fn())
    for r in range(rounds):
        for name in list(sides)[r % 2:] + list(sides)[:r % 2]:
            fn = sides[name]
            t = time.perf_counter()
            for _ in range(calls):
                y = fn()
            jax.block_until_ready(y)
            samples[name].append((time.perf_counter() - t) / calls)
    print(json.dumps(samples))
    """
)
