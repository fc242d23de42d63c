"""Lazy handlers (decision 137): a warm load registers stubs and maps the module's library at the
first call of one of its functions; JAXCC_LAZY_LOAD=0 maps it at the load. Each check runs in a
fresh process against a cache an earlier process filled, as a warm load has it."""

import json
import shutil
import subprocess
import textwrap

import pytest
from conftest import run_python
from test_warm_index import installed_headers_settled  # noqa: F401  (records need settled dirs)

KERNEL = r"""
#include "jaxcc/jaxcc.h"
void twice(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = 2 * x.data_ptr<float>()[i];
}
"""

STATEFUL = r"""
#include "jaxcc/jaxcc.h"
struct Counter { int64_t calls = 0; };
void count_calls(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::State<Counter>& counter) {
  auto lock = counter.lock();
  y.data_ptr<int64_t>()[0] = ++counter->calls;
}
"""

# Loads the module, reports whether its library is mapped before and after one call, and the
# call's result.
PROBE = textwrap.dedent(
    """
    import json, sys
    import jax, jax.numpy as jnp, numpy as np
    import jaxcc
    def mapped(path):
        with open("/proc/self/maps") as maps:
            return path in maps.read()
    mod = jaxcc.load_cpp_file(FILE, functions=FUNCTIONS, name=NAME)
    report = {"hit": mod.cache_hit, "loaded_flag": mod.library_loaded,
              "mapped_after_load": mapped(mod.path),
              "registered": f"{mod.name}.{FUNCTIONS[0]}" in jaxcc.list_registered_targets()}
    if MODE == "call":
        x = jnp.arange(4, dtype=jnp.float32)
        report["values"] = np.asarray(jax.jit(mod.twice)(x)).tolist()
    elif MODE == "count":
        x = jnp.zeros(1, jnp.float32)
        out = jax.ShapeDtypeStruct((1,), jnp.int64)
        f = jax.jit(lambda x: mod.count_calls(x, outs=out))
        report["values"] = [int(f(x)[0]) for _ in range(3)]
    elif MODE == "clear_then_call":
        jaxcc.clear_cache()
        x = jnp.arange(4, dtype=jnp.float32)
        report["values"] = np.asarray(jax.jit(mod.twice)(x)).tolist()
    elif MODE == "another_process_clears_then_call":
        import subprocess
        subprocess.run([sys.executable, "-c", "import jaxcc; jaxcc.clear_cache()"], check=True)
        x = jnp.arange(4, dtype=jnp.float32)
        report["values"] = np.asarray(jax.jit(mod.twice)(x)).tolist()
    elif MODE == "load_library":
        try:
            mod.load_library()
            report["error"] = None
        except jaxcc.LoadError as e:
            report["error"] = "LoadError: " + str(e)
    elif MODE == "call_fails":
        try:
            jax.jit(mod.twice)(jnp.arange(4, dtype=jnp.float32)).block_until_ready()
            report["error"] = None
        except Exception as e:
            report["error"] = type(e).__name__ + ": " + str(e)
    report["loaded_flag_after"] = mod.library_loaded
    report["mapped_after"] = mapped(mod.path)
    report["library_file_mapped_after"] = mapped("/" + mod.path.rsplit("/", 1)[-1] + " (deleted)")
    print(json.dumps(report))
    """
)


def probe(cache, source_file, name, mode="call", functions=("twice",), env=None):
    code = (
        PROBE.replace("FILE", repr(str(source_file)))
        .replace("FUNCTIONS", repr(list(functions)))
        .replace("NAME", repr(name))
        .replace("MODE", repr(mode))
    )
    result = run_python(code, env={"JAXCC_CACHE_DIR": str(cache), **(env or {})})
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture
def kernel_file(tmp_path):
    source = tmp_path / "twice.cc"
    source.write_text(KERNEL)
    return source


def test_a_warm_load_maps_the_library_at_the_first_call(tmp_path, kernel_file, unique_name):
    cache = tmp_path / "cache"
    cold = probe(cache, kernel_file, unique_name)
    # A build maps its library at the load: a library that cannot load fails the load.
    assert not cold["hit"] and cold["loaded_flag"] and cold["mapped_after_load"]
    warm = probe(cache, kernel_file, unique_name)
    assert warm["hit"] and warm["registered"]
    # Registration (with XLA's metadata query, answered by the stub) did not map it ...
    assert not warm["loaded_flag"] and not warm["mapped_after_load"]
    # ... the first call did, and ran the real handler.
    assert warm["values"] == [0.0, 2.0, 4.0, 6.0]
    assert warm["loaded_flag_after"] and warm["mapped_after"]


def test_lazy_load_0_maps_at_the_load(tmp_path, kernel_file, unique_name):
    cache = tmp_path / "cache"
    probe(cache, kernel_file, unique_name)
    eager = probe(cache, kernel_file, unique_name, env={"JAXCC_LAZY_LOAD": "0"})
    assert eager["hit"] and eager["loaded_flag"] and eager["mapped_after_load"]
    assert eager["values"] == [0.0, 2.0, 4.0, 6.0]


def test_load_library_maps_now(tmp_path, kernel_file, unique_name):
    cache = tmp_path / "cache"
    probe(cache, kernel_file, unique_name)
    warm = probe(cache, kernel_file, unique_name, mode="load_library")
    assert not warm["mapped_after_load"] and warm["error"] is None
    assert warm["loaded_flag_after"] and warm["mapped_after"]


def test_a_bad_lazy_load_setting_is_a_spec_error(tmp_path, kernel_file, unique_name):
    code = (
        "import jaxcc\n"
        "try:\n"
        f"    jaxcc.load_cpp_file({str(kernel_file)!r}, name={unique_name!r})\n"
        "except jaxcc.SpecError as e:\n"
        "    print('SpecError', e)\n"
    )
    result = run_python(code, env={"JAXCC_CACHE_DIR": str(tmp_path), "JAXCC_LAZY_LOAD": "yes"})
    assert "SpecError" in result.stdout and "JAXCC_LAZY_LOAD=yes" in result.stdout, result.stderr
    assert "use 1" in result.stdout and "or 0" in result.stdout


def test_a_stateful_function_works_through_its_stub(tmp_path, unique_name):
    source = tmp_path / "counter.cc"
    source.write_text(STATEFUL)
    cache = tmp_path / "cache"
    probe(cache, source, unique_name, mode="count", functions=("count_calls",))
    warm = probe(cache, source, unique_name, mode="count", functions=("count_calls",))
    assert warm["hit"]
    # Its metadata names the library's own state type: the stub maps the library for XLA's query
    # (or the instantiate stage) and the state lives in the real handler's calls.
    assert warm["values"] == [1, 2, 3]
    assert warm["loaded_flag_after"] and warm["mapped_after"]


def test_a_library_that_cannot_be_mapped_says_why_at_the_call(tmp_path, unique_name):
    helper_dir = tmp_path / "helper"
    helper_dir.mkdir()
    (helper_dir / "helper.cc").write_text("float helper_scale() { return 2.0f; }\n")
    subprocess.run(
        [
            "g++",
            "-shared",
            "-fPIC",
            "-o",
            str(helper_dir / "libhelper.so"),
            str(helper_dir / "helper.cc"),
        ],
        check=True,
    )
    source = tmp_path / "uses_helper.cc"
    source.write_text(
        KERNEL.replace("2 * x", "helper_scale() * x").replace(
            '#include "jaxcc/jaxcc.h"', '#include "jaxcc/jaxcc.h"\nfloat helper_scale();'
        )
    )
    # Linked from helper/, loaded from run/: the link's search directories are part of what the
    # build read (decision 172), so a name changed there is a rebuild, not this case; a library
    # gone from where the loader finds it at run time is.
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(helper_dir / "libhelper.so", run_dir / "libhelper.so")
    ldflags = [f"-L{helper_dir}", "-lhelper", f"-Wl,-rpath,{run_dir}"]
    cache = tmp_path / "cache"
    code_kwargs = f"extra_ldflags={ldflags!r}"
    original = PROBE.replace(
        "functions=FUNCTIONS, name=NAME", f"functions=FUNCTIONS, name=NAME, {code_kwargs}"
    )

    def run(mode, env=None):
        code = (
            original.replace("FILE", repr(str(source)))
            .replace("FUNCTIONS", repr(["twice"]))
            .replace("NAME", repr(unique_name))
            .replace("MODE", repr(mode))
        )
        return run_python(code, env={"JAXCC_CACHE_DIR": str(cache), **(env or {})})

    built = run("call")
    assert built.returncode == 0, built.stderr[-3000:]
    (run_dir / "libhelper.so").rename(run_dir / "libhelper.so.gone")

    at_call = json.loads(run("call_fails").stdout.strip().splitlines()[-1])
    assert at_call["hit"] and not at_call["mapped_after_load"]
    error = at_call["error"]
    assert error is not None and "libhelper.so" in error, error
    assert f"module '{unique_name}' could not be mapped at its first call" in error
    assert "JAXCC_LAZY_LOAD=0" in error and "load_library()" in error

    asked = json.loads(run("load_library").stdout.strip().splitlines()[-1])
    assert asked["error"].startswith("LoadError") and "libhelper.so" in asked["error"]
    assert not asked["loaded_flag_after"]

    eager = run("call", env={"JAXCC_LAZY_LOAD": "0"})
    assert eager.returncode != 0 and "LoadError" in eager.stderr and "libhelper.so" in eager.stderr


def test_clear_cache_keeps_a_loaded_modules_library(tmp_path, kernel_file, unique_name):
    cache = tmp_path / "cache"
    probe(cache, kernel_file, unique_name)
    warm = probe(cache, kernel_file, unique_name, mode="clear_then_call")
    # clear_cache() promises that loaded modules stay usable: it maps their libraries first.
    assert warm["hit"] and not warm["mapped_after_load"]
    assert warm["values"] == [0.0, 2.0, 4.0, 6.0]
    assert not list((cache).glob(f"{unique_name}-*"))  # the entry itself is gone


def test_a_cache_entry_cleared_by_another_process_before_the_first_call_still_runs(
    tmp_path, kernel_file, unique_name
):
    cache = tmp_path / "cache"
    probe(cache, kernel_file, unique_name)
    warm = probe(cache, kernel_file, unique_name, mode="another_process_clears_then_call")
    # The load held the verified library open (decision 138): the entry is gone when the first
    # call maps it, and the call still runs the very file the load verified.
    assert warm["hit"] and not warm["mapped_after_load"]
    assert not list(cache.glob(f"{unique_name}-*"))
    assert warm["values"] == [0.0, 2.0, 4.0, 6.0]
    # (clear_cache moved the entry aside before deleting it: the mapping shows that name)
    assert warm["loaded_flag_after"] and warm["library_file_mapped_after"]
