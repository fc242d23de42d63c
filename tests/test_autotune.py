"""Autotuning (issue 40, decisions 156a-c): declared candidates become one build each, the first
call per tuning key times them and picks the fastest that agrees with the reference, and the
decision is remembered in the cache so another process times nothing. Tiny kernels, 2-3
variants each: real builds, kept short."""

import json
import os
import textwrap
import uuid
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import run_python
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxcc
from jaxcc import _core
from jaxcc.deploy.export import required_targets
from jaxcc.tune import store
from jaxcc.tune.spec import module_configs, parse_tune

# c = a + 1, recomputed REPEAT times (a compiler barrier keeps every pass): the same answer for
# every REPEAT, and a large REPEAT is slower by that factor.
REPEAT_SOURCE = r"""
#ifndef REPEAT
#define REPEAT 1
#endif
// @BE bump arg ret
void bump(const jaxcc::Tensor& a, jaxcc::Tensor& c) {
  const float* x = a.data_ptr<float>();
  float* y = c.data_ptr<float>();
  for (int r = 0; r < REPEAT; ++r) {
    for (int64_t i = 0; i < a.numel(); ++i) y[i] = x[i] + 1.0f;
    asm volatile("" ::: "memory");
  }
}
"""

# c = a + OFFSET / 8 (integer division): OFFSET 0..7 agree, 8 and above do not.
OFFSET_SOURCE = r"""
// @BE shift arg ret
void shift(const jaxcc::Tensor& a, jaxcc::Tensor& c) {
  for (int64_t i = 0; i < a.numel(); ++i)
    c.data_ptr<float>()[i] = a.data_ptr<float>()[i] + float(OFFSET / 8);
}
"""

X = jnp.arange(4096, dtype=jnp.float32)
os.environ.pop("JAXCC_TUNE_BUDGET_S", None)


@pytest.fixture
def printed(monkeypatch):
    monkeypatch.setenv("JAXCC_PRINT_AUTOTUNING", "1")


@pytest.fixture(scope="module")
def repeat_name():
    """The module that tests tuning REPEAT_SOURCE over REPEAT=[3000, 1] share (built once); each
    calls it at shapes of its own, so every test's key is its own decision."""
    return f"t_autotune_repeat_{uuid.uuid4().hex[:8]}"


def _keys(module: str) -> set[str]:
    return {r["key"] for r in store.list_decisions(jaxcc.get_cache_dir()) if r["module"] == module}


def _decision_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("jaxcc autotune:")]


def test_tuned_function_picks_fastest_variant_and_prints_one_line(repeat_name, printed, capfd):
    mod = jaxcc.load_cpp_inline(repeat_name, REPEAT_SOURCE, tune={"bump": {"REPEAT": [3000, 1]}})
    targets = mod.bump.variant_targets
    assert targets == {
        "REPEAT=3000": f"{repeat_name}@tune-REPEAT3000.bump",
        "REPEAT=1": f"{repeat_name}@tune-REPEAT1.bump",
    }
    registered = jaxcc.list_registered_targets()
    assert all(t in registered for t in targets.values())
    assert f"{repeat_name}.bump" in registered  # the reference under the plain name
    np.testing.assert_array_equal(mod.bump(X), X + 1)
    assert mod.bump.chosen_config(X) == {"REPEAT": 1}
    lines = _decision_lines(capfd.readouterr().err)
    assert len(lines) == 1, lines
    assert "REPEAT=1 " in lines[0] and "2 tried" in lines[0] and "float32[4096]" in lines[0]
    assert "cached" not in lines[0]
    mod.bump(X)  # the same key again: no timing, no line
    assert not _decision_lines(capfd.readouterr().err)


def test_tuned_call_inside_jit_and_vmap_lowers_to_the_chosen_target(repeat_name):
    mod = jaxcc.load_cpp_inline(repeat_name, REPEAT_SOURCE, tune={"bump": {"REPEAT": [3000, 1]}})
    before = _keys(repeat_name)  # other tests' keys of the shared module
    x = jnp.ones((2, 512), jnp.float32)
    hlo = jax.jit(lambda v: mod.bump(v)).lower(x).as_text()
    assert f"{repeat_name}@tune-REPEAT1.bump" in hlo
    assert f"{repeat_name}@tune-REPEAT3000.bump" not in hlo
    np.testing.assert_array_equal(jax.jit(jax.vmap(mod.bump))(x), x + 1)
    # vmap's key is the per-element shape (what the sequential calls run on)
    assert _keys(repeat_name) - before == {"float32[2,512]", "float32[512]"}


def test_second_process_times_nothing(fresh_cache, unique_name, capsys):
    code = textwrap.dedent(f"""
        import jax.numpy as jnp, jaxcc
        mod = jaxcc.load_cpp_inline({unique_name!r}, {REPEAT_SOURCE!r},
                                    tune={{"bump": {{"REPEAT": [400, 1]}}}})
        print(float(mod.bump(jnp.zeros(2048, jnp.float32))[0]))
    """)
    env = {"JAXCC_PRINT_AUTOTUNING": "1", "JAXCC_CACHE_DIR": str(fresh_cache)}
    first = run_python(code, env)
    assert first.returncode == 0, first.stderr
    # Read, never retimed: the first decision may be noisy and this machine quiet (decision 193).
    second = run_python(code, {**env, "JAXCC_TUNE_RETIME": "0"})
    assert second.returncode == 0, second.stderr
    (line1,) = _decision_lines(first.stderr)
    (line2,) = _decision_lines(second.stderr)
    assert not line1.endswith("cached") and line2.endswith("cached")
    assert line1.split(" -> ")[1].split()[0] == line2.split(" -> ")[1].split()[0] == "REPEAT=1"
    assert second.stdout.strip() == "1.0"
    from jaxcc.__main__ import main

    capsys.readouterr()
    main(["cache", "ls"])  # `jaxcc cache ls` (this process's cache is fresh_cache too)
    listing = capsys.readouterr().out
    assert "autotuning decisions: 1" in listing
    assert f"{unique_name}.bump [float32[2048]]" in listing
    main(["cache", "ls", "--json"])
    assert json.loads(capsys.readouterr().out)["autotune"][0]["chosen_text"] == "REPEAT=1"
    jaxcc.clear_cache(unique_name)
    assert not store.list_decisions(str(fresh_cache))


def test_adding_a_candidate_builds_only_the_new_variant(fresh_cache, unique_name):
    jaxcc.load_cpp_inline(unique_name, REPEAT_SOURCE, tune={"bump": {"REPEAT": [1, 2]}})
    assert len(_core.cache_list(str(fresh_cache))) == 2
    mod = jaxcc.load_cpp_inline(unique_name, REPEAT_SOURCE, tune={"bump": {"REPEAT": [1, 2, 3]}})
    entries = _core.cache_list(str(fresh_cache))
    assert len(entries) == 3
    assert len(mod.bump.variant_targets) == 3
    # the decision of the old candidate list is not reused for the new one
    np.testing.assert_array_equal(mod.bump(X), X + 1)


def test_constraints_prune_before_building_and_tune_inputs_feed_the_timing(unique_name):
    seen = []

    def inputs(shapes, attributes):
        seen.append([tuple(s.shape) for s in shapes])
        return [np.full(s.shape, 2.0, s.dtype) for s in shapes]

    tune = jaxcc.Autotune(
        REPEAT=[1, 2, 5000], constraints=lambda c: c["REPEAT"] != 2, tune_inputs=inputs
    )
    mod = jaxcc.load_cpp_inline(unique_name, REPEAT_SOURCE, tune={"bump": tune})
    assert sorted(mod.bump.variant_targets) == ["REPEAT=1", "REPEAT=5000"]
    np.testing.assert_array_equal(mod.bump(X), X + 1)
    assert seen == [[(4096,)]]


def test_variant_disagreeing_with_reference_is_left_out_with_one_warning(unique_name):
    mod = jaxcc.load_cpp_inline(unique_name, OFFSET_SOURCE, tune={"shift": {"OFFSET": [0, 1, 9]}})
    with pytest.warns(jaxcc.AutotuneWarning, match=r"OFFSET=9 is left out of tuning"):
        y = mod.shift(X)
    np.testing.assert_array_equal(y, X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mod.shift(jnp.zeros(7, jnp.float32))  # another key: tuned again, not warned again
    record = [r for r in store.list_decisions(jaxcc.get_cache_dir()) if r["module"] == unique_name]
    assert all("OFFSET=9" in r["excluded"] and "OFFSET=9" not in r["times_s"] for r in record)


def test_every_variant_disagreeing_with_reference_is_an_autotune_error(unique_name):
    mod = jaxcc.load_cpp_inline(unique_name, OFFSET_SOURCE, tune={"shift": {"OFFSET": [0, 9]}})
    with pytest.raises(jaxcc.AutotuneError, match=r"every variant disagrees.*OFFSET=9"):
        mod.shift(X)


def test_named_reference_is_the_one_compared_against(unique_name):
    tune = jaxcc.Autotune(OFFSET=[0, 9, 10], reference={"OFFSET": 9})
    mod = jaxcc.load_cpp_inline(unique_name, OFFSET_SOURCE, tune={"shift": tune})
    with pytest.warns(jaxcc.AutotuneWarning, match=r"OFFSET=0 is left out"):
        np.testing.assert_array_equal(mod.shift(X), X + 1)


def test_failing_configuration_is_left_out_and_the_rest_used(unique_name):
    source = "#if REPEAT == 2\n#error REPEAT=2 is not supported\n#endif\n" + REPEAT_SOURCE
    with pytest.warns(
        jaxcc.AutotuneWarning, match=r"1 of 3 tuning configurations failed.*REPEAT=2"
    ) as record:
        mod = jaxcc.load_cpp_inline(unique_name, source, tune={"bump": {"REPEAT": [2, 1, 3]}})
    assert record[0].filename == __file__
    assert sorted(mod.bump.variant_targets) == ["REPEAT=1", "REPEAT=3"]
    np.testing.assert_array_equal(mod.bump(X), X + 1)  # the reference failed: first that built


def test_every_configuration_failing_is_a_compile_error_naming_each(unique_name):
    source = "#error never builds\n" + REPEAT_SOURCE
    with pytest.raises(jaxcc.CompileError) as info:
        jaxcc.load_cpp_inline(unique_name, source, tune={"bump": {"REPEAT": [1, 2]}})
    assert "every tuning configuration" in str(info.value)
    assert "[REPEAT=1]" in str(info.value) and "[REPEAT=2]" in str(info.value)


def test_parameter_the_source_never_uses_warns(unique_name):
    with pytest.warns(jaxcc.AutotuneWarning, match=r"NOPE never appear in the source") as record:
        jaxcc.load_cpp_inline(unique_name, REPEAT_SOURCE, tune={"bump": {"NOPE": [1, 2]}})
    assert record[0].filename == __file__  # at the user's line


def test_spent_budget_keeps_the_best_so_far_and_says_so(unique_name, monkeypatch, printed, capfd):
    monkeypatch.setenv("JAXCC_TUNE_BUDGET_S", "0.000001")
    mod = jaxcc.load_cpp_inline(unique_name, REPEAT_SOURCE, tune={"bump": {"REPEAT": [3, 1]}})
    with pytest.warns(jaxcc.AutotuneWarning, match=r"JAXCC_TUNE_BUDGET_S=1e-06 after 1 of 2"):
        np.testing.assert_array_equal(mod.bump(X), X + 1)
    assert mod.bump.chosen_config(X) == {"REPEAT": 3}
    (line,) = _decision_lines(capfd.readouterr().err)
    assert "1 tried" in line and "budget exhausted" in line


def test_tune_naming_an_unknown_function_is_a_spec_error(unique_name):
    with pytest.raises(jaxcc.SpecError, match=r"tune names \['nope'\].*its functions: bump"):
        jaxcc.load_cpp_inline(unique_name, REPEAT_SOURCE, tune={"nope": {"REPEAT": [1, 2]}})


@pytest.mark.parametrize(
    "tune, message",
    [
        ({"bump": {"REPEAT": []}}, r"has no candidate values"),
        ({"bump": {}}, r"names no parameter"),
        ({}, r"non-empty dict"),
        ({"bump": {"REPEAT": "12"}}, r"must be a list of candidate values"),
        ({"bump": {"REPEAT": [1.5]}}, r"is not an int, bool or identifier token"),
        ({"bump": {"REPEAT": ["a b"]}}, r"is not an int, bool or identifier token"),
        ({"bump": {"REPEAT": [1, 1]}}, r"lists 1 twice"),
        ({"bump": {"2X": [1]}}, r"is not a macro name"),
        ({"bump": {"REPEAT": [1], "key": [1]}}, r"jaxcc.Autotune"),
        ({"bump": jaxcc.Autotune(REPEAT=[1, 2], constraints=lambda c: False)}, r"rejected every"),
        ({"bump": jaxcc.Autotune(REPEAT=[1, 2], reference={"REPEAT": 3})}, r"reference="),
        ({"bump": [1, 2]}, r"must be a dict of parameter"),
    ],
)
def test_bad_tune_declarations_are_spec_errors_before_any_build(tune, message):
    with pytest.raises(jaxcc.SpecError, match=message):
        jaxcc.load_cpp_inline("never_built", "#error no build\n" + REPEAT_SOURCE, tune=tune)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["f", "g"]),
        st.dictionaries(
            st.sampled_from(["A", "B", "C"]),
            st.lists(st.integers(-5, 50), min_size=1, max_size=3, unique=True),
            min_size=1,
        ),
        min_size=1,
    )
)
def test_module_builds_cover_every_configuration_once(tune):
    specs = parse_tune(tune, "test")
    builds = module_configs(specs)
    assert len({tuple(sorted(b.items())) for b in builds}) == len(builds)
    for spec in specs.values():
        assert len(spec.configs) == int(np.prod([len(v) for v in tune[spec.function].values()]))
        for config in spec.configs:
            assert {**builds[0], **config} in builds


# c[0] = the sum of a, forwards or backwards; c[i] = a[i] otherwise.
SUM_ORDER_SOURCE = r"""
// @BE total arg ret
void total(const jaxcc::Tensor& a, jaxcc::Tensor& c) {
  const float* x = a.data_ptr<float>();
  float* y = c.data_ptr<float>();
  const int64_t n = a.numel();
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += x[REVERSE ? n - 1 - i : i];
  for (int64_t i = 1; i < n; ++i) y[i] = x[i];
  y[0] = s;
}
"""


def test_reordered_sum_cancelling_to_near_zero_is_not_a_disagreement(unique_name):
    """Regression: per-element allclose called a variant wrong when a sum that cancels to near
    zero kept the rounding of its large terms; the tolerance is relative to the output's scale."""

    def cancelling(shapes, attributes):
        x = np.random.default_rng(3).standard_normal(shapes[0].shape).astype(np.float32) * 1000
        return [x - x.mean(dtype=np.float64).astype(np.float32)]

    tune = jaxcc.Autotune(REVERSE=[0, 1], tune_inputs=cancelling)
    mod = jaxcc.load_cpp_inline(unique_name, SUM_ORDER_SOURCE, tune={"total": tune})
    (x,) = cancelling([jax.ShapeDtypeStruct((256,), jnp.float32)], {})
    sums = [
        float(jax.ffi.ffi_call(t, jax.ShapeDtypeStruct(x.shape, x.dtype))(x)[0])
        for t in mod.total.variant_targets.values()
    ]
    assert sums[0] != sums[1]  # the orders really round differently
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mod.total(jnp.asarray(x))


def test_export_calls_the_chosen_variant_and_deserialize_in_another_process(repeat_name):
    """The artefact names the chosen variant's target; a process that loads the same tuned
    module (its decision read from the cache, so the same variant) runs it."""
    mod = jaxcc.load_cpp_inline(repeat_name, REPEAT_SOURCE, tune={"bump": {"REPEAT": [3000, 1]}})
    x = jax.ShapeDtypeStruct((1024,), jnp.float32)
    exported = jaxcc.export(lambda v: mod.bump(v) * 2, x)
    assert f"{repeat_name}@tune-REPEAT1.bump" in required_targets(exported)
    blob = bytes(exported.serialize())
    code = textwrap.dedent(f"""
        import numpy as np, jax.numpy as jnp, jaxcc
        mod = jaxcc.load_cpp_inline({repeat_name!r}, {REPEAT_SOURCE!r},
                                    tune={{"bump": {{"REPEAT": [3000, 1]}}}})
        exp = jaxcc.deserialize(bytes.fromhex({blob.hex()!r}), modules=[mod])
        print(float(exp.call(jnp.ones(1024, jnp.float32))[0]))
    """)
    done = run_python(code)  # the session's cache: the builds and the decision are there
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4.0"


TILED_CUDA = r"""
#include <cuda_runtime.h>
#include "jaxcc/jaxcc.h"
static_assert(THREADS == 128 || THREADS == 256, "THREADS must reach nvcc as a macro");

__global__ void twice_kernel(const float* x, float* y, int n) {
  int base = (blockIdx.x * THREADS + threadIdx.x) * ITEMS;
  for (int k = 0; k < ITEMS; ++k)
    if (base + k < n) y[base + k] = 2.0f * x[base + k];
}

// @BE twice arg ret stream
void twice(const jaxcc::Tensor& x, jaxcc::Tensor& y, int64_t stream) {
  int n = static_cast<int>(x.numel());
  int per_block = THREADS * ITEMS;
  twice_kernel<<<(n + per_block - 1) / per_block, THREADS, 0, (cudaStream_t)stream>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
}
"""


@pytest.mark.skipif(
    not os.path.exists("/usr/local/cuda/bin/nvcc") and not os.environ.get("CUDA_HOME"),
    reason="nvcc is not installed",
)
def test_cuda_variants_build_without_a_gpu_each_with_its_macros(unique_name, monkeypatch):
    if not os.environ.get("CUDA_HOME") and os.path.exists("/usr/local/cuda/bin/nvcc"):
        monkeypatch.setenv("CUDA_HOME", "/usr/local/cuda")
    mod = jaxcc.load_cuda_inline(
        unique_name,
        TILED_CUDA,
        compute_capability="8.0",
        tune={
            "twice": jaxcc.Autotune(
                THREADS=[128, 256],
                ITEMS=[1, 4],
                constraints=lambda c: c["ITEMS"] == 4 or c["THREADS"] == 128,
            )
        },
    )
    assert sorted(mod.twice.variant_targets) == [
        "THREADS=128,ITEMS=1", "THREADS=128,ITEMS=4", "THREADS=256,ITEMS=4",
    ]  # fmt: skip
    assert f"{unique_name}@tune-THREADS256-ITEMS4.twice" in jaxcc.list_registered_targets()


def test_jaxcc_tune_decides_ahead_so_the_next_process_times_nothing(
    fresh_cache, tmp_path, monkeypatch, capsys
):
    (tmp_path / "tuned_ops.py").write_text(
        "import jaxcc\n"
        f"mod = jaxcc.load_cpp_inline('aot_ops', {REPEAT_SOURCE!r}, "
        "tune={'bump': {'REPEAT': [500, 1]}})\n"
    )
    env = {
        "JAXCC_CACHE_DIR": str(fresh_cache),
        "JAXCC_PRINT_AUTOTUNING": "1",
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
    }

    def cli(*argv):
        return run_python(
            f"import sys; from jaxcc.__main__ import main; sys.exit(main({list(argv)!r}))", env
        )

    from jaxcc.__main__ import main

    monkeypatch.setenv("JAXCC_PRINT_AUTOTUNING", "1")  # `jaxcc tune` sets it when unset
    # Usage errors end before anything loads: asked in this process.
    assert main(["tune", "tuned_ops", "--shapes", "bump=float32(3)"]) == 2
    assert "is not DTYPE[D0,D1,...]" in capsys.readouterr().err
    assert main(["tune", "no_such_ops_module", "--shapes", "bump=float32[3]"]) == 2
    assert "cannot import 'no_such_ops_module'" in capsys.readouterr().err
    ahead = cli("tune", "tuned_ops", "--shapes", "bump=float32[333]")
    assert ahead.returncode == 0, ahead.stderr
    (line,) = _decision_lines(ahead.stderr)
    assert "aot_ops.bump key=float32[333]" in line and "REPEAT=1" in line
    assert not line.endswith("cached")
    user = run_python(  # read, never retimed (JAXCC_TUNE_RETIME=0: the decision may be noisy)
        "import jax.numpy as jnp, tuned_ops; tuned_ops.mod.bump(jnp.zeros(333, jnp.float32))",
        {**env, "JAXCC_TUNE_RETIME": "0"},
    )
    assert user.returncode == 0, user.stderr
    (line,) = _decision_lines(user.stderr)
    assert line.endswith("cached")
