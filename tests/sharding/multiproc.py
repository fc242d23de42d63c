"""A multi-process jax.distributed job on 127.0.0.1 (issue 12 item 5).

`python multiproc.py job N CACHE_DIR` starts N worker processes (2 CPU devices each) that load
the same jaxcc module into one shared cache directory and run a row kernel with a sharding rule
on an array sharded across every process. The C++ compiler is a wrapper script that logs each
compile, so the number of builds is counted at the compiler. Every child has a hard timeout and
is killed on failure; the job prints one JSON line and exits."""

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEVICES_PER_PROCESS = 2
ROWS_PER_DEVICE = 4
COLS = 6


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def counting_compiler(directory: str, log: str) -> str:
    """A CXX that appends its arguments to `log`, then runs the real g++."""
    real = os.environ.get("CXX") or "g++"
    path = os.path.join(directory, "cxx-counting.sh")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\necho "$@" >> "{log}"\nexec {real} "$@"\n')
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def job(n: int, cache_dir: str, timeout: float = 240.0) -> dict:
    scratch = tempfile.mkdtemp(prefix="jaxcc-mp-")
    log = os.path.join(scratch, "compiles.log")
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    env.update({
        "CXX": counting_compiler(scratch, log),
        "JAXCC_CACHE_DIR": cache_dir,
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={DEVICES_PER_PROCESS}",
        "JAX_PLATFORMS": "cpu",
    })  # fmt: skip
    port = free_port()
    started = time.monotonic()
    procs = [
        subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "worker", str(i), str(n), str(port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )  # fmt: skip
        for i in range(n)
    ]
    outputs = []
    try:
        for p in procs:
            left = max(1.0, timeout - (time.monotonic() - started))
            out, err = p.communicate(timeout=left)
            outputs.append((p.returncode, out, err))
    except subprocess.TimeoutExpired:
        outputs = None
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    lines = open(log).read().splitlines() if os.path.exists(log) else []
    shutil.rmtree(scratch, ignore_errors=True)  # the suite leaves nothing in $TMPDIR (issue 48)
    kernel_compiles = [ln for ln in lines if " -c " in f" {ln} " and "kernel_0" in ln]
    result = {"seconds": time.monotonic() - started, "timed_out": outputs is None,
              "kernel_compiles": len(kernel_compiles), "compiler_calls": len(lines),
              "workers": []}  # fmt: skip
    for rc, out, err in outputs or []:
        found = [ln for ln in out.splitlines() if ln.startswith("WORKER ")]
        result["workers"].append(json.loads(found[-1][7:]) if rc == 0 and found
                                 else {"rc": rc, "stderr": err[-2000:]})  # fmt: skip
    return result


def worker(process_id: int, n: int, port: int) -> None:
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=n,
                               process_id=process_id, initialization_timeout=60)  # fmt: skip
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    sys.path.insert(0, HERE)
    import kernels

    import jaxcc

    m = jaxcc.load_cpp_inline("mp_ops", kernels.SOURCE, ["row_norm"])
    devices = jax.devices()
    mesh = jax.make_mesh((len(devices),), ("x",))
    rows = ROWS_PER_DEVICE * len(devices)
    full = np.arange(1, rows * COLS + 1, dtype=np.float32).reshape(rows, COLS)
    sharding = NamedSharding(mesh, P("x", None))
    x = jax.make_array_from_callback(full.shape, sharding, lambda index: full[index])
    f = jax.jit(m.row_norm)
    y = f(x)
    expected = full / full.sum(1, keepdims=True)
    local_ok = all(np.allclose(np.asarray(s.data), expected[s.index], rtol=1e-6)
                   for s in y.addressable_shards)  # fmt: skip
    total = float(jax.jit(jnp.sum)(y))  # a cross-process reduction of the kernel's output
    hlo = f.lower(x).compile().as_text()
    print("WORKER " + json.dumps({
        "process": process_id, "global_devices": len(devices),
        "local_devices": len(jax.local_devices()), "local_ok": bool(local_ok),
        "total": total, "expected_total": float(expected.sum()),
        "spec": [None if e is None else str(e) for e in y.sharding.spec],
        "all_gather": hlo.count("all-gather"), "cache_hit": m.cache_hit,
    }), flush=True)  # fmt: skip
    jax.distributed.shutdown()


if __name__ == "__main__":
    if sys.argv[1] == "worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        print("JOB " + json.dumps(job(int(sys.argv[2]), sys.argv[3])))
