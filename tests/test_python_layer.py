"""The typed seam between Python and the C++ core: a frozen, hashable LoadRequest that cannot
carry an unknown field, typed results, the core's rules exported once, and brainevent's
`replace=` on every loader."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc
from jaxcc import _core

ADD_ONE = r"""
#include "jaxcc/jaxcc.h"
void add_one(const jaxcc::Tensor x, jaxcc::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1;
}
"""


def request(**overrides):
    fields = dict(
        name="m",
        platform="cpu",
        sources=[_core.SourceFile("<m>", ADD_ONE)],
        functions=[_core.FunctionRequest("add_one", None)],
        cache_dir="/tmp/unused",
    )
    fields.update(overrides)
    return _core.LoadRequest(**fields)


def test_request_rejects_unknown_fields_and_cannot_change():
    with pytest.raises(TypeError):
        request(extra_cflgas=["-O2"])  # a misspelled field is an error, not silently skipped
    built = request()
    with pytest.raises(AttributeError):
        built.name = "other"
    with pytest.raises(AttributeError):
        built.extra_cflags = ["-O2"]


def test_request_equality_and_hash_cover_every_field():
    assert request() == request() and hash(request()) == hash(request())
    different = [
        request(name="m2"),
        request(sources=[_core.SourceFile("<m>", ADD_ONE + "\n")]),
        request(functions=None),
        request(functions=[_core.FunctionRequest("add_one", ["arg", "ret"])]),
        request(extra_cflags=["-DX"]),
        request(optimization_level=2),
        request(target_prefix="p"),
        request(vmap_method="expand_dims"),
        request(auto_register=False),
        request(cache_dir="/tmp/other"),
        request(platform="cuda", cuda=_core.CudaOptions(archs=["8.0"])),
    ]
    for other in different:
        assert other != request(), other
    assert len({request(), *different}) == len(different) + 1


@pytest.mark.parametrize(
    "field, value, needle",
    [
        ("optimization_level", 7, "optimization_level must be 0, 1, 2 or 3, got 7"),
        ("vmap_method", "parallel", "vmap_method must be one of 'sequential'"),
        ("name", "1mod", "invalid module name '1mod'"),
        ("target_prefix", "", "invalid target_prefix ''"),
        ("platform", "rocm", 'platform must be "cpu" or "cuda"'),
    ],
)
def test_request_value_rules_are_the_cores(field, value, needle):
    with pytest.raises(jaxcc.SpecError, match=needle):
        request(**{field: value})


def test_rules_exported_once_from_the_core():
    assert _core.MAX_RANK == 8
    assert jaxcc.call.kernel_function.MAX_RANK == _core.MAX_RANK
    assert "sequential" in _core.VMAP_METHODS
    assert _core.normalize_cuda_arch("sm_90a") == "90a"
    assert _core.parse_cuda_archs(["9.0,8.0", "80"]) == ["80", "90"]
    with pytest.raises(jaxcc.SpecError):
        _core.normalize_cuda_arch("banana")
    assert _core.module_name_from_path("/x/2024 ops.cc") == "_2024_ops"


def test_results_are_typed_and_keep_the_old_keys(unique_name):
    mod = jaxcc.load_cpp_inline(unique_name, ADD_ONE, ["add_one"])
    spec = mod.specs["add_one"]
    assert isinstance(spec, _core.FunctionSpec)
    assert [p.kind for p in spec.params] == ["arg", "ret"]
    assert [p["kind"] for p in spec["params"]] == ["arg", "ret"]  # the dict spelling still works
    with pytest.raises(KeyError, match="keys: name, namespaces, params"):
        spec["kinds"]
    rows = [r for r in _core.cache_list(jaxcc.get_cache_dir()) if r.name == unique_name]
    assert rows and rows[0].functions == ["add_one"] and rows[0].bytes > 0


def test_replace_is_accepted_and_changes_nothing_for_unchanged_code(unique_name):
    x = jnp.arange(4, dtype=jnp.float32)
    first = jaxcc.load_cpp_inline(unique_name, ADD_ONE, ["add_one"])
    again = jaxcc.load_cpp_inline(unique_name, ADD_ONE, ["add_one"], replace=True)
    np.testing.assert_allclose(jax.jit(again.add_one)(x), x + 1)
    assert again.key == first.key


def test_changed_code_under_a_live_name_runs_under_versioned_targets(unique_name):
    """XLA cannot swap a live handler (replace=True cannot either): changed code gets its own,
    versioned targets, and the module returned calls them (decision 155)."""
    x = jnp.arange(4, dtype=jnp.float32)
    first = jaxcc.load_cpp_inline(unique_name, ADD_ONE, ["add_one"])
    changed = ADD_ONE.replace("+ 1", "+ 2")
    with pytest.warns(jaxcc.ReloadWarning):
        second = jaxcc.load_cpp_inline(unique_name, changed, ["add_one"], replace=True)
    assert second.targets["add_one"] != first.targets["add_one"]
    np.testing.assert_allclose(second.add_one(x), x + 2)
    np.testing.assert_allclose(first.add_one(x), x + 1)
    moved = jaxcc.load_cpp_inline(
        unique_name, changed.replace("+ 2", "+ 3"), ["add_one"], target_prefix=unique_name + "_v3"
    )
    assert moved.targets == {"add_one": unique_name + "_v3.add_one"}  # a free name: used as given
    np.testing.assert_allclose(moved.add_one(x), x + 3)


def test_replace_must_be_a_bool(unique_name):
    with pytest.raises(jaxcc.SpecError, match="replace must be True or False"):
        jaxcc.load_cpp_inline(unique_name, ADD_ONE, ["add_one"], replace="yes")
