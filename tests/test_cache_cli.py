"""`jaxcc cache ls | prune | clear` and the size cap, on real builds in real processes."""

import json
import os
import subprocess
import sys
import time

from conftest import run_python


def cli(*args, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "jaxcc", *args], capture_output=True, text=True, env=full_env
    )


def build(name, salt, env=None):
    source = (
        f"void f(const jaxcc::Tensor x, jaxcc::Tensor out) {{\n"
        f"  for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = {salt}.0f;\n}}\n"
    )
    result = run_python(
        "import jaxcc, jax.numpy as jnp\n"
        f"m = jaxcc.load_cpp_inline({name!r}, {source!r}, ['f'])\n"
        "print(float(m.f(jnp.zeros(2, jnp.float32))[0]))\n",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.strip()) == salt


def test_ls_lists_entries_most_recently_used_first(fresh_cache, unique_name):
    build(unique_name + "_a", 1)
    build(unique_name + "_b", 2)
    listing = cli("cache", "ls", "--json")
    assert listing.returncode == 0, listing.stderr
    data = json.loads(listing.stdout)
    assert data["cache_dir"] == str(fresh_cache)
    names = [row["name"] for row in data["entries"]]
    assert sorted(names) == [unique_name + "_a", unique_name + "_b"]
    assert all(row["complete"] and row["bytes"] > 1000 for row in data["entries"])
    table = cli("cache", "ls")
    assert "2 entries" in table.stdout and unique_name + "_a" in table.stdout


def test_the_size_cap_evicts_the_least_recently_used_entry(fresh_cache, unique_name):
    build(unique_name + "_old", 1)
    (entry,) = [p for p in fresh_cache.iterdir() if p.name.startswith(unique_name + "_old")]
    past = time.time() - 3600
    os.utime(entry, (past, past))
    size = sum(f.stat().st_size for f in entry.iterdir())
    # Room for one entry and a half: publishing the second must evict the older one.
    build(unique_name + "_new", 2, env={"JAXCC_CACHE_MAX_BYTES": str(int(size * 1.5))})
    names = {p.name.rsplit("-", 1)[0] for p in fresh_cache.iterdir() if not p.name.startswith(".")}
    assert names == {unique_name + "_new"}


def test_prune_down_to_zero_and_clear_by_name(fresh_cache, unique_name):
    build(unique_name + "_a", 1)
    build(unique_name + "_b", 2)
    cleared = cli("cache", "clear", unique_name + "_a")
    assert cleared.returncode == 0 and "removed 1 entries" in cleared.stdout
    pruned = cli("cache", "prune", "--max-bytes", "0")
    assert pruned.returncode == 0, pruned.stderr
    assert "removed 1 entries" in pruned.stdout
    assert json.loads(cli("cache", "ls", "--json").stdout)["entries"] == []


def test_bad_sizes_are_refused_with_the_fix(fresh_cache):
    bad = cli("cache", "prune", "--max-bytes", "lots")
    assert bad.returncode == 2
    assert "for example 4G" in bad.stderr
    env_bad = run_python(
        "import jaxcc\n"
        "try:\n"
        "    jaxcc.load_cpp_inline('capped', 'void f(jaxcc::Tensor o) {}', ['f'])\n"
        "except jaxcc.SpecError as e:\n"
        "    print('SPEC', e)\n",
        env={"JAXCC_CACHE_MAX_BYTES": "12 parsecs"},
    )
    assert "SPEC JAXCC_CACHE_MAX_BYTES" in env_bad.stdout, env_bad.stderr
