"""Loading behaviour: cache hits and misses, errors with locations, registration, feedback."""

import io
import logging
import os
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import run_python

import jaxcc

ADD = r"""
void add(const jaxcc::Tensor a, const jaxcc::Tensor b, jaxcc::Tensor out) {
    for (int64_t i = 0; i < a.numel(); ++i)
        out.data_ptr<float>()[i] = a.data_ptr<float>()[i] + b.data_ptr<float>()[i] + OFFSET;
}
"""


def add_source(offset=0):
    return f"#define OFFSET {offset}\n" + ADD


def test_second_load_in_a_new_process_is_a_cache_hit(fresh_cache, unique_name):
    code = (
        "import jaxcc, jax.numpy as jnp\n"
        f"m = jaxcc.load_cpp_inline({unique_name!r}, {add_source(1)!r}, ['add'])\n"
        "print(m.cache_hit, float(m.add(jnp.ones(2), jnp.ones(2))[0]))\n"
    )
    first = run_python(code)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["False", "3.0"]
    second = run_python(code)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["True", "3.0"]


def test_a_module_alive_at_exit_is_not_reported_as_a_leak(fresh_cache, unique_name):
    # Loaded modules live as long as the process, and JAX's C++ caches often hold what refers to
    # them past the interpreter's teardown (seen after brainevent's Numba operators). Such a
    # process must exit quietly, without nanobind's "leaked instances" report (decision 142).
    # The reference taken here with Py_IncRef is one that is never given back, like those.
    code = (
        "import ctypes, jaxcc, jax.numpy as jnp\n"
        f"m = jaxcc.load_cpp_inline({unique_name!r}, {add_source(2)!r}, ['add'])\n"
        "spec = m._loaded.specs[0]\n"
        "ctypes.pythonapi.Py_IncRef(ctypes.py_object(spec))\n"
        "ctypes.pythonapi.Py_IncRef(ctypes.py_object(m))\n"
        "print(float(m.add(jnp.ones(2), jnp.ones(2))[0]))\n"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4.0"]
    assert "leaked" not in done.stderr, done.stderr


def test_in_process_reload_returns_the_same_module(unique_name):
    first = jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])
    again = jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])
    assert again is first


def test_force_rebuild_rebuilds_and_keeps_working(unique_name):
    first = jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])
    rebuilt = jaxcc.load_cpp_inline(unique_name, add_source(), ["add"], force_rebuild=True)
    assert not rebuilt.cache_hit
    assert rebuilt.key == first.key  # same inputs, same key: the registration is a no-op
    np.testing.assert_array_equal(rebuilt.add(jnp.ones(2), jnp.ones(2)), 2.0)


def test_edit_and_rerun_in_one_process_ten_times(unique_name):
    """The notebook loop (issue 39 item 2): each edit loads under the same name and its callables
    and new jit traces run the new code; programs traced before keep the version they were
    compiled against; the raw first-version targets stay; unchanged code keeps its targets; one
    ReloadWarning names the raw targets (it was a RegistrationError: a new name every edit)."""
    ones = jnp.ones(2, jnp.float32)
    first = jaxcc.load_cpp_inline(unique_name, add_source(1), ["add"])
    assert first.targets == {"add": f"{unique_name}.add"}
    traced_first = jax.jit(lambda x: first.add(x, x))
    np.testing.assert_array_equal(traced_first(ones), 3.0)
    with pytest.warns(jaxcc.ReloadWarning) as caught:
        modules = {}
        for offset in range(2, 11):
            mod = jaxcc.load_cpp_inline(unique_name, add_source(offset), ["add"])
            modules[offset] = mod
            assert mod.targets["add"] == f"{unique_name}@{mod.key[:12]}.add"
            np.testing.assert_array_equal(mod.add(ones, ones), 2.0 + offset)
            np.testing.assert_array_equal(jax.jit(lambda x, m=mod: m.add(x, x))(ones), 2.0 + offset)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert f"'{unique_name}.add'" in message and "still run the first version" in message
    # What was compiled against the first version still runs it; so does its raw target.
    np.testing.assert_array_equal(traced_first(ones), 3.0)
    raw = jax.ffi.ffi_call(f"{unique_name}.add", jax.ShapeDtypeStruct((2,), jnp.float32))
    np.testing.assert_array_equal(raw(ones, ones), 3.0)
    # Every version's targets stay valid side by side; rerunning an earlier edit reuses them.
    np.testing.assert_array_equal(modules[4].add(ones, ones), 6.0)
    again = jaxcc.load_cpp_inline(unique_name, add_source(4), ["add"])
    assert again.targets == modules[4].targets
    assert jaxcc.load_cpp_inline(unique_name, add_source(1), ["add"]).targets == first.targets


def test_every_option_that_changes_the_binary_changes_the_key(unique_name):
    base = jaxcc.load_cpp_inline(unique_name, add_source(), ["add"], auto_register=False)
    keys = {base.key}
    variants = [
        dict(optimization_level=1),
        dict(extra_cflags=["-DUNUSED_FLAG"]),
        dict(extra_ldflags=["-lm"]),
    ]
    for options in variants:
        keys.add(
            jaxcc.load_cpp_inline(
                unique_name, add_source(), ["add"], auto_register=False, **options
            ).key
        )
    keys.add(jaxcc.load_cpp_inline(unique_name, add_source(5), ["add"], auto_register=False).key)
    assert len(keys) == 5


def test_compile_error_points_at_the_users_line(unique_name):
    src = "#include <cstdint>\n\nvoid broken(const jaxcc::Tensor x, jaxcc::Tensor out) {\n    undeclared_thing(1);\n}\n"
    with pytest.raises(jaxcc.CompileError) as info:
        jaxcc.load_cpp_inline(unique_name, src, ["broken"])
    message = str(info.value)
    assert re.search(rf"<{unique_name}>:4:\d+: error: .*undeclared_thing", message), message
    assert "    4 |     undeclared_thing(1);\n      |     ^" in message, message
    assert info.value.log_path and os.path.exists(info.value.log_path)
    assert "undeclared_thing" in open(info.value.log_path).read()


def test_compile_error_in_a_file_names_the_real_path(tmp_path, unique_name):
    path = tmp_path / "bad_kernel.cc"
    path.write_text("void bad(const jaxcc::Tensor x, jaxcc::Tensor out) {\n  int y = ;\n}\n")
    with pytest.raises(jaxcc.CompileError, match=re.escape(f"{path}:2:")):
        jaxcc.load_cpp_file(path, ["bad"], name=unique_name)


def test_undefined_symbol_is_a_link_error_naming_it(unique_name):
    src = "void missing_fn();\nvoid calls(const jaxcc::Tensor x, jaxcc::Tensor out) { missing_fn(); }\n"
    with pytest.raises(jaxcc.CompileError, match="missing_fn"):
        jaxcc.load_cpp_inline(unique_name, src, ["calls"])


def test_spec_and_signature_errors_need_no_compiler(unique_name, monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/compiler")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(jaxcc.SpecError, match="ret"):
        jaxcc.load_cpp_inline(unique_name, add_source(), {"add": ["arg", "arg"]})
    with pytest.raises(jaxcc.SignatureError, match=rf"<{unique_name}>:\d+:\d+"):
        jaxcc.load_cpp_inline(
            unique_name, "void f(const jaxcc::Tensor x, jaxcc::Tensor o, int* p) {}", ["f"]
        )
    with pytest.raises(jaxcc.SpecError):
        jaxcc.load_cpp_inline("bad/name", add_source(), ["add"])
    with pytest.raises(jaxcc.SpecError, match="functions must be"):
        jaxcc.load_cpp_inline(unique_name, add_source(), functions=42)


def test_missing_compiler_is_a_toolchain_error_listing_candidates(unique_name, monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/compiler")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(jaxcc.ToolchainError, match="(?s)nonexistent/compiler.*How to fix"):
        jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])


def test_import_creates_nothing_on_disk(tmp_path):
    cache = tmp_path / "never-created"
    result = run_python(
        "import jaxcc, os; print(jaxcc.get_cache_dir()); print(os.path.exists(jaxcc.get_cache_dir()))",
        env={"JAXCC_CACHE_DIR": str(cache)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(cache), "False"]


def test_cache_dir_api_and_clear_cache(fresh_cache, unique_name):
    assert jaxcc.get_cache_dir() == str(fresh_cache)
    assert not fresh_cache.exists()
    jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])
    assert fresh_cache.exists() and (os.stat(fresh_cache).st_mode & 0o777) == 0o700
    assert jaxcc.clear_cache("some_other_module") == 0
    assert jaxcc.clear_cache(unique_name) == 1
    assert not any(p.name.startswith(unique_name) for p in fresh_cache.iterdir())
    again = jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])
    assert not again.cache_hit


def test_build_directory_is_kept_with_generated_sources(tmp_path, unique_name):
    build_dir = tmp_path / "build"
    jaxcc.load_cpp_inline(unique_name, add_source(), ["add"], build_directory=build_dir)
    names = {p.name for p in build_dir.iterdir()}
    assert {
        "build.ninja",
        "kernel_0.cc",
        "ffi_wrapper.cc",
        "ffi_frame_runtime.cc",
        "build.log",
    } <= names
    assert f'#line 1 "<{unique_name}>"' in (build_dir / "kernel_0.cc").read_text()


def test_logger_records_misses_and_hits(unique_name, caplog):
    with caplog.at_level(logging.INFO, logger="jaxcc"):
        jaxcc.load_cpp_inline(unique_name, add_source(), ["add"], auto_register=False)
        jaxcc.load_cpp_inline(unique_name, add_source(), ["add"], target_prefix=unique_name + "_b")
    text = caplog.text
    assert re.search(rf"cache miss \(absent\): built {unique_name} in \d+\.\d+s", text), text
    assert f"cache hit: {unique_name}" in text


def test_verbose_shows_each_command(unique_name, capfd):
    jaxcc.load_cpp_inline(unique_name, add_source(), ["add"], verbose=True)
    err = capfd.readouterr().err
    assert "-std=c++17" in err and "-fvisibility=hidden" in err and "ffi_wrapper.cc" in err


def test_progress_line_on_a_terminal_for_slow_builds():
    from jaxcc.environment.progress import BuildProgress

    class FakeTty(io.StringIO):
        def isatty(self):
            return True

    stream = FakeTty()
    import time

    with BuildProgress("slow_module", delay=0.05, stream=stream) as progress:
        time.sleep(0.3)  # before start(): a cache hit shows nothing
        assert stream.getvalue() == ""
        progress.start()
        time.sleep(0.5)
    assert "jaxcc: building slow_module" in stream.getvalue()
    assert "built slow_module in" in stream.getvalue()
    quiet = io.StringIO()  # not a terminal: nothing printed
    with BuildProgress("slow_module", delay=0.0, stream=quiet) as progress:
        progress.start()
        time.sleep(0.3)
    assert quiet.getvalue() == ""


def test_progress_counts_build_steps_and_a_log_gets_lines_only_when_asked(monkeypatch):
    import time

    from jaxcc.environment.progress import BuildProgress

    monkeypatch.setenv("JAXCC_PROGRESS", "1")
    log = io.StringIO()  # not a terminal, but asked for: whole lines, no carriage returns
    with BuildProgress("many_units", delay=0.0, stream=log) as progress:
        progress.update(7, 20)  # before the first line is drawn (the delay is zero)
        progress.start()
        time.sleep(0.3)
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("jaxcc: building many_units: 7/20 steps, ")
    assert lines[-1].startswith("jaxcc: built many_units in ") and lines[-1].endswith("(20 steps)")
    assert "\r" not in log.getvalue() and "\033" not in log.getvalue()
    monkeypatch.setenv("JAXCC_PROGRESS", "0")

    class FakeTty(io.StringIO):
        def isatty(self):
            return True

    silenced = FakeTty()
    with BuildProgress("many_units", delay=0.0, stream=silenced) as progress:
        progress.start()
        time.sleep(0.3)
    assert silenced.getvalue() == ""


def test_a_multi_file_build_reports_its_steps_as_ninja_runs_them(
    unique_name, monkeypatch, tmp_path
):
    from jaxcc.build import load_request

    seen = []

    class Recorder(load_request.BuildProgress):
        def update(self, finished, total):
            seen.append((finished, total))
            super().update(finished, total)

    monkeypatch.setattr(load_request, "BuildProgress", Recorder)
    for i in range(3):
        (tmp_path / f"unit_{i}.cc").write_text(
            f"// @BE plus_{i}\nvoid plus_{i}(const BE::Tensor x, BE::Tensor out) {{\n"
            f"  for (int64_t j = 0; j < x.numel(); ++j) out.data_ptr<float>()[j] = "
            f"x.data_ptr<float>()[j] + {i + 1}.5f; /* {unique_name} */\n}}\n"
        )
    mod = jaxcc.load_cpp_dir(str(tmp_path), name=unique_name)
    assert float(mod.plus_2(jnp.zeros(1))[0]) == 3.5
    totals = {total for _, total in seen}
    assert len(totals) == 1 and totals.pop() >= 4  # three units and the link, at least
    assert [finished for finished, _ in seen] == sorted(finished for finished, _ in seen)


def test_every_broken_file_of_a_build_is_reported_at_its_own_line(unique_name, tmp_path):
    """ninja runs with -k 0: two broken files of five give one CompileError with each file's
    first error at the user's line, in order (it stopped at the first before)."""
    for i in range(5):
        body = f"out.data_ptr<float>()[0] = {i}.0f;"
        if i in (1, 3):
            body = f"undeclared_in_unit_{i}();"
        (tmp_path / f"k{i}.cc").write_text(
            f"// @BE k{i}\nvoid k{i}(const BE::Tensor x, BE::Tensor out) {{\n  {body}\n}}\n"
        )
    with pytest.raises(jaxcc.CompileError) as caught:
        jaxcc.load_cpp_dir(str(tmp_path), name=unique_name)
    message = str(caught.value)
    assert message.startswith("2 build steps failed"), message
    first = message.find(f"{tmp_path / 'k1.cc'}:3:")
    second = message.find(f"{tmp_path / 'k3.cc'}:3:")
    assert 0 < first < second, message
    assert "undeclared_in_unit_1" in message and "undeclared_in_unit_3" in message


def test_the_progress_hook_runs_on_a_build_and_never_on_a_hit(unique_name, monkeypatch):
    from jaxcc.build import load_request

    starts = []

    class Recorder(load_request.BuildProgress):
        def start(self):
            starts.append(self.name)
            super().start()

    monkeypatch.setattr(load_request, "BuildProgress", Recorder)
    jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])
    assert starts == [unique_name]
    jaxcc.load_cpp_inline(unique_name, add_source(), ["add"], force_rebuild=True)
    assert starts == [unique_name, unique_name]
    jaxcc.clear_cache(unique_name)
    jaxcc.build.loaded_table.forget(unique_name)  # the process's table would answer before the core
    mod = jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])
    assert not mod.cache_hit and len(starts) == 3
    jaxcc.build.loaded_table.forget(unique_name)
    mod = jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])
    assert mod.cache_hit and len(starts) == 3


def test_functions_are_made_on_first_use_and_never_shadow_module_attributes(unique_name):
    source = """
    #include "jaxcc/jaxcc.h"
    void path(const jaxcc::Tensor x, jaxcc::Tensor out) {
      for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = 2 * x.data_ptr<float>()[i];
    }
    void twice(const jaxcc::Tensor x, jaxcc::Tensor out) { path(x, out); }
    """
    mod = jaxcc.load_cpp_inline(unique_name, source, ["path", "twice"])
    assert "functions" not in mod.__dict__  # a load makes no KernelFunction
    assert mod.function_names == ["path", "twice"] and "twice" in mod and "other" not in mod
    # A function named like a module attribute stays reachable by name only.
    assert mod.path.endswith(".so") and mod["path"].target == f"{unique_name}.path"
    assert float(mod.twice(jnp.ones(3, jnp.float32))[0]) == 2.0
    assert mod.__dict__["twice"] is mod.functions["twice"]  # cached after the first look-up
    assert mod.targets == {"path": f"{unique_name}.path", "twice": f"{unique_name}.twice"}
    with pytest.raises(AttributeError, match="its functions: path, twice"):
        mod.thrice  # noqa: B018


def test_registered_targets_are_listed(unique_name):
    jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])
    assert f"{unique_name}.add" in jaxcc.list_registered_targets()


def test_brainevent_import_alias_works():
    import jaxcc as brainevent

    for name in (
        "load_cpp_inline",
        "load_cpp_file",
        "set_cache_dir",
        "get_cache_dir",
        "clear_cache",
        "CompiledModule",
    ):
        assert hasattr(brainevent, name)
    assert os.path.exists(os.path.join(jaxcc.include_dir(), "brainevent", "common.h"))


def test_functions_dict_values_may_be_token_strings(unique_name):
    mod = jaxcc.load_cpp_inline(unique_name, add_source(), {"add": "arg arg ret"})
    np.testing.assert_array_equal(jax.jit(mod.add)(jnp.ones(3), jnp.ones(3)), 2.0)


def test_an_edited_header_is_noticed_by_the_next_process(fresh_cache, tmp_path, unique_name):
    include = tmp_path / "inc"
    include.mkdir()
    header = include / "offset.h"
    header.write_text("#define HEADER_OFFSET 1.0f\n")
    src = (
        '#include "offset.h"\n'
        "void bump(const jaxcc::Tensor x, jaxcc::Tensor out) {\n"
        "  for (int64_t i = 0; i < x.numel(); ++i)\n"
        "    out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + HEADER_OFFSET;\n"
        "}\n"
    )
    code = (
        "import jaxcc, jax.numpy as jnp\n"
        f"m = jaxcc.load_cpp_inline({unique_name!r}, {src!r}, ['bump'],"
        f" extra_include_paths=[{str(include)!r}])\n"
        "print(m.cache_hit, float(m.bump(jnp.zeros(1))[0]))\n"
    )
    assert run_python(code).stdout.split() == ["False", "1.0"]
    assert run_python(code).stdout.split() == ["True", "1.0"]
    header.write_text("#define HEADER_OFFSET 5.0f\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "5.0"]


def test_cli_prints_and_clears_the_cache(fresh_cache, unique_name):
    jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])
    shown = run_python("from jaxcc.__main__ import main; main(['cache', 'dir'])")
    assert shown.stdout.strip() == str(fresh_cache)
    cleared = run_python(
        f"from jaxcc.__main__ import main; main(['cache', 'clear', {unique_name!r}])"
    )
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout.startswith("removed 1 entries")


def test_an_explicit_spec_that_disagrees_with_the_signature_fails_before_compiling(
    unique_name, monkeypatch
):
    src = "void scale(const jaxcc::Tensor x, jaxcc::Tensor out,\n           float factor) {}\n"
    monkeypatch.setenv("CXX", "/nonexistent/compiler")  # proves nothing was compiled
    with pytest.raises(jaxcc.SignatureError) as info:
        jaxcc.load_cpp_inline(unique_name, src, {"scale": ["arg", "ret", "attr.factor:float64"]})
    message = str(info.value)
    assert f"<{unique_name}>:2:" in message and "float64" in message and "^" in message, message
    with pytest.raises(jaxcc.SignatureError, match="3 parameters|parameters"):
        jaxcc.load_cpp_inline(unique_name, src, {"scale": ["arg", "ret"]})


def test_a_warm_load_in_a_new_process_starts_no_subprocess(fresh_cache, tmp_path, unique_name):
    log = tmp_path / "spawned.log"
    for tool, real in (("cxx", "g++"), ("ninja", "ninja")):
        wrapper = tmp_path / f"logging-{tool}"
        wrapper.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{log}"\nexec {real} "$@"\n')
        wrapper.chmod(0o755)
    env = {"CXX": str(tmp_path / "logging-cxx"), "JAXCC_NINJA": str(tmp_path / "logging-ninja")}
    code = (
        "import jaxcc, jax.numpy as jnp\n"
        f"m = jaxcc.load_cpp_inline({unique_name!r}, {add_source(3)!r}, ['add'])\n"
        "print(m.cache_hit, float(m.add(jnp.ones(1), jnp.ones(1))[0]))\n"
    )
    cold = run_python(code, env=env)
    assert cold.stdout.split() == ["False", "5.0"], cold.stderr
    spawned_cold = log.read_text()
    assert "cxx --version" in spawned_cold and "ninja -C" in spawned_cold
    warm = run_python(code, env=env)
    assert warm.stdout.split() == ["True", "5.0"], warm.stderr
    assert log.read_text() == spawned_cold, "the warm load started a subprocess"


def test_a_cache_directory_others_can_write_is_refused(tmp_path, unique_name):
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    shared.chmod(0o777)
    previous = jaxcc.get_cache_dir()
    jaxcc.set_cache_dir(shared)
    try:
        with pytest.raises(jaxcc.CacheError, match="chmod go-w"):
            jaxcc.load_cpp_inline(unique_name, add_source(), ["add"])
        shared.chmod(0o700)
        assert jaxcc.load_cpp_inline(unique_name, add_source(), ["add"]).function_names == ["add"]
    finally:
        jaxcc.set_cache_dir(previous)


OPENMP_ROWS = r"""
#include <omp.h>
// @BE row_sums arg ret
void row_sums(const jaxcc::Tensor x, jaxcc::Tensor out) {
    const int64_t rows = x.size(0), cols = x.size(1);
    const float* in = x.data_ptr<float>();
    float* sums = out.data_ptr<float>();
    #pragma omp parallel for num_threads(2)
    for (int64_t r = 0; r < rows; ++r) {
        float total = 0.0f;
        for (int64_t c = 0; c < cols; ++c) total += in[r * cols + c];
        sums[r] = total + 0.0f * omp_get_thread_num();
    }
}
"""


def test_openmp_needs_fopenmp_in_extra_cflags_alone(unique_name):
    """`#pragma omp` with `-fopenmp` in extra_cflags only: jaxcc links with it too (issue 39 item
    4; before, the link failed with `undefined reference to GOMP_parallel` and a `-l<name>`
    hint), and the module needs the OpenMP runtime."""
    mod = jaxcc.load_cpp_inline(unique_name, OPENMP_ROWS, None, extra_cflags=["-fopenmp"])
    x = jnp.arange(12, dtype=jnp.float32).reshape(4, 3)
    sums = mod.row_sums(x, outs=jax.ShapeDtypeStruct((4,), jnp.float32))
    np.testing.assert_allclose(sums, np.asarray(x).sum(axis=1))
    needed = [line for line in open(mod.path, "rb").read().split(b"\0") if b"libgomp" in line]
    assert needed, "the module does not link the OpenMP runtime"
