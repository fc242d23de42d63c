"""Bad sharding rules are typed SpecErrors at load, naming the function and the fix (issue 12
item 8); rule-less modules are unchanged. One device: nothing here partitions."""

import pytest

import jaxcc
from jaxcc import SpecError

SOURCE = """
#include "jaxcc/jaxcc.h"
void row_op(const jaxcc::Tensor x, jaxcc::Tensor out) {}
void pair_op(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out) {}
"""


def load(unique_name, sharding, functions=("row_op", "pair_op"), source=SOURCE):
    return jaxcc.load_cpp_inline(unique_name, source, list(functions), sharding=sharding)


@pytest.mark.parametrize(
    ("sharding", "expected"),
    [
        ({"row_op": "r c"}, "no `->`"),
        ({"row_op": "r 2c -> r"}, "start with a letter"),
        ({"row_op": "r c -> r c; reduce: c"}, "after `;`"),
        ({"row_op": "r, c -> r"}, "2 input(s), but the function takes 1"),
        ({"pair_op": "r c -> r c"}, "1 input(s), but the function takes 2"),
        ({"row_op": "r -> r, r"}, "2 output(s), but the function takes 1"),
        ({"row_opp": "r -> r"}, "did you mean `row_op`?"),
        ({"row_op": 3}, "rule string"),
        # issue 25: a factor an output lacks must say how it is folded away
        ({"row_op": "r c -> r"}, "`c` appears only in inputs"),
        ({"row_op": "... c -> ..."}, "`c` appears only in inputs"),
        (["row_op"], "must be a dict"),
    ],
)
def test_bad_rules_fail_at_load(unique_name, sharding, expected):
    with pytest.raises(SpecError) as info:
        load(unique_name, sharding)
    message = str(info.value)
    assert expected in message
    if isinstance(sharding, dict) and isinstance(next(iter(sharding.values())), str):
        assert f'sharding={{"{next(iter(sharding))}": ...}}' in message  # names the function


def test_rule_for_a_function_not_loaded(unique_name):
    with pytest.raises(SpecError, match=r"names a function the module does not load \(it loads: "
                                        r"row_op\); .*add it to `functions`"):  # fmt: skip
        load(unique_name, {"pair_op": "r, r -> r"}, functions=["row_op"])


def test_annotation_rule_error_has_a_caret(unique_name):
    source = SOURCE + '// @BE row_op sharding="r c -> r d"\n'
    with pytest.raises(SpecError) as info:
        jaxcc.load_cpp_inline(unique_name, source)
    message = str(info.value)
    assert f"<{unique_name}>:5:" in message and "`d` of the outputs appears in no input" in message
    assert "^" in message


def test_rule_is_visible_and_does_not_change_the_cache_key(unique_name):
    plain = load(unique_name, None)
    ruled = load(unique_name + "_r", None)  # different name: a different entry, same key rule
    assert plain.specs["row_op"].sharding_rule == ""
    assert plain.row_op.sharding is None
    again = jaxcc.load_cpp_inline(unique_name, SOURCE, ["row_op", "pair_op"],
                                  sharding={"row_op": "r  c -> r c"}, replace=True)  # fmt: skip
    assert again.key == plain.key  # the rule changes how JAX partitions, not the library
    assert again.cache_hit
    assert again.row_op.sharding.text == "r c -> r c"
    assert again.specs["pair_op"].sharding_rule == ""
    del ruled


def test_custom_kernel_rule_errors():
    with pytest.raises(SpecError, match="no `->`"):
        jaxcc.XLACustomKernel("bad_rule_kernel", sharding="i j")
    prim = jaxcc.XLACustomKernel("rule_kernel_twice", sharding="i -> i")
    with pytest.raises(SpecError, match="differs from the primitive's rule"):
        prim.def_kernel("jax", "cpu", lambda **p: lambda x: x, sharding="i j -> i j")


def test_sharding_check_switch(monkeypatch):
    from jaxcc.sharding import gather_check

    monkeypatch.setenv("JAXCC_SHARDING_CHECK", "loud")
    with pytest.raises(SpecError, match="JAXCC_SHARDING_CHECK"):
        gather_check.sharding_check()
    monkeypatch.setenv("JAXCC_SHARDING_CHECK", "off")
    assert gather_check.sharding_check() == "off"
    jaxcc.set_sharding_check("error")
    try:
        assert gather_check.sharding_check() == "error"
    finally:
        jaxcc.set_sharding_check(None)
    with pytest.raises(SpecError):
        jaxcc.set_sharding_check("sometimes")


def test_a_factor_some_output_lacks_must_be_declared(unique_name):
    # Issue 25, case 1 ("r c -> r": each device summed its own columns, nothing combined them),
    # and what the differential test found ("r c -> r c, r": the row sums of a split `c`).
    source = SOURCE + "void two_out(const jaxcc::Tensor x, jaxcc::Tensor y, jaxcc::Tensor s) {}\n"
    for rule, where in (("r c -> r", "appears only in inputs"),
                        ("r c -> r c, r", "appears in inputs but not in output 2")):  # fmt: skip
        fn = "row_op" if rule.count(",") == 0 else "two_out"
        with pytest.raises(SpecError) as info:
            jaxcc.load_cpp_inline(unique_name, source, [fn], sharding={fn: rule})
        message = str(info.value)
        assert f"`c` {where}" in message
        assert "`; reduction: c`" in message and "`; need_replication: c`" in message
    # In an annotation the error points at the factor, with the source line and a caret.
    with pytest.raises(SpecError) as info:
        jaxcc.load_cpp_inline(unique_name, SOURCE + '// @BE row_op sharding="r c -> r"\n')
    message = str(info.value)
    assert f"<{unique_name}>:5:27:" in message and "^" in message
    for rule in ("r c -> r; reduction: c", "r c -> r; need_replication: c"):
        m = jaxcc.load_cpp_inline(unique_name, SOURCE, ["row_op"], sharding={"row_op": rule},
                                  replace=True)  # fmt: skip
        assert m.row_op.sharding.text == rule
