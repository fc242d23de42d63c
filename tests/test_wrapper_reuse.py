"""Editing a kernel body reuses the FFI wrapper object of the previous build (docs/cache.md,
"Reused wrapper objects"): each load runs in a fresh process, as when a user edits and reruns."""

import json
import os
import subprocess
import sys

LOAD = r"""
import json, sys
import jax.numpy as jnp
import jaxcc
source = sys.argv[2]
mod = jaxcc.load_cpp_inline(sys.argv[1], source, ["scale"], force_rebuild=sys.argv[3] == "1")
out = mod.scale(jnp.arange(4, dtype=jnp.float32), factor=2.0)
print(json.dumps({"hit": mod.cache_hit, "reused": mod.wrapper_reused, "units": mod.objects_reused,
                  "out": [float(v) for v in out]}))
"""

BODY = r"""
#include "jaxcc/jaxcc.h"
void scale(const jaxcc::Tensor x, jaxcc::Tensor out, float factor) {
  for (int64_t i = 0; i < x.numel(); ++i)
    out.data_ptr<float>()[i] = x.data_ptr<float>()[i] * factor + OFFSET;
}
"""


def load(name, offset, force=False, attr_type="float"):
    source = BODY.replace("OFFSET", f"{offset}.0f").replace("float factor", f"{attr_type} factor")
    result = subprocess.run(
        [sys.executable, "-c", LOAD, name, source, "1" if force else "0"],
        capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def objects_dir(cache):
    return cache / ".objects"


def test_an_edited_body_links_the_previous_wrapper_object(fresh_cache, unique_name):
    first = load(unique_name, 0)
    assert first == {"hit": False, "reused": False, "units": 0, "out": [0.0, 2.0, 4.0, 6.0]}
    # Every unit's object is stored (kernel unit, wrapper, frame runtime): object, header list,
    # digest.
    stored = sorted(p.suffix for p in objects_dir(fresh_cache).iterdir())
    assert stored == [".deps"] * 3 + [".o"] * 3 + [".sha256"] * 3

    # Only the body changed: same signature, same wrapper (and the same frame runtime).
    edited = load(unique_name, 10)
    assert edited == {"hit": False, "reused": True, "units": 2, "out": [10.0, 12.0, 14.0, 16.0]}
    assert load(unique_name, 10)["hit"] is True

    forced = load(unique_name, 10, force=True)  # force_rebuild compiles everything
    assert forced["reused"] is False and forced["out"] == [10.0, 12.0, 14.0, 16.0]


def test_a_changed_signature_compiles_a_new_wrapper(fresh_cache, unique_name):
    load(unique_name, 0)
    changed = load(unique_name, 0, attr_type="double")  # the attribute's type is in the wrapper
    assert changed["reused"] is False and changed["out"] == [0.0, 2.0, 4.0, 6.0]
    # Two kernel units (the bridge's attribute type changed too), two wrappers, one frame runtime.
    assert len(list(objects_dir(fresh_cache).glob("*.o"))) == 5


def test_a_damaged_wrapper_object_is_compiled_again_never_linked(fresh_cache, unique_name):
    load(unique_name, 0)
    for obj in objects_dir(fresh_cache).glob("*.o"):
        data = bytearray(obj.read_bytes())
        data[len(data) // 2] ^= 0xFF
        obj.write_bytes(bytes(data))
    rebuilt = load(unique_name, 5)
    assert rebuilt == {"hit": False, "reused": False, "units": 0, "out": [5.0, 7.0, 9.0, 11.0]}
    # The damaged object was replaced by the fresh build's, which the next edit reuses.
    assert load(unique_name, 6)["reused"] is True


def test_clear_cache_removes_the_shared_objects(fresh_cache, unique_name):
    load(unique_name, 0)
    assert any(objects_dir(fresh_cache).iterdir())
    import jaxcc

    jaxcc.clear_cache()
    assert not objects_dir(fresh_cache).exists()
