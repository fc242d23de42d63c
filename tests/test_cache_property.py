"""Property (issue 37, decision 146): whatever sequence of edits a user makes to a module's
source, its header (with or without keeping the header's size and mtime), the include path (a new
header that shadows the one read, and its removal) and its `-D` flags, a load from the cache
returns what a fresh build in an empty cache returns. Real g++ builds, one process per step (a
process keeps the modules it loaded), bounded to a few minutes.

A fresh build's answer depends only on the files' contents and the flags, so it is made once per
distinct content in the session (FRESH, decision 256): every example starts from the same files,
whose cached load in an empty cache is itself a cold build, and draws repeat contents (an edit to
the value already there); such a step compares its cached load with the fresh build made
earlier. The cached load, the one under test, still runs in its own process at every step."""

import json
import os
import textwrap

import pytest
from conftest import run_python
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.slow

SOURCE = r"""
#include "jaxcc/jaxcc.h"
#include "k.h"
#ifndef DEF_C
#define DEF_C 0
#endif
#define SRC_C {src}

void kernel_value(const jaxcc::Tensor x, jaxcc::Tensor out) {{
  out.data_ptr<float>()[0] = x.data_ptr<float>()[0] + SRC_C + 1000.0f * HDR_C + 1e6f * DEF_C;
}}
"""

# One process per step: the cached load, then a fresh build of the same files in an empty cache
# under another target prefix; both results and the model's answer are compared by the test.
STEP = textwrap.dedent(
    """
    import json, sys
    import jax.numpy as jnp
    import jaxcc
    source, cache, fresh, kwargs = json.loads(sys.argv[1])
    x = jnp.zeros(1, jnp.float32)
    jaxcc.set_cache_dir(cache)
    cached = jaxcc.load_cpp_file(source, functions=["kernel_value"], **kwargs)
    results = [float(cached.kernel_value(x)[0]), None]
    if fresh is not None:
        jaxcc.set_cache_dir(fresh)
        new = jaxcc.load_cpp_file(source, functions=["kernel_value"], target_prefix="fresh", **kwargs)
        results[1] = float(new.kernel_value(x)[0])
    print(json.dumps(results))
    """
)

# What a fresh build in an empty cache returned, by Module.contents(), for this session.
FRESH = {}


def header_text(value):
    # Every value below 100 the same size, and decimal: a leading 0 would make 08 and 09 invalid
    # octal literals (the drawn case that found it: a shadowing header with 8).
    return f"#define HDR_C (1{value:02d} - 100)\n"


edits = st.one_of(
    st.tuples(st.just("source"), st.integers(0, 99)),
    st.tuples(st.just("header"), st.integers(0, 99), st.booleans()),
    st.tuples(st.just("shadow_vendor"), st.integers(0, 99)),
    st.tuples(st.just("shadow_source_dir"), st.integers(0, 99)),
    st.tuples(st.just("unshadow"), st.just(0)),
    st.tuples(st.just("flag"), st.integers(0, 9)),
)


class Module:
    """The files of one module, and what a correct build of them computes."""

    def __init__(self, root):
        self.root = root
        self.src, self.vendor, self.inc = root / "src", root / "vendor", root / "inc"
        for d in (self.src, self.vendor, self.inc):
            d.mkdir()
        self.source = self.src / "kernel.cc"
        self.src_c, self.hdr_c, self.def_c = 0, 0, None
        self.shadows = {}  # directory -> HDR_C of the shadowing k.h there
        self.write_source(0)
        (self.inc / "k.h").write_text(header_text(0))

    def write_source(self, value):
        self.src_c = value
        self.source.write_text(SOURCE.format(src=value))

    def apply(self, edit):
        kind, value, *rest = edit
        if kind == "source":
            self.write_source(value)
        elif kind == "header":
            header = self.inc / "k.h"
            before = header.stat()
            header.write_text(header_text(value))
            if rest[0]:  # as `cp -p` leaves it: same size, the old mtime
                os.utime(header, ns=(before.st_atime_ns, before.st_mtime_ns))
            self.hdr_c = value
        elif kind in ("shadow_vendor", "shadow_source_dir"):
            where = self.vendor if kind == "shadow_vendor" else self.src
            (where / "k.h").write_text(header_text(value))
            self.shadows[where] = value
        elif kind == "unshadow":
            for where in list(self.shadows):
                (where / "k.h").unlink()
                del self.shadows[where]
        elif kind == "flag":
            self.def_c = value

    def contents(self):
        """Everything a build of the module reads: the source, each k.h and the flag."""
        shadows = tuple(self.shadows.get(d) for d in (self.src, self.vendor))
        return (self.src_c, shadows, self.hdr_c, self.def_c)

    def expected(self):
        # The source's own directory is searched first, then vendor, then inc.
        header = next(
            (self.shadows[d] for d in (self.src, self.vendor) if d in self.shadows), self.hdr_c
        )
        return self.src_c + 1000.0 * header + 1e6 * (self.def_c or 0)

    def kwargs(self):
        flags = [] if self.def_c is None else [f"-DDEF_C={self.def_c}"]
        return {"extra_include_paths": [str(self.vendor), str(self.inc)], "extra_cflags": flags}


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(edits, min_size=1, max_size=4))
def test_every_load_after_any_edits_equals_a_fresh_build(tmp_path_factory, steps):
    root = tmp_path_factory.mktemp("module")
    module = Module(root)
    cache = root / "cache"
    for i, edit in enumerate([("source", 0), *steps]):
        if i:
            module.apply(edit)
        contents = module.contents()
        fresh = None if contents in FRESH else str(root / f"fresh{i}")
        arg = json.dumps([str(module.source), str(cache), fresh, module.kwargs()])
        result = run_python(STEP.replace("sys.argv[1]", repr(arg)))
        assert result.returncode == 0, result.stderr[-3000:]
        cached, new = json.loads(result.stdout.strip().splitlines()[-1])
        new = FRESH.setdefault(contents, new)
        assert cached == new, (steps[:i], cached, new)
        assert new == module.expected(), (steps[:i], new, module.expected())
