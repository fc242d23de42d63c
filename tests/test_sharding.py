"""Sharding rules end to end on 8 forced CPU devices (issue 12). The scenarios run in one child
process (tests/sharding/child.py), so the rest of the suite keeps its single device."""

import os
import subprocess
import sys

import pytest
from conftest import printed_results

CHILD = os.path.join(os.path.dirname(__file__), "sharding", "child.py")
NO_COLLECTIVE = {"all-gather": 0, "all-to-all": 0, "all-reduce": 0, "collective-permute": 0,
                 "reduce-scatter": 0}  # fmt: skip


@pytest.fixture(scope="module")
def results():
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    proc = subprocess.run([sys.executable, CHILD], capture_output=True, text=True, env=env,
                          timeout=600)  # fmt: skip
    return printed_results(proc)


def scenario(results, name):
    result = results[name]
    assert "exception" not in result, result.get("exception")
    return result


def test_rule_keeps_rows_sharded_without_collectives(results):
    r = scenario(results, "rule_keeps_rows_sharded")
    assert r["correct"]
    assert r["spec"] == ["x"]  # P("x", None): rows stay split, no replicated output
    assert r["hlo"] == NO_COLLECTIVE
    assert r["rule"] == "r c -> r c; need_replication: c"  # from the // @BE annotation
    assert r["path"] == "batch"  # only the leading dimension may split: XLA's batch partitioner


def test_custom_partitioning_path_gives_the_same_program(results):
    r = scenario(results, "forced_custom_partitioning")
    for case, path in (("rows", "shard_map"), ("elementwise", "shard_map"),
                       ("rows_auto", "custom_partitioning"),
                       ("elementwise_auto", "custom_partitioning")):  # fmt: skip
        assert r[case]["path"] == path, case
        assert r[case]["correct"] and r[case]["spec"] == ["x"], case
        assert r[case]["hlo"] == NO_COLLECTIVE, case


def test_loader_function_with_rule_under_vmap(results):
    r = scenario(results, "batch_path_under_vmap")
    assert r["correct"]
    assert r["spec"] == [None, "x"]  # the rows stay split under the batch axis
    assert r["hlo"] == NO_COLLECTIVE


@pytest.mark.parametrize("mesh", ["explicit", "auto"])
def test_vmap_of_a_function_with_a_rule_keeps_a_sharded_batch_axis(results, mesh):
    name = "vmap_keeps_a_sharded_batch_axis" + ("_on_auto_mesh" if mesh == "auto" else "")
    r = scenario(results, name)
    for case in ("batch", "custom_partitioning", "nested", "unbatched_operand", "mixed_operands"):
        assert r[case]["correct"], case
        assert r[case]["spec"] == ["x"], (case, r[case]["spec"])
        assert r[case]["hlo"] == NO_COLLECTIVE, (case, r[case]["hlo"])


@pytest.mark.parametrize("mesh", ["explicit", "auto"])
def test_custom_kernel_that_is_not_vectorised_keeps_a_sharded_batch_axis(results, mesh):
    name = ("custom_kernel_per_element_vmap_keeps_batch_sharded" if mesh == "explicit"
            else "custom_kernel_per_element_vmap_on_auto_mesh")  # fmt: skip
    r = scenario(results, name)
    assert r["correct"]
    assert r["spec"] == ["x"]
    assert r["hlo"] == NO_COLLECTIVE


def test_factor_sizes_that_disagree_are_a_spec_error_before_xla(results):
    error = scenario(results, "factor_sizes_must_agree")["error"]
    assert error is not None
    assert "matvec" in error and "`k` size 48 in input 1" in error and "40 in input 2" in error


def test_a_split_the_mesh_cannot_divide_is_reported_not_a_partitioner_crash(results):
    r = scenario(results, "uneven_split_is_reported")
    assert r["correct"]
    assert len(r["warnings"]) >= 1
    assert "scale_rows" in r["warnings"][0] and "size 13" in r["warnings"][0]


def test_rule_works_on_auto_axes_too(results):
    r = scenario(results, "rule_on_auto_mesh")
    assert r["correct"] and r["spec"] == ["x"] and r["hlo"] == NO_COLLECTIVE


def test_need_replication_factor_is_never_split(results):
    assert scenario(results, "columns_sharded_get_gathered_for_need_replication")["correct"]
    # Every lowering, on a 2-D mesh: XLA's batch partitioner, shard_map (Explicit axes) and
    # custom_partitioning (Auto axes); the gather is said where jaxcc sees the shardings.
    r = scenario(results, "need_replication_on_every_lowering")
    for case, told in (("explicit batch_path=True", True), ("explicit batch_path=False", True),
                       ("auto batch_path=True", False), ("auto batch_path=False", True)):  # fmt: skip
        assert r[case]["correct"], case
        assert bool(r[case]["warnings"]) == told, (case, r[case]["warnings"])
        if told:
            assert "`c`" in r[case]["warnings"][0] and "need_replication" in r[case]["warnings"][0]


def test_rule_less_function_warns_once_and_can_raise(results):
    r = scenario(results, "rule_less_warns_once")
    assert r["correct"]
    assert r["hlo"]["all-gather"] >= 1 and r["spec"] == []  # what the warning is about
    assert len(r["warnings"]) == 1  # two jitted calls, one warning
    message = r["warnings"][0]
    for part in ("shard_ops.row_norm_plain", "all-gather", "sharding={'row_norm_plain'",
                 "JAXCC_SHARDING_CHECK=error"):  # fmt: skip
        assert part in message
    assert r["error"] and "row_norm_plain" in r["error"]


def test_attributes_and_two_outputs_keep_their_sharding(results):
    r = scenario(results, "attrs_and_two_outputs")
    assert r["correct"]
    assert r["specs"] == [["x"], ["x"]]
    assert r["hlo"] == NO_COLLECTIVE
    # `c` may split, more than leading dimensions: on this Explicit mesh the shardings are in
    # the types and shard_map applies the rule while tracing (custom_partitioning on Auto axes)
    assert r["path"] == "shard_map"


def test_reduction_factor_is_all_reduced_not_gathered(results):
    r = scenario(results, "reduction_factor")
    assert r["correct"]
    assert r["hlo"]["all-gather"] == 0 and r["hlo"]["all-to-all"] == 0
    assert r["hlo"]["all-reduce"] >= 1
    # Both lowerings (shard_map on Explicit axes, custom_partitioning on Auto), on a 2-D mesh.
    for mesh, case in scenario(results, "reduction_on_every_lowering").items():
        assert case["correct"], mesh
        assert case["hlo"]["all-gather"] == 0 and case["hlo"]["all-to-all"] == 0, mesh
        assert case["hlo"]["all-reduce"] >= 1, mesh


# -- issue 25: the four rules that gave wrong numbers, and the audit of the rest ------------


def test_factor_only_in_inputs_must_be_declared(results):
    r = scenario(results, "undeclared_reduction_factor")
    assert "`c` appears only in inputs" in r["error"]
    assert "`; reduction: c`" in r["error"] and "`; need_replication: c`" in r["error"]
    for mesh in ("explicit", "auto"):
        summed = r[f"{mesh} r c -> r; reduction: c"]
        assert summed["correct"] and summed["hlo"]["all-gather"] == 0, mesh
        assert summed["hlo"]["all-reduce"] >= 1 and summed["warnings"] == [], mesh
        whole = r[f"{mesh} r c -> r; need_replication: c"]
        assert whole["correct"] and whole["warnings"], mesh


@pytest.mark.parametrize("mesh", ["explicit", "auto"])
def test_permutation_factor_is_never_split(results, mesh):
    r = scenario(results, "permutation_factor")[mesh]
    assert r["got"] == [float(i) for i in range(1, 16)] + [0.0]
    assert len(r["warnings"]) == 1 and "`permutation` factor" in r["warnings"][0]


@pytest.mark.parametrize("mesh", ["explicit", "auto"])
def test_reduction_is_summed_only_into_the_outputs_that_sum(results, mesh):
    r = scenario(results, "reduction_sums_only_its_outputs")[mesh]
    assert r["copy"] == [0.0, 1.0, 2.0, 3.0]
    assert r["sums_correct"]
    assert len(r["warnings"]) == 1 and "rule with 2 outputs" in r["warnings"][0]


@pytest.mark.parametrize("mesh", ["explicit", "auto"])
def test_vmap_of_a_rule_mixing_ellipsis_and_named_operands(results, mesh):
    r = scenario(results, "vmap_of_mixed_operands")
    assert r[mesh]["correct"]  # batch axes split over different mesh axes (Auto)
    for case in (mesh + "_same_axes", mesh + "_unbatched"):
        assert r[case]["correct"], case
        assert r[case]["hlo"] == NO_COLLECTIVE, case


@pytest.mark.parametrize("mesh", ["explicit", "auto"])
def test_partition_audit_two_axes_disagreeing_operands_compound_scalar(results, mesh):
    r = scenario(results, "audit")
    assert r[f"{mesh} two_axes"]["correct"] and r[f"{mesh} two_axes"]["hlo"] == NO_COLLECTIVE
    assert r[f"{mesh} disagree"]["correct"]
    # x splits `i` over `a`, y splits `j` over `a`: y is resharded, and the user hears of it.
    assert any("reshards that input" in w for w in r[f"{mesh} disagree"]["warnings"])
    compound = r[f"{mesh} compound"]
    assert compound["correct"] and "compound dimension (i j)" in compound["warnings"][0]
    assert r[f"{mesh} scalar"]["correct"] and r[f"{mesh} scalar"]["hlo"] == NO_COLLECTIVE
    assert "`...`" in r["ellipsis_ranks"] or "size 4 in input 1" in r["ellipsis_ranks"]


def test_elementwise_ellipsis_rule_any_rank(results):
    r = scenario(results, "elementwise_ellipsis")
    assert r["correct"] and r["spec"] == ["x"] and r["hlo"] == NO_COLLECTIVE
    # XLA's batch partitioner gathers when every dimension is a batch dimension (decision 63);
    # on this Explicit mesh the rule runs under shard_map (decision 82)
    assert r["path"] == "shard_map"


def test_wrong_rank_is_a_spec_error_before_xla(results):
    error = scenario(results, "wrong_rank_is_a_spec_error")["error"]
    assert error and "`row_norm`" in error and "rank 3" in error and "`...`" in error


def test_shard_map_attrs_outputs_vmap(results):
    r = scenario(results, "shard_map_kernels")
    assert r["correct"]
    assert r["warnings"] == []  # per-shard calls inside shard_map are not "sharded inputs"
    assert r["hlo"] == NO_COLLECTIVE


@pytest.mark.parametrize("backend", ["cpp", "numba", "pallas"])
def test_custom_kernel_honours_the_rule_on_every_backend(results, backend):
    r = scenario(results, "custom_kernel_backends")[backend]
    assert r["correct"] and r["spec"] == ["x"] and r["hlo"] == NO_COLLECTIVE
    assert not r.get("warnings")


def test_custom_kernel_rank_error(results):
    error = scenario(results, "custom_kernel_backends")["rank_error"]
    assert error and "shard_row_norm" in error and "rank 3" in error


def test_custom_kernel_vmap_keeps_the_batch_axis_sharded(results):
    r = scenario(results, "custom_kernel_vmap_keeps_batch_sharded")
    assert r["correct"] and r["spec"] == ["x"] and r["hlo"] == NO_COLLECTIVE


def test_custom_kernel_grad_under_jit_and_shard_map(results):
    r = scenario(results, "custom_kernel_grad")
    assert r["jit_correct"] and r["shard_map_correct"]
    assert r["jit_spec"] == ["x"]
    assert r["jit_hlo"]["all-gather"] == 0 and r["jit_hlo"]["all-to-all"] == 0


def test_export_round_trip_keeps_the_partitioned_call(results):
    r = scenario(results, "export_round_trip")
    explicit = r["explicit"]
    assert explicit["correct"]
    assert explicit["hlo"]["all-gather"] == 0 and explicit["hlo"]["all-to-all"] == 0
    assert explicit["hlo"]["all-reduce"] >= 1  # the split reduction factor, still split
    assert "Explicit axes" in r["auto"]["error"] and "custom_partitioning" in r["auto"]["error"]
    assert r["explicit_replicated"]["correct"]


def test_scratch_function_with_a_rule_gets_a_workspace_per_shard(results):
    """decision 118: each shard's call has its own workspace; a scratch_bytes function sees the
    shard's operands (the kernel checks one float per local row), an int is given as is."""
    r = scenario(results, "scratch_under_a_rule")
    for mesh, path in (("explicit", "shard_map"), ("auto", "custom_partitioning")):
        for kind in ("per_shard", "whole"):
            case = r[f"{mesh}_{kind}"]
            assert case["correct"] and case["spec"] == ["x"], (mesh, kind)
            assert case["path"] == path, (mesh, kind)  # never XLA's batch partitioner
            assert case["hlo"] == NO_COLLECTIVE, (mesh, kind)
        vmapped = r[f"{mesh}_vmap"]
        assert vmapped["correct"] and vmapped["spec"] == [None, "x"], mesh
        assert vmapped["hlo"] == NO_COLLECTIVE, mesh
    assert r["single"]["correct"]
    assert r["export"]["correct"] and r["export"]["spec"] == ["x"]
