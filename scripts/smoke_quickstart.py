"""Smoke test for a freshly installed jaxcc: the README quickstart, verbatim, then one
XLACustomKernel call under jit and vmap. Exits non-zero on any wrong answer.

    python scripts/smoke_quickstart.py [README.md]
"""

import atexit
import contextlib
import io
import re
import shutil
import sys
import tempfile
from pathlib import Path


def quickstart_source(readme: Path) -> str:
    """The first ```python block after the README's "## Quickstart" heading."""
    text = readme.read_text()
    section = text.split("\n## Quickstart", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    if match is None:
        raise SystemExit(f"smoke: no python block under '## Quickstart' in {readme}")
    return match.group(1)


def main() -> int:
    readme = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    import jax
    import jax.numpy as jnp
    import jaxlib
    import numpy as np

    import jaxcc

    # A private cache: the smoke test builds from scratch and leaves the user's cache alone.
    cache = tempfile.mkdtemp(prefix="jaxcc-smoke-")
    atexit.register(shutil.rmtree, cache, True)
    jaxcc.set_cache_dir(cache)
    print(
        f"smoke: Python {sys.version.split()[0]}, jax {jax.__version__}, "
        f"jaxlib {jaxlib.__version__}, jaxcc {jaxcc.__version__}"
    )

    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(quickstart_source(readme), f"{readme}:Quickstart", "exec"), namespace)
    lines = printed.getvalue().split("\n")
    expected = ["[1. 2. 3. 4.]", "[ 0. 10. 20. 30.]"]
    if lines[:2] != expected:
        print(f"smoke: the quickstart printed {lines[:2]}, expected {expected}", file=sys.stderr)
        return 1
    x = namespace["x"]
    np.testing.assert_array_equal(namespace["y"], np.asarray(x) + 1)
    print("smoke: README quickstart ran and printed", " ".join(lines[:2]))

    mod = jaxcc.load_cpp_inline(
        "smoke_ops",
        r"""
#include "jaxcc/jaxcc.h"
void mul(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out) {
  for (int64_t i = 0; i < out.numel(); ++i)
    out.data_ptr<float>()[i] = x.data_ptr<float>()[i] * y.data_ptr<float>()[i];
}
""",
        functions=["mul"],
    )
    mul = jaxcc.XLACustomKernel("smoke_mul")
    mul.def_cpp_kernel(lambda **params: mod.mul, vectorized=True)

    def call(a, b):
        return mul(a, b, outs=jax.ShapeDtypeStruct(a.shape, a.dtype))

    a = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    b = jnp.full((3, 4), 2.0, dtype=jnp.float32)
    np.testing.assert_array_equal(jax.jit(call)(a, b), np.asarray(a) * 2)
    np.testing.assert_array_equal(jax.jit(jax.vmap(call))(a, b), np.asarray(a) * 2)
    print("smoke: XLACustomKernel call under jit and vmap: correct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
