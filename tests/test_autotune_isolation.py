"""Autotuning that survives its variants (issue 51, decisions 191-196): a variant that crashes or
hangs is measured in the tuning child, excluded and named, and the decision says so; a named
reference is the reference or an AutotuneError; the key is the shape the kernel runs on under
every vmap_method; `jaxcc tune` stores nothing for a reference that cannot run; noise is
recorded. Each case failed on the code before issue 51."""

import json
import os
import signal
import subprocess
import sys
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import run_python
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxcc
from jaxcc.tune import choose, store

# y = 2 a; MODE 2 dereferences null, MODE 3 spins forever; MODE 0 and 1 are right.
MODE_SOURCE = r"""
#ifndef MODE
#define MODE 0
#endif
// @BE twice arg ret
void twice(const jaxcc::Tensor& a, jaxcc::Tensor& c) {
  if (MODE == 2) { volatile int* p = nullptr; *p = 1; }
  if (MODE == 3) { volatile int spin = 1; while (spin) {} }
  for (int64_t i = 0; i < a.numel(); ++i) c.data_ptr<float>()[i] = a.data_ptr<float>()[i] * 2;
}
"""
X = jnp.arange(512, dtype=jnp.float32)


def _decisions(name: str) -> list[dict]:
    return [r for r in store.list_decisions(jaxcc.get_cache_dir()) if r["module"] == name]


def test_crashing_and_hanging_variants_are_excluded_named_and_skipped_later(
    unique_name, monkeypatch, capfd
):
    monkeypatch.setenv("JAXCC_TUNE_BUDGET_S", "1")
    monkeypatch.setenv("JAXCC_PRINT_AUTOTUNING", "1")
    mod = jaxcc.load_cpp_inline(unique_name, MODE_SOURCE, tune={"twice": {"MODE": [0, 2, 3, 1]}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(mod.twice(X), 2 * X)  # this process survives
    said = [str(w.message) for w in caught if w.category is jaxcc.AutotuneWarning]
    assert any("MODE=2" in s and "SIGSEGV" in s for s in said), said
    assert any("MODE=3" in s and "timed out after 1.0 s" in s for s in said), said
    assert all(w.filename == __file__ for w in caught if w.category is jaxcc.AutotuneWarning)
    (record,) = _decisions(unique_name)
    assert record["excluded"]["MODE=2"] == "it crashed (SIGSEGV)"
    assert record["excluded"]["MODE=3"] == "it timed out after 1.0 s"
    assert record["chosen_text"] in ("MODE=0", "MODE=1") and record["isolated"]
    assert "SIGSEGV" in capfd.readouterr().err
    later = run_python(  # reads the decision: runs neither bad variant, says which were left out
        f"import jax.numpy as jnp, jaxcc\n"
        f"mod = jaxcc.load_cpp_inline({unique_name!r}, {MODE_SOURCE!r}, "
        "tune={'twice': {'MODE': [0, 2, 3, 1]}})\n"
        "print(float(mod.twice(jnp.arange(512, dtype=jnp.float32))[3]))",
        {"JAXCC_PRINT_AUTOTUNING": "1"},
    )
    assert later.returncode == 0, later.stderr[-2000:]
    assert later.stdout.strip() == "6.0"
    assert "cached" in later.stderr and "MODE=2 (it crashed (SIGSEGV))" in later.stderr


def test_named_reference_that_fails_to_compile_is_an_autotune_error(unique_name):
    source = '#if MODE == 0\nstatic_assert(false, "MODE 0 is broken");\n#endif\n' + MODE_SOURCE
    tune = jaxcc.Autotune(MODE=[0, 1], reference={"MODE": 0})
    with pytest.raises(jaxcc.AutotuneError, match=r"MODE=0 \(named by reference=\) failed to "
                       r"compile.*MODE 0 is broken"):  # fmt: skip
        jaxcc.load_cpp_inline(unique_name, source, tune={"twice": tune})


def test_named_reference_that_crashes_is_an_autotune_error_and_nothing_is_stored(unique_name):
    tune = jaxcc.Autotune(MODE=[0, 2], reference={"MODE": 2})
    mod = jaxcc.load_cpp_inline(unique_name, MODE_SOURCE, tune={"twice": tune})
    with pytest.raises(jaxcc.AutotuneError, match=r"MODE=2 \(named by reference=\) cannot run "
                       r"at key float32\[512\]: it crashed \(SIGSEGV\)"):  # fmt: skip
        mod.twice(X)
    assert _decisions(unique_name) == []


# FAST=1 doubles only the first 1024 elements (right for small calls only) and is quicker;
# FAST=0 and 2 are right.
LIMITED_SOURCE = r"""
// @BE twice arg ret
void twice(const jaxcc::Tensor& a, jaxcc::Tensor& c) {
  const int64_t n = FAST == 1 ? (a.numel() < 1024 ? a.numel() : 1024) : a.numel();
  for (int r = 0; r < (FAST == 1 ? 1 : 50 - FAST); ++r) {
    for (int64_t i = 0; i < c.numel(); ++i) c.data_ptr<float>()[i] = 0;
    for (int64_t i = 0; i < n; ++i) c.data_ptr<float>()[i] = a.data_ptr<float>()[i] * 2;
    asm volatile("" ::: "memory");
  }
}
"""


@pytest.mark.parametrize("method", ["broadcast_all", "expand_dims"])
def test_vmap_that_runs_once_on_the_batch_is_keyed_and_checked_at_the_batch(unique_name, method):
    mod = jaxcc.load_cpp_inline(unique_name, LIMITED_SOURCE, vmap_method=method,
                                tune={"twice": {"FAST": [0, 1, 2]}})  # fmt: skip
    xs = jnp.arange(8 * 512, dtype=jnp.float32).reshape(8, 512)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jaxcc.AutotuneWarning)  # FAST=1 differs at this key
        np.testing.assert_array_equal(jax.jit(jax.vmap(mod.twice))(xs), 2 * xs)
    (record,) = _decisions(unique_name)
    assert record["key"] == "float32[8,512]" and record["chosen_text"] != "FAST=1"
    assert "FAST=1" in record["excluded"]


def test_cli_tune_refuses_a_reference_that_cannot_run_at_the_key(fresh_cache, tmp_path):
    (tmp_path / "float_ops.py").write_text(
        "import jaxcc\n"
        f"mod = jaxcc.load_cpp_inline('float_ops', {MODE_SOURCE!r}, tune={{'twice': "
        "{'MODE': [0, 1]}})\n"
    )
    env = {"JAXCC_CACHE_DIR": str(fresh_cache), "JAX_ENABLE_X64": "1",
           "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}  # fmt: skip
    done = run_python(
        "import sys; from jaxcc.__main__ import main; "
        "sys.exit(main(['tune', 'float_ops', '--shapes', 'twice=float64[8,8]']))",
        env,
    )
    assert done.returncode != 0
    assert "AutotuneError" in done.stderr or "cannot run at key float64[8,8]" in done.stderr
    assert "cannot run at key float64[8,8]" in done.stderr, done.stderr[-2000:]
    assert store.list_decisions(str(fresh_cache)) == []


def test_first_tuned_load_says_it_built_and_configs_keep_their_types(unique_name, capsys):
    from jaxcc.cli.cache import list_entries

    mod = jaxcc.load_cpp_inline(unique_name, MODE_SOURCE, tune={"twice": {"MODE": [0, 1]}})
    assert mod.cache_hit is False and mod.variants_built == 2
    config = mod.twice.chosen_config(X)
    assert config in ({"MODE": 0}, {"MODE": 1}) and type(config["MODE"]) is int
    capsys.readouterr()
    list_entries(as_json=False)  # `jaxcc cache ls`: each variant's row says which it is
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(unique_name)]
    assert sorted(row.split("[")[-1] for row in rows) == ["tune MODE=0]", "tune MODE=1]"], rows


def test_warning_under_jit_points_at_the_users_line(unique_name):
    source = MODE_SOURCE.replace("* 2;", "* (MODE == 1 ? 3 : 2);")
    mod = jaxcc.load_cpp_inline(unique_name, source, tune={"twice": {"MODE": [0, 4, 1]}})
    with pytest.warns(jaxcc.AutotuneWarning, match="MODE=1 is left out") as caught:
        jax.jit(jax.vmap(mod.twice))(X.reshape(4, 128))  # JAX calls the kernel function
    assert caught[0].filename == __file__


# The same code whatever SAME is: every pair of variants is a tie, which goes to the reference.
SAME_SOURCE = MODE_SOURCE.replace("#ifndef MODE", "enum { kSame = SAME };\n#ifndef MODE")


def test_spreads_are_recorded_with_the_reference(unique_name):
    tune = jaxcc.Autotune(SAME=[1, 2, 3], reference={"SAME": 2})
    mod = jaxcc.load_cpp_inline(unique_name, SAME_SOURCE, tune={"twice": tune})
    mod.twice(jnp.ones(64, jnp.float32))
    (record,) = _decisions(unique_name)
    assert set(record["spreads"]) == {"SAME=1", "SAME=2", "SAME=3"}
    assert all(0 <= s < 10 for s in record["spreads"].values()) and record["rounds"] >= 5
    assert record["reference"] == "SAME=2" and isinstance(record["ties"], list)
    if len(record["ties"]) > 1:  # the same code: usually all tied; the choice is among them
        assert record["chosen_text"] in record["ties"]


def _stats(median: float, iqr: float, n: int = 20) -> dict:
    return {"median": median, "iqr": iqr, "spread": iqr / median, "n": n}


def test_variants_within_noise_are_a_tie_broken_by_the_reference_then_the_order():
    from jaxcc.tune import measure

    noisy = {"A": _stats(100, 20), "B": _stats(99, 20), "C": _stats(99.5, 20)}
    assert measure.decide(noisy, ["A", "B", "C"], "C") == ("C", ["A", "B", "C"])
    assert measure.decide(noisy, ["A", "B", "C"], "D") == ("A", ["A", "B", "C"])
    wide = {"A": _stats(110, 40), "B": _stats(100, 40)}  # tied, but A costs 10 %
    assert measure.decide(wide, ["A", "B"], "A") == ("B", ["A", "B"])
    clear = {"A": _stats(100, 1), "B": _stats(50, 1), "C": _stats(99, 1)}
    assert measure.decide(clear, ["A", "B", "C"], "A") == ("B", [])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(1, 1000), st.floats(0, 100), st.integers(4, 50)),
                min_size=1, max_size=6), st.integers(0, 5))  # fmt: skip
def test_the_chosen_variant_is_never_slower_than_the_fastest_beyond_noise(variants, ref):
    from jaxcc.tune import measure

    stats = {f"V{i}": _stats(m, q, n) for i, (m, q, n) in enumerate(variants)}
    order = list(stats)
    chosen, tied = measure.decide(stats, order, f"V{ref}")
    fastest = min(stats, key=lambda t: stats[t]["median"])
    assert chosen == fastest or measure.ties_with(stats[fastest], stats[chosen])
    assert stats[chosen]["median"] <= stats[fastest]["median"] * (1 + measure.TIE_COST)
    limit = stats[fastest]["median"] * (1 + measure.TIE_COST)
    if f"V{ref}" in tied and stats[f"V{ref}"]["median"] <= limit:
        assert chosen == f"V{ref}"


def test_a_decision_made_under_load_is_retimed_once_by_the_next_process(unique_name, monkeypatch):
    from jaxcc.tune import decide

    monkeypatch.setattr(decide, "quiet", lambda: True)  # the next process finds a quiet machine
    mod = jaxcc.load_cpp_inline(unique_name, MODE_SOURCE, tune={"twice": {"MODE": [0, 1]}})
    mod.twice(X)
    (record,) = _decisions(unique_name)
    path = os.path.join(jaxcc.get_cache_dir(), ".autotune", record["id"][:32] + ".json")
    with open(path, "w") as f:  # as if timed on a busy machine
        json.dump({**record, "noisy": True, "spread": 0.9, "retimes": 0}, f)
    choose._decisions.clear()  # a new process: nothing in memory
    mod.twice(X)
    (retimed,) = _decisions(unique_name)
    assert retimed["retimes"] == 1 and retimed["created_unix"] > record["created_unix"]
    monkeypatch.setattr(decide, "quiet", lambda: False)  # a busy machine retimes nothing
    with open(path, "w") as f:
        json.dump({**record, "noisy": True, "spread": 0.9, "retimes": 0}, f)
    choose._decisions.clear()
    mod.twice(X)
    (kept,) = _decisions(unique_name)
    assert kept["retimes"] == 0 and kept["created_unix"] == record["created_unix"]


def test_ctrl_c_during_a_hanging_variant_ends_tuning_promptly(unique_name, tmp_path):
    script = tmp_path / "hang.py"
    script.write_text(
        "import jax.numpy as jnp, jaxcc\n"
        f"mod = jaxcc.load_cpp_inline({unique_name!r}, {MODE_SOURCE!r}, "
        "tune={'twice': {'MODE': [0, 3]}})\n"
        "print('tuning', flush=True)\n"
        "mod.twice(jnp.ones(8, jnp.float32))\n"
    )
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdout.readline().strip() == "tuning"
    time.sleep(6)  # the child starts, runs MODE=0, then spins in MODE=3 (bound: 60 s)
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = process.communicate(timeout=30)
    assert time.monotonic() - sent < 5 and "KeyboardInterrupt" in err
