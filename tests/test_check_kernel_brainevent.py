"""No false alarm: brainevent 0.3.0's own operators (dense event matrix-vector and matrix-matrix
products, both orientations; the float JIT-uniform matrix-vector product), run on jaxcc through
the test shim, pass every row of check_kernel that applies, through `jaxcc check`
(tests/brainevent_on_jaxcc/check_ops.py declares them). Needs brainevent 0.3.0, brainstate and
numba (the Python >= 3.12 leg installs them); skipped elsewhere."""

import os
import subprocess
import sys

import pytest
from test_brainevent_on_jaxcc import brainevent_package

TESTS = os.path.dirname(os.path.abspath(__file__))


def test_brainevent_operators_pass_check_kernel(tmp_path):
    brainevent_package()  # skips without brainevent 0.3.0
    env = dict(os.environ, JAX_PLATFORMS="cpu", JAXCC_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=TESTS)  # fmt: skip
    env.pop("XLA_FLAGS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "jaxcc", "check", "brainevent_on_jaxcc.check_ops"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    out = proc.stdout
    assert proc.returncode == 0, out[-6000:] + proc.stderr[-3000:]
    assert "jaxcc check: 6 kernel(s) ok" in out, out[-3000:]
    # The rules brainevent gives its operators were exercised, not skipped.
    for row in ("jvp", "transpose", "vmap", "backends"):
        assert f"  {row}" in out
    assert out.count("  transpose    passed") == 6, out
    assert out.count("  backends     passed") == 4, out  # dense: numba and jax_raw on the CPU
    assert out.count("  vmap         passed") == 6, out


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
